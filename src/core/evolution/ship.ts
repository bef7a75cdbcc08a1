import { isHandoffBranchName, openWorkspaceRepo, type GuardOptions, type HandOffResult, type UnsavedBufferSource } from '../git';
import type { Rant } from '../rants';
import type { RantClass } from './classify';
import { EvolutionError } from './errors';
import { repoPaths } from './paths';
import { CANDOR_IDENTITY, scratchGit, type Scratch, type ScratchGitOptions } from './scratchGit';

export const RANT_TRAILER = 'Candor-Rant';

/** Every commit Candor makes: its own identity, unsigned (no agent, no prompt). */
const COMMIT_CONFIG = [...CANDOR_IDENTITY, 'commit.gpgsign=false'].flatMap((pair) => ['-c', pair]);

export function rantBranch(rantId: string): string {
  return `candor/rant-${rantId}`;
}

export function revertBranch(shortSha: string): string {
  return `candor/revert-${shortSha}`;
}

export interface ShipInput {
  readonly base: string;
  /** The staged tree of the change (see measureChange). */
  readonly tree: string;
  readonly rant: Rant;
  readonly class: RantClass | null;
  /** The model's description of its change. */
  readonly summary: string;
}

export interface Shipped {
  readonly branch: string;
  readonly commit: string;
}

export function commitMessage(input: Omit<ShipInput, 'base' | 'tree'>): string {
  const firstLine = input.rant.text.trim().split('\n', 1)[0]?.trim() ?? '';
  const subject = clip(`candor: ${firstLine}`, 72);
  const quoted = clip(input.rant.text.trim(), 2000)
    .split('\n')
    .map((line) => `> ${line}`.trimEnd())
    .join('\n');
  const parts = [subject, `Addresses the rant of ${input.rant.ts}${input.class !== null ? ` (${input.class})` : ''}:\n${quoted}`];
  const summary = input.summary.trim();
  if (summary !== '') parts.push(clip(summary, 4000));
  parts.push(`${RANT_TRAILER}: ${input.rant.id}`);
  return `${parts.join('\n\n')}\n`;
}

/**
 * Commits exactly the measured tree on top of `base` and points
 * `candor/rant-<id>` at it. The work tree is not consulted again, so nothing
 * the gate left behind can slip into the commit.
 */
export async function shipChange(scratch: Scratch, input: ShipInput, options: ScratchGitOptions = {}): Promise<Shipped> {
  const branch = rantBranch(input.rant.id);
  const commit = (await scratchGit(scratch, [...COMMIT_CONFIG, 'commit-tree', input.tree, '-p', input.base, '-F', '-'], { ...options, input: commitMessage(input) })).trim();
  await scratchGit(scratch, ['branch', '--force', '--no-track', branch, commit], options);
  return { branch, commit };
}

/** `git revert --no-edit` of `head` on `candor/revert-<short sha>`, in the scratch clone. */
export async function prepareRevert(scratch: Scratch, head: string, options: ScratchGitOptions = {}): Promise<Shipped> {
  const short = (await scratchGit(scratch, ['rev-parse', '--short=12', head], options)).trim();
  const branch = revertBranch(short);
  const parents = (await scratchGit(scratch, ['rev-list', '--parents', '-n', '1', head], options)).trim().split(/\s+/).length - 1;
  await scratchGit(scratch, ['checkout', '--quiet', '--force', '-B', branch, head], options);
  await scratchGit(scratch, [...COMMIT_CONFIG, 'revert', '--no-edit', ...(parents > 1 ? ['-m', '1'] : []), head], options);
  const commit = (await scratchGit(scratch, ['rev-parse', 'HEAD'], options)).trim();
  return { branch, commit };
}

/**
 * `Candor: Take Evolution Branch`: copies `branch` from the scratch clone of
 * `workspace` into it, ref-only, through the guard (refused unless clean).
 */
export async function handOff(dataDir: string, workspace: string, branch: string, unsaved: UnsavedBufferSource, guardOptions: GuardOptions = {}): Promise<HandOffResult> {
  const repo = await openWorkspaceRepo(workspace, guardOptions);
  const scratch: Scratch = { dataDir, dir: repoPaths(dataDir, repo.root).scratch };
  try {
    await scratchGit(scratch, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`]);
  } catch {
    throw new EvolutionError('no-branch', `the scratch clone has no branch ${branch}`);
  }
  return repo.takeBranch(scratch.dir, branch, { unsaved });
}

/** The commit of an evolution branch with its full diff, read from the scratch clone (the workspace is not touched). */
export async function branchDiff(dataDir: string, workspace: string, branch: string, guardOptions: GuardOptions = {}): Promise<string> {
  if (!isHandoffBranchName(branch)) throw new EvolutionError('no-branch', `${branch} is not an evolution branch`);
  const repo = await openWorkspaceRepo(workspace, guardOptions);
  const scratch: Scratch = { dataDir, dir: repoPaths(dataDir, repo.root).scratch };
  try {
    return await scratchGit(scratch, ['show', '--stat', '--patch', '--format=fuller', '--no-color', '--no-ext-diff', '--no-textconv', `refs/heads/${branch}`]);
  } catch {
    throw new EvolutionError('no-branch', `the scratch clone has no branch ${branch}`);
  }
}

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
