import { ciStateOnce, type CiResult } from './ciState';
import type { GitHub } from './types';

/** One commit of the default branch's first-parent history, as the local repository has it. */
export interface HistoryCommit {
  readonly sha: string;
  /** Its first parent; null for a root commit. */
  readonly parent: string | null;
  /** The id of its `Candor-Rant:` trailer; null when it has none (a person's commit). */
  readonly rantId: string | null;
}

export interface CiCulpritInput {
  readonly owner: string;
  readonly repo: string;
  /** The branch `commits` is the history of: named in the reasons. */
  readonly defaultBranch: string;
  /** First-parent history, NEWEST FIRST (as `git log --first-parent` lists it). */
  readonly commits: readonly HistoryCommit[];
  /** Commits read at most, newest first: each costs two requests. Default 20. */
  readonly maxCommits?: number;
}

export interface CiCulprit {
  readonly sha: string;
  readonly rantId: string;
  readonly ci: CiResult;
  readonly parentCi: CiResult;
}

export type CiCulpritResult = { readonly culprit: CiCulprit } | { readonly culprit: null; readonly reason: string };

const DEFAULT_MAX_COMMITS = 20;

/**
 * The Candor change that broke the default branch's CI: walking the history
 * newest first, the first commit whose CI passed ends the walk (the branch
 * is green from there up: nothing to roll back); the first commit whose CI
 * failed while its parent's passed is where CI broke, and the culprit when
 * it is a `Candor-Rant` commit (a person's commit is no culprit of
 * Candor's). A failed commit whose parent failed too is passed over (the
 * break is older), and so is one whose CI is unknown (pending, none).
 */
export async function ciCulprit(gh: GitHub, input: CiCulpritInput): Promise<CiCulpritResult> {
  const cache = new Map<string, Promise<CiResult>>();
  const ci = (sha: string): Promise<CiResult> => {
    let read = cache.get(sha);
    if (read === undefined) {
      read = ciStateOnce(gh, { owner: input.owner, repo: input.repo, sha });
      cache.set(sha, read);
    }
    return read;
  };
  const limit = input.maxCommits ?? DEFAULT_MAX_COMMITS;
  const commits = input.commits.slice(0, limit);
  for (const commit of commits) {
    const own = await ci(commit.sha);
    if (own.state === 'passed') return { culprit: null, reason: `CI passed on ${short(commit.sha)} of ${input.defaultBranch}: nothing to roll back.` };
    if (own.state !== 'failed' || commit.parent === null) continue;
    const parentCi = await ci(commit.parent);
    if (parentCi.state !== 'passed') continue;
    if (commit.rantId === null) return { culprit: null, reason: `CI first failed on ${short(commit.sha)} of ${input.defaultBranch}, which is not a Candor change: nothing of Candor's to roll back.` };
    return { culprit: { sha: commit.sha, rantId: commit.rantId, ci: own, parentCi } };
  }
  return { culprit: null, reason: `No Candor change in the newest ${commits.length} commit${commits.length === 1 ? '' : 's'} of ${input.defaultBranch} failed CI after its parent passed.` };
}

function short(sha: string): string {
  return sha.slice(0, 12);
}
