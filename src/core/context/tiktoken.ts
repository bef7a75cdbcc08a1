import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import type { ChatMessage } from '../messages';
import type { Estimator } from './estimator';
import { messageParts, PER_MESSAGE_OVERHEAD } from './messageParts';

export type TiktokenEncodingName = 'o200k_base' | 'cl100k_base';

/**
 * Supplies the BPE ranks of an encoding. Injected because the extension
 * bundle ships the ranks (several MB) as separate files loaded on demand.
 */
export type RanksLoader = (encoding: TiktokenEncodingName) => TiktokenBPE | Promise<TiktokenBPE>;

/**
 * Loads the ranks from the js-tiktoken package. A bundler that sees these
 * requires will inline the ranks; mark `js-tiktoken/ranks/*` external or
 * inject another loader.
 */
export function defaultRanksLoader(encoding: TiktokenEncodingName): TiktokenBPE {
  // The ranks are CommonJS data modules with no typings under node10
  // resolution; require keeps them out of memory until first use.
  /* eslint-disable @typescript-eslint/no-require-imports */
  return encoding === 'o200k_base'
    ? (require('js-tiktoken/ranks/o200k_base') as TiktokenBPE)
    : (require('js-tiktoken/ranks/cl100k_base') as TiktokenBPE);
  /* eslint-enable @typescript-eslint/no-require-imports */
}

// Building a Tiktoken from ranks takes hundreds of milliseconds; share one
// per loader and encoding, and share the pending load too.
const loaded = new WeakMap<RanksLoader, Map<TiktokenEncodingName, Promise<Tiktoken>>>();

function loadTokenizer(encoding: TiktokenEncodingName, loader: RanksLoader): Promise<Tiktoken> {
  let byEncoding = loaded.get(loader);
  if (!byEncoding) {
    byEncoding = new Map();
    loaded.set(loader, byEncoding);
  }
  let pending = byEncoding.get(encoding);
  if (!pending) {
    pending = Promise.resolve()
      .then(() => loader(encoding))
      .then((ranks) => new Tiktoken(unwrapDefault(ranks)));
    // A failed load must not poison later attempts.
    pending.catch(() => byEncoding?.delete(encoding));
    byEncoding.set(encoding, pending);
  }
  return pending;
}

/** An ES module namespace of the ranks carries them under `default`. */
function unwrapDefault(ranks: TiktokenBPE | { default: TiktokenBPE }): TiktokenBPE {
  return 'default' in ranks ? ranks.default : ranks;
}

export async function tiktokenEstimator(
  encoding: TiktokenEncodingName,
  loader: RanksLoader = defaultRanksLoader,
): Promise<Estimator> {
  const tokenizer = await loadTokenizer(encoding, loader);
  // Special-token text such as "<|endoftext|>" in a file or chat is plain
  // text to the provider; count it as such instead of throwing.
  const countText = (text: string): number => (text.length === 0 ? 0 : tokenizer.encode(text, [], []).length);
  return {
    name: `tiktoken:${encoding}`,
    countText,
    countMessage(message: ChatMessage): number {
      let total = PER_MESSAGE_OVERHEAD;
      for (const part of messageParts(message)) total += countText(part);
      return total;
    },
  };
}
