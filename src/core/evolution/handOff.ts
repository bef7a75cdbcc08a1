import { isHandoffBranchName, openWorkspaceRepo, type GuardOptions, type HandOffResult, type UnsavedBufferSource } from '../git';
import { EvolutionError } from './errors';
import { repoPaths } from './paths';
import { scratchGit, type Scratch } from './scratchGit';

/**
 * `Candor: Take Evolution Branch`: copies `branch` from the scratch clone of
 * the agent's repository into that repository, ref-only, through the guard
 * (refused unless it is clean).
 */
export async function handOff(dataDir: string, repository: string, branch: string, unsaved: UnsavedBufferSource, guardOptions: GuardOptions = {}): Promise<HandOffResult> {
  const repo = await openWorkspaceRepo(repository, guardOptions);
  const scratch: Scratch = { dataDir, dir: repoPaths(dataDir, repo.root).scratch };
  try {
    await scratchGit(scratch, ['rev-parse', '--verify', '--quiet', `refs/heads/${branch}`], { secrets: guardOptions.secrets });
  } catch {
    throw new EvolutionError('no-branch', `the scratch clone has no branch ${branch}`);
  }
  return repo.takeBranch(scratch.dir, branch, { unsaved });
}

/** The commit of an evolution branch with its full diff, read from the scratch clone (the agent's repository is not touched). */
export async function branchDiff(dataDir: string, repository: string, branch: string, guardOptions: GuardOptions = {}): Promise<string> {
  if (!isHandoffBranchName(branch)) throw new EvolutionError('no-branch', `${branch} is not an evolution branch`);
  const repo = await openWorkspaceRepo(repository, guardOptions);
  const scratch: Scratch = { dataDir, dir: repoPaths(dataDir, repo.root).scratch };
  try {
    return await scratchGit(scratch, ['show', '--stat', '--patch', '--format=fuller', '--no-color', '--no-ext-diff', '--no-textconv', `refs/heads/${branch}`], { secrets: guardOptions.secrets });
  } catch {
    throw new EvolutionError('no-branch', `the scratch clone has no branch ${branch}`);
  }
}
