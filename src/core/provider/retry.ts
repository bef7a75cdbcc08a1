import { RequestError } from './requestError';
import { isKindError } from '../kindError';
import { abortableSleep } from '../sleep';

export interface RetryNotice {
  readonly attempt: number; // 1-based number of the retry about to happen
  readonly of: number;
  readonly delayMs: number;
  readonly error: RequestError;
}

export interface RetryPolicy {
  readonly maxRetries: number;
  readonly onRetry?: (notice: RetryNotice) => void;
  readonly signal?: AbortSignal;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
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

/**
 * Candor's retry policy: 429, 5xx and connection errors, at most maxRetries
 * times. A stream that was cut after text arrived is not retried here: the
 * user sees the partial reply and decides.
 */
export async function withRetries<T>(attempt: () => Promise<T>, policy: RetryPolicy): Promise<T> {
  const sleep = policy.sleep ?? abortableSleep;
  for (let tries = 0; ; tries++) {
    try {
      return await attempt();
    } catch (err) {
      if (!isKindError(err, RequestError) || !retries(err, tries, policy)) throw err;
      const delayMs = retryDelayMs(err, tries + 1);
      policy.onRetry?.({ attempt: tries + 1, of: policy.maxRetries, delayMs, error: err });
      await sleep(delayMs, policy.signal);
      if (policy.signal?.aborted) throw new RequestError('cancelled', 'stopped by the user');
    }
  }
}
