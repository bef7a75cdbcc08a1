import type { CheckRunInfo, CombinedStatusInfo, GitHub } from './types';

/** The CI verdict on a commit, as the record keeps it (docs/architecture.md, "Data files"). */
export type CiStateName = 'pending' | 'passed' | 'failed' | 'none' | 'timeout';

export interface CiCheck {
  readonly name: string;
  /** A check run's status, or `pending`/`completed` for a commit status. */
  readonly status: string;
  /** A check run's conclusion, or a finished commit status's state (`success`, `failure`, `error`); null while it runs. */
  readonly conclusion: string | null;
  readonly url: string;
}

export interface CiResult {
  readonly state: CiStateName;
  /** Where to look: the first failing check's page, else the first check's; '' when there is none. */
  readonly url: string;
  readonly checks: readonly CiCheck[];
}

/** How long after the push a commit with no check run and no status counts as having no CI. */
export const NO_CI_AFTER_MS = 5 * 60_000;

/** Conclusions that let a pull request through; any other conclusion of a completed check is a failure. */
const PASSING = new Set(['success', 'neutral', 'skipped']);

/** Both kinds of CI report, as one list of checks: check runs (Actions, apps) and commit statuses (older CI). */
export function ciChecks(runs: readonly CheckRunInfo[], status: CombinedStatusInfo): CiCheck[] {
  const fromRuns = runs.map((run) => ({ name: run.name, status: run.status, conclusion: run.status === 'completed' ? (run.conclusion ?? 'unknown') : null, url: run.url }));
  const fromStatuses = status.statuses.map((s) => ({ name: s.context, status: s.state === 'pending' ? 'pending' : 'completed', conclusion: s.state === 'pending' ? null : s.state, url: s.url }));
  return [...fromRuns, ...fromStatuses];
}

/**
 * The verdict on a set of checks: `pending` while any runs, then `failed`
 * when any did not pass and `passed` when all did. No check at all is
 * `none` once `noCiYet` is false (five minutes after the push: GitHub says
 * `pending` with `total_count: 0` for a commit nothing reports on), else
 * `pending`.
 */
export function ciVerdict(checks: readonly CiCheck[], noCiYet: boolean): CiResult {
  if (checks.length === 0) return { state: noCiYet ? 'pending' : 'none', url: '', checks };
  const failing = checks.find((check) => check.conclusion !== null && !PASSING.has(check.conclusion));
  const url = failing?.url || checks.find((check) => check.url !== '')?.url || '';
  if (checks.some((check) => check.conclusion === null)) return { state: 'pending', url, checks };
  return { state: failing ? 'failed' : 'passed', url, checks };
}

export interface CiStateInput {
  readonly owner: string;
  readonly repo: string;
  readonly sha: string;
  /**
   * When the commit was pushed (ms since the epoch). Within five minutes of
   * it, no check yet is `pending`; without it the commit is taken to be old
   * and no check is `none`.
   */
  readonly pushedAt?: number;
  readonly clock?: () => Date;
}

/** One read of a commit's CI: its check runs and its combined status. */
export async function ciStateOnce(gh: GitHub, input: CiStateInput): Promise<CiResult> {
  const [runs, status] = await Promise.all([gh.checkRuns(input.owner, input.repo, input.sha), gh.combinedStatus(input.owner, input.repo, input.sha)]);
  const now = (input.clock ?? (() => new Date()))().getTime();
  const noCiYet = input.pushedAt !== undefined && now - input.pushedAt < NO_CI_AFTER_MS;
  return ciVerdict(ciChecks(runs, status), noCiYet);
}
