import { isEvolutionError, throwIfCancelled } from './errors';
import { resetTo } from './scratch';
import { scratchGit, type Scratch, type ScratchGitOptions } from './scratchGit';
import { RANT_TRAILER, commitOnBranch, revertBranch, revertCommit, type Shipped } from './ship';
import type { GateResult } from './testGate';
import { clip } from '../text';

/**
 * Automatic rollback (docs/architecture.md, "Evolution"): when the agent
 * repository's HEAD fails the gate, the Candor commits after the newest
 * commit known to pass are reverted in the scratch clone, newest first, until
 * the gate passes again — however they were merged: fast-forward, `--no-ff`
 * (the Candor commit is a second parent's ancestor), squashed (the trailer
 * anywhere in the message) or with commits on top. Everything here runs in
 * the scratch clone, which holds the repository's history after the refresh.
 */

export const REVERT_TRAILER = 'Candor-Revert';
/** First-parent commits searched for one known to pass. */
export const MAX_FIRST_PARENTS = 1000;
/** Reverts (each re-gated) at most in one run. */
export const MAX_REVERTS = 10;

export interface CandorCommit {
  readonly sha: string;
  readonly subject: string;
  /** The ids of its `Candor-Rant:` lines. */
  readonly rants: readonly string[];
}

export interface History {
  /** The newest commit of HEAD's first-parent chain (HEAD included) known to pass; undefined when none of the newest 1,000 is. */
  readonly base: string | undefined;
  /**
   * The non-merge commits of `rev-list --topo-order base..HEAD` with a
   * `Candor-Rant:` line that nothing in the range reverted yet, newest
   * first. Without a base: those among HEAD's newest 1,000 commits.
   */
  readonly candidates: readonly CandorCommit[];
}

// At the start of a line, indented at most by whitespace (a squash message indents the commits it
// lists); never inside the quoted rant ("> …"), which is text anyone could have typed.
const RANT_LINE = new RegExp(`^[ \\t]*${RANT_TRAILER}:[ \\t]*(\\S+)`, 'gim');
const REVERT_LINES = [new RegExp(`^[ \\t]*${REVERT_TRAILER}:[ \\t]*([0-9a-f]{7,64})\\b`, 'gim'), /^[ \t]*This reverts commit ([0-9a-f]{7,64})\b/gim];

/**
 * Finds the base and the candidates. `passed` is in the order the passes
 * were recorded, and the newest one is usually the base: its range is read
 * first, and when HEAD's first-parent chain, followed through that range,
 * ends at it with no other pass on the way, one git process was enough. Any
 * other history takes two: the chain, then the range from the base it names.
 */
export async function readHistory(scratch: Scratch, head: string, passed: ReadonlySet<string>, options: ScratchGitOptions = {}): Promise<History> {
  if (passed.has(head)) return { base: head, candidates: [] };
  const range = async (base: string | undefined, max?: number): Promise<LogCommit[]> =>
    parseLog(await scratchGit(scratch, ['log', '--topo-order', '--no-color', '--no-decorate', '--format=%H%x00%P%x00%B%x1e', ...(max !== undefined ? [`--max-count=${max}`] : []), head, ...(base !== undefined ? [`^${base}`] : []), '--'], options));
  const guess = [...passed].reverse()[0];
  if (guess !== undefined) {
    const commits = await range(guess, MAX_FIRST_PARENTS);
    if (commits.length < MAX_FIRST_PARENTS && chainEndsAt(commits, head, guess, passed)) return { base: guess, candidates: candidatesOf(commits) };
  }
  const chain = (await scratchGit(scratch, ['rev-list', '--first-parent', `--max-count=${MAX_FIRST_PARENTS}`, head, '--'], options)).split('\n');
  const base = chain.find((sha) => sha !== '' && passed.has(sha));
  return { base, candidates: candidatesOf(await range(base, base === undefined ? MAX_FIRST_PARENTS : undefined)) };
}

interface LogCommit {
  readonly sha: string;
  readonly parents: readonly string[];
  readonly body: string;
}

/** `%H\0%P\0%B` records separated by `\x1e`, newest first. */
function parseLog(log: string): LogCommit[] {
  const commits: LogCommit[] = [];
  for (const record of log.split('\x1e')) {
    const [sha = '', parents = '', body = ''] = record.replace(/^\n/, '').split('\0');
    if (/^[0-9a-f]{40,64}$/.test(sha)) commits.push({ sha, parents: parents.trim().split(/\s+/).filter((p) => p !== ''), body });
  }
  return commits;
}

