import type { TokenizerModules } from '../../src/core/context/tokenizer/workerTokenizer';

/**
 * Paths for code running from node_modules (tests, benchmarks). Kept apart
 * from workerTokenizer.ts so that the bundles, which carry their own copies
 * in dist/, never see these require.resolve calls.
 */
export function installedTokenizerModules(): TokenizerModules {
  return {
    tiktoken: require.resolve('js-tiktoken/lite'),
    ranks: (encoding) => require.resolve(`js-tiktoken/ranks/${encoding}`),
  };
}
