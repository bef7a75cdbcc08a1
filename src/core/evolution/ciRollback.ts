import type { HistoryEntry, ReadOnlyGit } from '../git';
import type { CiCulprit, CiCulpritResult, HistoryCommit } from '../github/ciHistory';
import { candorCommitOf, prepareRevert, rantsOf, revertedIn, MAX_FIRST_PARENTS, type CandorCommit } from './rollback';
import type { Ending } from './ending';
import type { Scratch, ScratchGitOptions } from './scratchGit';

/**
 * Rollback that knows CI (docs/architecture.md, "Evolution"): the culprit is
 * the first `Candor-Rant` commit of the default branch whose CI failed while
 * its parent's passed (src/core/github/ciHistory.ts). Candor reverts it only
 * when the agent repository's HEAD has it on its first-parent chain; else the
 * run says to pull the default branch first, and does nothing: Candor never
 * pulls. The revert is prepared without the local gate (rollback.ts,
 * `prepareRevert`): a failure only CI sees passes the local gate.
 */

/** Commits of HEAD's history read at most: the first-parent chain and what its merges brought in. */
export const MAX_CI_HISTORY = MAX_FIRST_PARENTS;

export type CiRollbackTarget =
  /** Revert `commits` (newest first): the Candor changes the culprit brought in, not reverted yet. */
  | { readonly kind: 'revert'; readonly culprit: CiCulprit; readonly commits: readonly CandorCommit[] }
  /** No Candor change to revert: CI found none, or it is reverted already. */
  | { readonly kind: 'nothing'; readonly reason: string }
  /** The culprit is not in HEAD's first-parent history: nothing is done until the user pulls. */
  | { readonly kind: 'refused'; readonly reason: string };

/**
 * A first-parent chain read from the agent repository, each commit with the
 * Candor changes it brought in: itself, or for a merge (a pull request
 * merged with a merge commit) the commits of the merged side.
 */
export interface ChainCommit {
  readonly sha: string;
  /** Its first parent; null for a root commit. */
  readonly parent: string | null;
  /** The Candor changes it brought onto the chain, newest first. */
  readonly candor: readonly CandorCommit[];
}

export interface CiHistory {
  /** The first-parent chain of `rev`, newest first. */
  readonly chain: readonly ChainCommit[];
  /** Every message read: what a later commit says it reverted. */
  readonly isReverted: (sha: string) => boolean;
}

/** The first-parent history of `rev` in the agent repository, through the guard (a `log`: a read). */
export async function readCiHistory(repo: ReadOnlyGit, rev = 'HEAD', max = MAX_CI_HISTORY): Promise<CiHistory> {
  return ciHistoryOf(await repo.history(rev, max));
}

/**
 * The history as `ciCulprit` takes it (newest first): a merge's rant is that
 * of the newest Candor change it brought in, so a pull request merged with
 * a merge commit still names its rant.
 */
export function culpritInput(history: CiHistory): HistoryCommit[] {
  return history.chain.map((c) => ({ sha: c.sha, parent: c.parent, rantId: c.candor[0]?.rants[0] ?? null }));
}

/**
 * What to revert for CI's culprit: refused with "pull the default branch
 * first" unless the culprit is on HEAD's first-parent chain (read through
 * the guard), nothing when CI named none or every change it brought in is
 * reverted already.
 */
export async function ciRollbackTarget(repo: ReadOnlyGit, found: CiCulpritResult, history?: CiHistory): Promise<CiRollbackTarget> {
  if (found.culprit === null) return { kind: 'nothing', reason: found.reason };
  const culprit = found.culprit;
  const head = history ?? (await readCiHistory(repo));
  const at = head.chain.find((c) => c.sha === culprit.sha);
  const short = culprit.sha.slice(0, 12);
  if (at === undefined) {
    return {
      kind: 'refused',
      reason: `CI failed on ${short} (Candor-Rant: ${culprit.rantId}) after its parent passed, but the agent repository's HEAD does not have it on its first-parent history (of the newest ${MAX_CI_HISTORY} commits): pull the default branch first. Candor never pulls; nothing is reverted.`,
    };
  }
  const commits = at.candor.filter((c) => !head.isReverted(c.sha));
  if (at.candor.length === 0) return { kind: 'nothing', reason: `CI failed on ${short}, but it brought in no Candor change to revert.` };
  if (commits.length === 0) return { kind: 'nothing', reason: `CI failed on ${short}, and its Candor change(s) are reverted already on HEAD.` };
  return { kind: 'revert', culprit, commits };
}

