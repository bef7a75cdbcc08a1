import { isHandoffBranchName, type ReadOnlyGit } from '../git';
import { realOrResolved } from '../realPath';
import { readRants } from '../rants';
import type { PullRequestTextInput } from '../github/prText';
import { EvolutionError } from './errors';
import { repoPaths } from './paths';
import type { PullRequestContext, PullRequestPreview } from './pullRequestContext';
import { PullRequestError } from './pullRequestErrors';
import { readRuns, type EvolutionRun } from './record';
import { scratchGit, type Scratch } from './scratchGit';

/** What a pull request can be opened for: a change that shipped, or a prepared revert. */
const OPENABLE = new Set(['shipped', 'revert-prepared']);

/**
 * The newest run in evolution.jsonl that shipped `branch` (or prepared it
 * as a revert), with its pull request and CI merged in.
 */
export function shippedRun(dataDir: string, branch: string): EvolutionRun {
  if (!isHandoffBranchName(branch)) throw new PullRequestError('no-run', `${JSON.stringify(branch)} is not an evolution branch (candor/rant-<id> or candor/revert-<sha>): name the branch a run shipped, as the Rants list and "candor evolve" print it.`);
  const run = readRuns(dataDir)
    .filter((r) => r.branch === branch && OPENABLE.has(r.outcome))
    .at(-1);
  if (run === undefined) {
    throw new PullRequestError('no-run', `No evolution run shipped ${branch}: evolution.jsonl in ${dataDir} has no shipped or revert-prepared run with that branch. Check the branch name (the Rants list and "candor evolve" print it) and the data folder (candor.dataDir, --data-dir for the CLI).`);
  }
  return run;
}

/** The run worked on this repository: a branch of another agent repository is never pushed from this one. */
export function checkRunRepository(run: EvolutionRun, root: string): void {
  if (run.repository === null || realOrResolved(run.repository) === realOrResolved(root)) return;
  throw new PullRequestError('no-run', `${run.branch ?? 'The branch'} was shipped by run ${run.run} for the agent repository ${run.repository}, not ${root}: point candor.evolution.repository (--repository for the CLI) at ${run.repository}.`);
}

/** What the scratch clone's git needs of the context: where, and the values its environment must not hold (the token among them). */
export type FlowInput = Pick<PullRequestContext, 'dataDir' | 'secrets'>;

export interface BranchState {
  readonly handOff: PullRequestPreview['handOff'];
  /** The commit that would be pushed. */
  readonly commit: string;
}

/** Where the branch is: only in the scratch clone (to be handed off first), or in the agent repository, as shipped or with the user's commits. */
export async function branchState(ctx: FlowInput, repo: ReadOnlyGit, run: EvolutionRun, branch: string): Promise<BranchState> {
  const local = await repo.revParse(`refs/heads/${branch}^{commit}`);
  if (local !== undefined) return { handOff: local === run.commit ? 'taken' : 'taken-with-user-commits', commit: local };
  const scratch = scratchOf(ctx.dataDir, repo);
  let commit: string;
  try {
    commit = (await scratchGit(scratch, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}^{commit}`], { secrets: ctx.secrets.values() })).trim();
  } catch {
    commit = '';
  }
  if (commit === '') throw new EvolutionError('no-branch', `${branch} is neither in the agent repository ${repo.root} nor in the scratch clone any more (was it cleaned up?): run "candor evolve" (Candor: Run Evolution) again to ship it anew.`);
  return { handOff: 'needed', commit };
}

export function scratchOf(dataDir: string, repo: ReadOnlyGit): Scratch {
  return { dataDir, dir: repoPaths(dataDir, repo.root).scratch };
}

/** A commit's whole message: from the scratch clone when it has the commit, else from the agent repository; '' when neither has it. */
export async function commitMessageOf(ctx: FlowInput, repo: ReadOnlyGit, commit: string): Promise<string> {
  try {
    return await scratchGit(scratchOf(ctx.dataDir, repo), ['log', '-1', '--no-color', '--format=%B', commit, '--'], { secrets: ctx.secrets.values() });
  } catch {
    // not in the scratch clone (cleaned up, or a commit of the user's)
  }
  try {
    return (await repo.history(commit, 1))[0]?.message ?? '';
  } catch {
    return '';
  }
}

const TRAILER_LINE = /^[ \t]*Candor-[A-Za-z-]+:[ \t]*\S+[ \t]*$/;
const REVERT_TRAILER_LINE = /^Candor-Revert:[ \t]*([0-9a-f]{7,64})[ \t]*$/gm;

/**
 * What the pull request's text is made of (prText.ts), from the run and its
 * commit's message: a change's summary is what the model wrote below the
 * quoted rant (ship.ts, `commitMessage`); a revert's is its message without
 * its trailers, and its `Candor-Revert:` lines end the body.
 */
export function textInputOf(dataDir: string, run: EvolutionRun, message: string): PullRequestTextInput {
  const paragraphs = message.trim().split(/\n[ \t]*\n/);
  const isTrailers = (p: string): boolean => p.split('\n').every((line) => TRAILER_LINE.test(line));
  const common = { gate: run.gate, diffstat: run.diffstat };
  if (run.outcome === 'revert-prepared') {
    const trailers = [...message.matchAll(REVERT_TRAILER_LINE)].map((m) => `Candor-Revert: ${m[1] ?? ''}`);
    return { ...common, summary: paragraphs.filter((p) => !isTrailers(p)).join('\n\n'), rantText: run.reason, rantId: null, trailers };
  }
  const rantId = run.rants[0] ?? null;
  const rant = rantId === null ? undefined : readRants(dataDir).rants.find((r) => r.id === rantId);
  const subject = (paragraphs[0] ?? '').replace(/^candor:\s*/i, '');
  const summary = paragraphs.slice(1).filter((p) => !isTrailers(p) && !p.startsWith('Addresses the rant of ')).join('\n\n');
  return { ...common, summary: summary || subject, rantText: rant?.text ?? subject, rantId };
}

/** The branch the run started from, when the record knows it: the pull request's base if the target has it. */
export function baseOf(run: { readonly base?: string | null }): { base?: string } {
  return typeof run.base === 'string' && run.base !== '' ? { base: run.base } : {};
}
