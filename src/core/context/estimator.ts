import type { ChatMessage } from '../messages';
import { heuristicEstimator } from './heuristic';
import { tiktokenEstimator, type RanksLoader, type TiktokenEncodingName } from './tiktoken';

/** The tokenizer port: counts what a request would cost, locally. */
export interface Estimator {
  readonly name: string;
  countMessage(message: ChatMessage): number;
  countText(text: string): number;
}

export { heuristicEstimator } from './heuristic';
export { tiktokenEstimator, defaultRanksLoader } from './tiktoken';
export type { RanksLoader, TiktokenEncodingName } from './tiktoken';

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
 * The estimator for a model: js-tiktoken when its encoding is known, the
 * heuristic otherwise. Await it before the first request of an identity: an
 * anchor measured with one estimator must not be projected with another.
 */
export async function estimatorForModel(model: string, loader?: RanksLoader): Promise<Estimator> {
  const encoding = encodingForModel(model);
  return encoding ? tiktokenEstimator(encoding, loader) : heuristicEstimator();
}