/**
 * The chain from the newest entry, and for each of its commits what it
 * brought in. Walked oldest first: a merge brings in what its other parents
 * reach that the chain and the older merges did not (within the entries
 * read).
 */
export function ciHistoryOf(entries: readonly HistoryEntry[]): CiHistory {
  const bySha = new Map(entries.map((e, index) => [e.sha, { entry: e, index }]));
  const chainShas: string[] = [];
  for (let at: string | undefined = entries[0]?.sha; at !== undefined && bySha.has(at) && chainShas.length < entries.length; at = bySha.get(at)?.entry.parents[0]) chainShas.push(at);
  const claimed = new Set(chainShas);
  const brought = new Map<string, HistoryEntry[]>();
  for (const sha of [...chainShas].reverse()) {
    const entry = bySha.get(sha)?.entry as HistoryEntry;
    const found: HistoryEntry[] = [entry];
    const stack = entry.parents.slice(1);
    while (stack.length > 0) {
      const next = bySha.get(stack.pop() as string);
      if (next === undefined || claimed.has(next.entry.sha)) continue;
      claimed.add(next.entry.sha);
      found.push(next.entry);
      stack.push(...next.entry.parents);
    }
    found.sort((a, b) => (bySha.get(a.sha)?.index ?? 0) - (bySha.get(b.sha)?.index ?? 0));
    brought.set(sha, found);
  }
  const chain = chainShas.map((sha) => {
    const entry = bySha.get(sha)?.entry as HistoryEntry;
    const candor = (brought.get(sha) ?? []).map((e) => candorCommitOf({ sha: e.sha, parents: e.parents, body: e.message })).filter((c): c is CandorCommit => c !== undefined);
    return { sha, parent: entry.parents[0] ?? null, candor };
  });
  return { chain, isReverted: revertedIn(entries.map((e) => e.message)) };
}

/**
 * A run's answer to CI's culprit (docs/architecture.md, "Evolution"): the
 * revert of its Candor changes on HEAD, prepared in the scratch clone and
 * shipped like the local gate's rollback, but not gated locally (a
 * CI-only failure passes the local gate): its own pull request's CI
 * verifies it. Undefined when there is nothing to revert.
 */
export async function revertForCi(repo: ReadOnlyGit, scratch: Scratch, head: string, found: CiCulpritResult, options: ScratchGitOptions & { readonly print: (line: string) => void }): Promise<Ending | undefined> {
  const target = await ciRollbackTarget(repo, found);
  if (target.kind === 'nothing') {
    options.print(target.reason);
    return undefined;
  }
  if (target.kind === 'refused') return { outcome: 'error', reason: target.reason };
  const short = target.culprit.sha.slice(0, 12);
  const why = `CI failed on ${short}${target.culprit.ci.url ? `: ${target.culprit.ci.url}` : ''}`;
  options.print(`${why}, after its parent passed: reverting ${target.commits.length} Candor change(s) it brought in`);
  const prepared = await prepareRevert(scratch, { head, reverted: target.commits, why, failing: 'CI' }, options);
  if (prepared.kind === 'conflict') return { outcome: 'error', reason: `${why}; reverting ${prepared.commit.sha.slice(0, 12)} conflicts with later work (${prepared.detail}); nothing is prepared` };
  const list = prepared.reverted.map((c) => c.sha.slice(0, 12)).join(', ');
  return {
    outcome: 'revert-prepared',
    rants: rantsOf(prepared.reverted),
    reason: `${why}; a revert of ${list} is ready on ${prepared.shipped.branch}, not gated locally (CI's failure passes the local gate): open its pull request, whose CI verifies it`,
    branch: prepared.shipped.branch,
    commit: prepared.shipped.commit,
  };
}