/** True when HEAD's first parents, followed through `commits`, leave them at `base`, and none of them passed. */
function chainEndsAt(commits: readonly LogCommit[], head: string, base: string, passed: ReadonlySet<string>): boolean {
  const bySha = new Map(commits.map((c) => [c.sha, c]));
  let at: string | undefined = head;
  for (let steps = 0; at !== undefined && steps <= commits.length; steps++) {
    const commit = bySha.get(at);
    if (commit === undefined) return at === base;
    if (passed.has(at)) return false;
    at = commit.parents[0];
  }
  return false;
}

/** The Candor commits of a log read newest first, not merges, not reverted by anything in it. @internal */
export function candorCommits(log: string): CandorCommit[] {
  return candidatesOf(parseLog(log));
}

function candidatesOf(commits: readonly LogCommit[]): CandorCommit[] {
  const isReverted = revertedIn(commits.map((c) => c.body));
  const out: CandorCommit[] = [];
  for (const c of commits) {
    const candor = isReverted(c.sha) ? undefined : candorCommitOf(c);
    if (candor !== undefined) out.push(candor);
  }
  return out;
}

/** A Candor change: not a merge, not itself a revert, with at least one `Candor-Rant:` line. */
export function candorCommitOf(commit: { readonly sha: string; readonly parents: readonly string[]; readonly body: string }): CandorCommit | undefined {
  if (commit.parents.length > 1 || revertedBy(commit.body).length > 0) return undefined;
  const rants = [...commit.body.matchAll(RANT_LINE)].map((m) => m[1] ?? '').filter((id) => id !== '');
  if (rants.length === 0) return undefined;
  return { sha: commit.sha, subject: commit.body.trim().split('\n', 1)[0]?.trim() ?? '', rants: [...new Set(rants)] };
}

/** Whether one of these messages reverts a commit (`Candor-Revert:` or "This reverts commit", by full or abbreviated sha). */
export function revertedIn(messages: readonly string[]): (sha: string) => boolean {
  const reverted = messages.flatMap((body) => revertedBy(body));
  return (sha) => reverted.some((prefix) => sha.startsWith(prefix));
}

function revertedBy(body: string): string[] {
  return REVERT_LINES.flatMap((pattern) => [...body.matchAll(pattern)].map((m) => (m[1] ?? '').toLowerCase()));
}

export type RevertResult =
  /** The gate passes after reverting `reverted` (newest first); `tree` is what passed. */
  | { readonly kind: 'passed'; readonly reverted: readonly CandorCommit[]; readonly tree: string; readonly gate: GateResult }
  /** Reverting `commit` conflicts with what came after it. */
  | { readonly kind: 'conflict'; readonly commit: CandorCommit; readonly reverted: readonly CandorCommit[]; readonly detail: string }
  /** Every revert tried (`exhausted`: all candidates; else the limit) and the gate still fails. */
  | { readonly kind: 'still-failing'; readonly reverted: readonly CandorCommit[]; readonly gate: GateResult | undefined; readonly exhausted: boolean };

export interface RevertSteps {
  /** Gates the clone as it is now. */
  gate(): Promise<GateResult>;
  /** After each revert and its gate. */
  onStep?(commit: CandorCommit, gate: GateResult): void;
  readonly setupCommand: string;
  readonly signal?: AbortSignal;
}

/**
 * From the clone at `head` (clean), reverts the candidates newest first,
 * re-gating after each, at most MAX_REVERTS times, until the gate passes.
 * Between reverts the clone is put back at the last revert, so nothing a
 * gate wrote is carried into the next one.
 */
export async function revertUntilGreen(scratch: Scratch, candidates: readonly CandorCommit[], steps: RevertSteps, options: ScratchGitOptions = {}): Promise<RevertResult> {
  const reverted: CandorCommit[] = [];
  let gate: GateResult | undefined;
  for (const commit of candidates.slice(0, MAX_REVERTS)) {
    try {
      await revertCommit(scratch, commit.sha, options);
    } catch (err) {
      if (!isEvolutionError(err, 'scratch-git')) throw err;
      return { kind: 'conflict', commit, reverted, detail: err.message };
    }
    reverted.push(commit);
    const tip = (await scratchGit(scratch, ['rev-parse', 'HEAD'], options)).trim();
    gate = await steps.gate();
    throwIfCancelled(steps.signal);
    steps.onStep?.(commit, gate);
    if (gate.passed) {
      const tree = (await scratchGit(scratch, ['rev-parse', `${tip}^{tree}`], options)).trim();
      return { kind: 'passed', reverted, tree, gate };
    }
    await resetTo(scratch, tip, steps.setupCommand, options);
  }
  return { kind: 'still-failing', reverted, gate, exhausted: candidates.length <= MAX_REVERTS };
}

