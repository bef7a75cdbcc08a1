import { GitHubError, type FailedAnswer } from './errors';

/** Told before each wait, so that the user sees why nothing happens: `ms` to wait, `why` in words. */
export type OnWait = (ms: number, why: string) => void;

export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

export interface RateLimitPolicy {
  /** Waits for one request at most; the next rate limit is an error. */
  readonly maxWaits: number;
  /** A wait longer than this is not waited: the error says when the limit resets. */
  readonly maxWaitMs: number;
  readonly onWait?: OnWait;
  readonly sleep: Sleep;
  readonly clock: () => Date;
}

export const DEFAULT_MAX_WAITS = 3;
export const DEFAULT_MAX_WAIT_MS = 10 * 60_000;

/** GitHub's advice for a secondary rate limit that names no time: wait at least a minute. */
const UNNAMED_WAIT_MS = 60_000;
/** Added to a reset time, against a clock a little behind GitHub's. */
const CLOCK_MARGIN_MS = 1_000;

/** A rate limit GitHub answered with, and how long it says to wait. */
export interface RateLimit {
  readonly waitMs: number;
  /** Which header said so, for people. */
  readonly source: string;
}

/**
 * Whether a failed answer is a rate limit, and the wait it asks for:
 * `Retry-After` (seconds) first, then `x-ratelimit-reset` (epoch seconds)
 * when no request is left, else a minute for a secondary limit that names
 * no time. A 403 that is none of these is not a rate limit.
 */
export function rateLimitOf(answer: FailedAnswer, now: Date): RateLimit | undefined {
  if (answer.status !== 403 && answer.status !== 429) return undefined;
  const retryAfter = seconds(answer.headers['retry-after']);
  if (retryAfter !== undefined) return { waitMs: retryAfter * 1000, source: 'Retry-After' };
  const reset = seconds(answer.headers['x-ratelimit-reset']);
  if (answer.headers['x-ratelimit-remaining'] === '0' && reset !== undefined) {
    return { waitMs: Math.max(0, reset * 1000 - now.getTime()) + CLOCK_MARGIN_MS, source: 'x-ratelimit-reset' };
  }
  if (answer.status === 429 || /rate limit/i.test(answer.message)) return { waitMs: UNNAMED_WAIT_MS, source: "GitHub's advice for a secondary rate limit" };
  return undefined;
}

function seconds(value: string | undefined): number | undefined {
  if (value === undefined || !/^\s*\d{1,10}\s*$/.test(value)) return undefined;
  return Number(value);
}

/**
 * Runs `attempt`, waiting out a rate limit as GitHub says and trying again,
 * at most `maxWaits` times and never longer than `maxWaitMs` at once. Any
 * other error goes straight through.
 */
export async function withRateLimitWaits<T>(what: string, attempt: () => Promise<T>, limitOf: (err: unknown) => RateLimit | undefined, policy: RateLimitPolicy): Promise<T> {
  for (let waits = 0; ; waits++) {
    try {
      return await attempt();
    } catch (err) {
      const limit = limitOf(err);
      if (limit === undefined) throw err;
      if (limit.waitMs > policy.maxWaitMs) throw rateLimitError(what, limit, policy.clock(), `longer than Candor waits (${duration(policy.maxWaitMs)})`);
      if (waits >= policy.maxWaits) throw rateLimitError(what, limit, policy.clock(), `still in force after ${waits} wait${waits === 1 ? '' : 's'}`);
      policy.onWait?.(limit.waitMs, `GitHub's rate limit: waiting ${duration(limit.waitMs)} as ${limit.source} says, then trying to ${what} again (wait ${waits + 1} of at most ${policy.maxWaits}).`);
      await policy.sleep(limit.waitMs);
    }
  }
}

function rateLimitError(what: string, limit: RateLimit, now: Date, why: string): GitHubError {
  const at = new Date(now.getTime() + limit.waitMs).toISOString().replace(/\.\d+Z$/, 'Z');
  return new GitHubError('rate-limit', `GitHub's rate limit stopped Candor from trying to ${what}: ${limit.source} asks for ${duration(limit.waitMs)}, ${why}. Try again after ${at}.`);
}

/** `45 s`, `3 min`, `1 h 5 min`. */
export function duration(ms: number): string {
  const totalSeconds = Math.ceil(ms / 1000);
  if (totalSeconds < 120) return `${totalSeconds} s`;
  const totalMinutes = Math.ceil(totalSeconds / 60);
  if (totalMinutes < 60) return `${totalMinutes} min`;
  const hours = Math.floor(totalMinutes / 60);
  const rest = totalMinutes % 60;
  return rest === 0 ? `${hours} h` : `${hours} h ${rest} min`;
}
