import * as path from 'node:path';
import { ciStateOnce, followCi, type CiResult } from '../github/ciFollow';
import type { Sleep } from '../github/rateLimit';
import { isoNow, readJsonLines } from '../jsonl';
import { realOrResolved } from '../realPath';
import { EVOLUTION_FILE } from './paths';
import { connectPullRequest, type PullRequestConnection } from './pullRequestConnect';
import type { PullRequestContext } from './pullRequestContext';
import { PullRequestError, isPullRequestRefusal } from './pullRequestErrors';
import { appendRunUpdate, readRuns, type EvolutionRun } from './record';

/**
 * CI as a second gate (docs/architecture.md, "Evolution"): the check runs
 * and statuses of a recorded pull request's head commit, followed until
 * they complete or read once, each verdict appended to evolution.jsonl as a
 * `ci` update line of the run.
 */

export interface FollowRecordedOptions {
  /** candor.evolution.ciTimeoutMinutes, counted from the push. */
  readonly timeoutMs: number;
  /** Stops following: the last state read is returned and recorded. */
  readonly signal?: AbortSignal;
  /** Told each time the state or a check changes. */
  readonly onState?: (ci: CiResult) => void;
  readonly clock?: () => Date;
  readonly sleep?: Sleep;
}

/** The runs whose pull request is recorded and whose CI has not finished: the ones to follow again (newest last). */
export function openPullRequestRuns(dataDir: string): EvolutionRun[] {
  return readRuns(dataDir).filter((run) => run.pr !== undefined && (run.ci === undefined || run.ci.state === 'pending'));
}

/**
 * Follows the CI of the run's recorded pull request until it completes or
 * the timeout passes (from the push, so a resumed follower keeps the same
 * deadline), appending a `ci` line at each change of state and at the end.
 */
export async function followRecordedCi(ctx: PullRequestContext, run: string, opts: FollowRecordedOptions): Promise<CiResult> {
  const recorded = recordedRun(ctx.dataDir, run);
  const conn = await connectPullRequest(ctx);
  const head = await pullRequestHead(conn, recorded);
  let last: CiResult | undefined = recorded.ci;
  const record = (ci: CiResult, always: boolean): void => {
    if (last !== undefined && (always ? JSON.stringify(last) === JSON.stringify(ci) : last.state === ci.state)) return;
    appendCi(ctx, run, ci);
    last = ci;
  };
  const result = await followCi(conn.gh, {
    ...head,
    timeoutMs: opts.timeoutMs,
    pushedAt: pushedAt(ctx.dataDir, recorded),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    ...(opts.sleep ? { sleep: opts.sleep } : {}),
    onState: (ci) => {
      record(ci, false);
      opts.onState?.(ci);
    },
  });
  record(result, true);
  return result;
}

/** What one read of a recorded pull request's CI found, or why it could not be read. */
export interface RecordedCiRead {
  readonly run: string;
  readonly pr: { readonly url: string; readonly number: number };
  readonly ci?: CiResult;
  /** Why this one was not read (the others still are). */
  readonly error?: string;
}

/**
 * One read of the CI of each run of this agent repository whose pull
 * request is recorded with CI unfinished (an evolution run's start does
 * this), each new verdict appended as a `ci` line. A missing token or a
 * remote that is not GitHub throws; a pull request that cannot be read is
 * reported in its entry.
 */
export async function readOpenPullRequestsCi(ctx: PullRequestContext, clock: () => Date = () => new Date()): Promise<RecordedCiRead[]> {
  const waiting = openPullRequestRuns(ctx.dataDir);
  if (waiting.length === 0) return [];
  const conn = await connectPullRequest(ctx);
  const root = realOrResolved(conn.repo.root);
  const reads: RecordedCiRead[] = [];
  for (const run of waiting) {
    if (run.pr === undefined || (run.repository !== null && realOrResolved(run.repository) !== root)) continue;
    try {
      const ci = await ciStateOnce(conn.gh, { ...(await pullRequestHead(conn, run)), pushedAt: pushedAt(ctx.dataDir, run), clock });
      if (JSON.stringify(ci) !== JSON.stringify(run.ci)) appendCi(ctx, run.run, ci);
      reads.push({ run: run.run, pr: run.pr, ci });
    } catch (err) {
      if (!isPullRequestRefusal(err)) throw err;
      reads.push({ run: run.run, pr: run.pr, error: ctx.secrets.redact(err.message) });
    }
  }
  return reads;
}

function recordedRun(dataDir: string, run: string): EvolutionRun & { readonly pr: NonNullable<EvolutionRun['pr']> } {
  const found = readRuns(dataDir).find((r) => r.run === run);
  if (found?.pr === undefined) throw new PullRequestError('no-pull-request', `Run ${run} has no pull request recorded in evolution.jsonl: open one first (Candor: Open Pull Request, or candor pr BRANCH --yes).`);
  return found as EvolutionRun & { readonly pr: NonNullable<EvolutionRun['pr']> };
}

/**
 * The repository and head commit of a recorded pull request: its page names
 * the repository (`…/OWNER/REPO/pull/N`); its head is the open pull
 * request's own, else the branch as the agent repository has it, else the
 * commit the run shipped.
 */
async function pullRequestHead(conn: PullRequestConnection, run: EvolutionRun): Promise<{ owner: string; repo: string; sha: string }> {
  const pr = run.pr;
  const where = (pr && repositoryOfPage(pr.url)) ?? { owner: conn.remote.owner, repo: conn.remote.repo };
  if (pr !== undefined && run.branch !== null) {
    const open = await conn.gh.openPullRequests(where.owner, where.repo, `${conn.remote.owner}:${run.branch}`);
    const same = open.find((p) => p.number === pr.number);
    if (same !== undefined) return { ...where, sha: same.headSha };
  }
  const local = run.branch !== null ? await conn.repo.revParse(`refs/heads/${run.branch}^{commit}`) : undefined;
  const sha = local ?? run.commit;
  if (sha === null) throw new PullRequestError('no-pull-request', `Run ${run.run} recorded no commit: there is no CI to follow.`);
  return { ...where, sha };
}

/** `OWNER/REPO` of a pull request's page (`https://github.com/OWNER/REPO/pull/N`, a GitHub Enterprise host's too). */
function repositoryOfPage(url: string): { owner: string; repo: string } | undefined {
  let pathname: string;
  try {
    pathname = new URL(url).pathname;
  } catch {
    return undefined;
  }
  const match = /\/([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})\/pull\/\d+\/?$/.exec(pathname);
  return match ? { owner: match[1] ?? '', repo: match[2] ?? '' } : undefined;
}

/** When the branch was pushed: the newest `pr` line of the run (ms since the epoch); the run's end when there is none. */
function pushedAt(dataDir: string, run: EvolutionRun): number {
  const lines = readJsonLines<{ run?: unknown; update?: unknown; ts?: unknown }>(path.join(dataDir, EVOLUTION_FILE)).records;
  const opened = lines.filter((line) => line.run === run.run && line.update === 'pr' && typeof line.ts === 'string').at(-1)?.ts;
  const at = Date.parse(typeof opened === 'string' ? opened : run.ended);
  return Number.isNaN(at) ? Date.now() : at;
}

function appendCi(ctx: PullRequestContext, run: string, ci: CiResult): void {
  appendRunUpdate(ctx.dataDir, ctx.secrets.redactDeep({ v: 1, ts: isoNow(), run, update: 'ci', ci: { state: ci.state, url: ci.url, checks: ci.checks.map((c) => ({ ...c })) } }));
}
