/**
 * Which tokenizer counts a model's context. Models whose encoding OpenAI
 * publishes are counted with js-tiktoken, in a worker thread
 * (tokenizer/workerTokenizer.ts); models whose server says they are of a
 * family Candor ships (Qwen3, Llama 3, DeepSeek V3) with that family's own
 * tokenizer and template (tokenizer/familyTokenizer.ts); every other model
 * gets the CJK-aware heuristic, calibrated against the provider's own
 * counts (calibration.ts), with a band (band.ts).
 */

import type { ChatFrames } from './chatFrames';

export type TiktokenEncodingName = 'o200k_base' | 'cl100k_base';

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
