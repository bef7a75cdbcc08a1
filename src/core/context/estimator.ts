/**
 * Which tokenizer counts a model's context. Models whose encoding OpenAI
 * publishes are counted exactly with js-tiktoken, in a worker thread
 * (tokenizer/workerTokenizer.ts); Llama 3 models with cl100k where it is
 * theirs (tokenizer/llama3.ts); every other model gets the CJK-aware
 * heuristic, calibrated against the provider's own counts (calibration.ts).
 */

import type { ChatFrames } from './chatFrames';

export type TiktokenEncodingName = 'o200k_base' | 'cl100k_base';

/** How a model with a known tokenizer is counted: an encoding of OpenAI's, or Llama 3's through cl100k. */
export type CounterKind = TiktokenEncodingName | 'llama3';

/** The tokenizer port: exact counts of texts, computed off the caller's thread. */
export interface TokenCounter {
  /** The encoding's name: counts of two counters never mix. */
  readonly name: string;
  /** A family's chat template in code: messages are counted as it frames them (chatFrames.ts). */
  readonly frames?: ChatFrames;
  count(texts: readonly string[]): Promise<number[]>;
}

/** What the gauge names as the estimator. */
export type EstimatorKind = 'tokenizer' | 'calibrated heuristic' | 'heuristic';

/**
 * The encoding OpenAI uses for a model, or undefined when we do not know it
 * (then the heuristic is used: guessing a tokenizer would look precise
 * without being so). A routing prefix such as `openai/gpt-4o` is ignored.
 */
export function encodingForModel(model: string): TiktokenEncodingName | undefined {
  const id = model.trim().toLowerCase().split('/').pop() ?? '';
  if (/^(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5)/.test(id)) return 'o200k_base';
  if (/^o[134](-|$)/.test(id)) return 'o200k_base';
  if (/^(gpt-4|gpt-3\.5-turbo|gpt-35-turbo|text-embedding-3|text-embedding-ada-002)/.test(id)) return 'cl100k_base';
  return undefined;
}

/**
 * The counter of a model: OpenAI's encoding, or `llama3` for a Llama 3
 * model (3, 3.1, 3.2, 3.3, and the fine-tunes that keep its tokenizer).
 * Llama 3's vocabulary is cl100k's with 28K tokens added, nearly all for
 * other languages, and it splits text into pieces with cl100k's own
 * pattern, so cl100k counts ASCII text as Llama 3 does (tokenizer/llama3.ts).
 * Llama 2 and Code Llama (another vocabulary), Llama 4 (another again) and
 * a `llama-30b` are not Llama 3.
 */
export function counterKindForModel(model: string): CounterKind | undefined {
  const encoding = encodingForModel(model);
  if (encoding) return encoding;
  const id = model.trim().toLowerCase().split('/').pop() ?? '';
  return /(^|[^a-z])llama-?3(?!\d)/.test(id) ? 'llama3' : undefined;
}
