import type { RequestError } from './requestError';

/**
 * Candor's retry policy (the stream's retries, `openaiModel.ts`): 429, 5xx
 * and connection errors, at most `candor.request.maxRetries` times, each
 * announced in the chat before its wait. A stream cut after text arrived is
 * not retried: the user sees the partial reply and decides.
 */

export interface RetryNotice {
  readonly attempt: number; // 1-based number of the retry about to happen
  readonly of: number;
  readonly delayMs: number;
  readonly error: RequestError;
}

interface RetryPolicy {
  readonly maxRetries: number;
  readonly signal?: AbortSignal;
}

/** Retry-After is honoured up to this bound; longer waits are not worth blocking the chat on. */
const MAX_RETRY_AFTER_MS = 30_000;

/** How long to wait before retry number `attempt` (1-based) after `error`. */
export function retryDelayMs(error: RequestError, attempt: number): number {
  if (error.retryAfterMs !== undefined) return Math.min(error.retryAfterMs, MAX_RETRY_AFTER_MS);
  return Math.min(500 * 2 ** (attempt - 1), 8_000);
}

/** Whether a failed attempt is retried: a retryable error, retries left, and not stopped by the user. */
export function retries(error: RequestError, tries: number, policy: Pick<RetryPolicy, 'maxRetries' | 'signal'>): boolean {
  return error.retryable && tries < policy.maxRetries && policy.signal?.aborted !== true;
}
