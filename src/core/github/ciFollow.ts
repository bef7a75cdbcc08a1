import { isKindError } from '../kindError';
import { ciStateOnce, NO_CI_AFTER_MS, type CiResult } from './ciState';
import { GitHubError } from './errors';
import type { Sleep } from './rateLimit';
import { abortableSleep } from '../sleep';
import type { GitHub } from './types';

export { ciStateOnce } from './ciState';
export type { CiResult } from './ciState';

/** The first wait between two reads; each next one doubles, up to MAX_POLL_MS. */
export const FIRST_POLL_MS = 10_000;
export const MAX_POLL_MS = 120_000;
/** Reads in a row that may fail for a passing reason (network, GitHub's 5xx) before the follower gives up. */
export const MAX_READ_FAILURES = 3;

export interface FollowCiInput {
  readonly owner: string;
  readonly repo: string;
  /** The pull request's head commit. */
  readonly sha: string;
  /** When CI is given up on, counted from the push (candor.evolution.ciTimeoutMinutes). */
  readonly timeoutMs: number;
  /** When the branch was pushed (ms since the epoch): a follower resumed later keeps the same deadline. */
  readonly pushedAt: number;
  readonly clock?: () => Date;
  readonly sleep?: Sleep;
  /** Told each time the state or a check changes. */
  readonly onState?: (result: CiResult) => void;
  /** Stops following: the last state read is returned (`pending` when nothing was read). */
  readonly signal?: AbortSignal;
}

/**
 * Follows a commit's check runs and commit statuses until they complete,
 * with back-off (10 s doubling to 2 min). Ends `passed` or `failed`;
 * `none` when five minutes after the push nothing reports on the commit;
 * `timeout` when `timeoutMs` after the push it still runs.
 */
export async function followCi(gh: GitHub, input: FollowCiInput): Promise<CiResult> {
  const clock = input.clock ?? (() => new Date());
  const sleep = input.sleep ?? abortableSleep;
  const deadline = input.pushedAt + input.timeoutMs;
  let last: CiResult = { state: 'pending', url: '', checks: [] };
  let told = '';
  let failures = 0;
  for (let delay = FIRST_POLL_MS; ; delay = Math.min(delay * 2, MAX_POLL_MS)) {
    try {
      last = await ciStateOnce(gh, { owner: input.owner, repo: input.repo, sha: input.sha, pushedAt: input.pushedAt, clock });
      failures = 0;
    } catch (err) {
      if (!passing(err) || ++failures >= MAX_READ_FAILURES) throw err;
    }
    const seen = JSON.stringify(last);
    if (failures === 0 && seen !== told) {
      told = seen;
      input.onState?.(last);
    }
    if (last.state !== 'pending' || input.signal?.aborted) return last;
    const now = clock().getTime();
    if (now >= deadline) return timedOut(last, input);
    await sleep(nextWait(delay, now, deadline, last, input.pushedAt), input.signal);
    if (input.signal?.aborted) return last;
  }
}

/** The back-off wait, cut short at the deadline and at the moment "no CI" can be said. */
function nextWait(delay: number, now: number, deadline: number, last: CiResult, pushedAt: number): number {
  let wait = Math.min(delay, deadline - now);
  const noCiAt = pushedAt + NO_CI_AFTER_MS;
  if (last.checks.length === 0 && noCiAt > now) wait = Math.min(wait, noCiAt - now);
  return Math.max(wait, 0);
}

function timedOut(last: CiResult, input: FollowCiInput): CiResult {
  const result: CiResult = { ...last, state: 'timeout' };
  input.onState?.(result);
  return result;
}

/** A read that may work next time: GitHub unreachable or slow, or a 5xx. */
function passing(err: unknown): boolean {
  if (isKindError(err, GitHubError, 'network')) return true;
  return isKindError(err, GitHubError, 'http') && err.status !== undefined && err.status >= 500;
}