/** The rants named by these commits, each once. */
export function rantsOf(commits: readonly CandorCommit[]): string[] {
  return [...new Set(commits.flatMap((c) => c.rants))];
}

/** Why no revert is prepared, for people (after `failing`, which says how HEAD fails), and the rants concerned. */
export function rollbackFailure(result: Exclude<RevertResult, { readonly kind: 'passed' }>, failing: string, total: number): { reason: string; rants: string[] } {
  if (result.kind === 'conflict') {
    return { rants: rantsOf([result.commit]), reason: `${failing}; reverting ${result.commit.sha.slice(0, 12)} (${clip(result.commit.subject, 80)}) conflicts with the commits after it, so nothing is prepared: revert it by hand` };
  }
  const why = result.exhausted
    ? `HEAD fails its own tests, and not because of a Candor change: it still fails with all ${total} Candor commit(s) since the newest passing commit reverted`
    : `reverting the newest ${MAX_REVERTS} of ${total} Candor commits does not make it pass`;
  return { rants: rantsOf(result.reverted), reason: `${failing}; ${why}; nothing is prepared` };
}

export interface RevertInput {
  readonly head: string;
  readonly reverted: readonly CandorCommit[];
  /** How HEAD fails, in the message's words: the gate's verdict, or CI's. */
  readonly why: string;
  /** What HEAD fails: `the gate` (default) or `CI`. */
  readonly failing?: string;
}

/** Ships the tree that passed as one commit on HEAD: `candor/revert-<HEAD's short sha>`, one `Candor-Revert:` trailer per reverted commit. */
export async function shipRevert(scratch: Scratch, input: RevertInput & { readonly tree: string }, options: ScratchGitOptions = {}): Promise<Shipped> {
  const short = (await scratchGit(scratch, ['rev-parse', '--short=12', input.head], options)).trim();
  return commitOnBranch(scratch, { branch: revertBranch(short), tree: input.tree, parent: input.head, message: revertMessage(input.head, input.reverted, input.why, input.failing) }, options);
}

export type PreparedRevert =
  | { readonly kind: 'prepared'; readonly shipped: Shipped; readonly reverted: readonly CandorCommit[] }
  | { readonly kind: 'conflict'; readonly commit: CandorCommit; readonly detail: string };

/**
 * The revert of given commits, with no gate of its own: from the clone at
 * `head` (clean), each is reverted newest first and the result ships as
 * `shipRevert` ships it. For a change that CI failed and the local gate
 * passes (docs/architecture.md, "Evolution"): the revert's own pull
 * request's CI verifies it, not the local gate.
 */
export async function prepareRevert(scratch: Scratch, input: RevertInput, options: ScratchGitOptions = {}): Promise<PreparedRevert> {
  for (const commit of input.reverted) {
    try {
      await revertCommit(scratch, commit.sha, options);
    } catch (err) {
      if (!isEvolutionError(err, 'scratch-git')) throw err;
      return { kind: 'conflict', commit, detail: err.message };
    }
    throwIfCancelled(options.signal);
  }
  const tree = (await scratchGit(scratch, ['rev-parse', 'HEAD^{tree}'], options)).trim();
  return { kind: 'prepared', shipped: await shipRevert(scratch, { ...input, tree }, options), reverted: input.reverted };
}

export function revertMessage(head: string, reverted: readonly CandorCommit[], why: string, failing = 'the gate'): string {
  const only = reverted.length === 1 ? reverted[0] : undefined;
  const subject = only !== undefined ? `Revert "${clip(only.subject, 60)}"` : `Revert ${reverted.length} Candor changes that break the tests`;
  const list = reverted.map((c) => `- ${c.sha.slice(0, 12)} ${clip(c.subject, 60)} (${RANT_TRAILER}: ${c.rants.join(', ')})`).join('\n');
  const body = `HEAD ${head.slice(0, 12)} fails ${failing} (${why}). Reverting, newest first:\n${list}\nrestores it.`;
  const trailers = reverted.map((c) => `${REVERT_TRAILER}: ${c.sha}`).join('\n');
  return `${subject}\n\n${body}\n\n${trailers}\n`;
}
