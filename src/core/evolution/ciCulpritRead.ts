import type { ReadOnlyGit } from '../git';
import { ciCulprit, type CiCulpritResult } from '../github/ciHistory';
import { resolveTarget } from '../github/pullRequest';
import { culpritInput, readCiHistory } from './ciRollback';
import { connectPullRequest } from './pullRequestConnect';
import type { PullRequestContext } from './pullRequestContext';

/**
 * CI's culprit for an evolution run's start (docs/architecture.md,
 * "Evolution"): the default branch of the repository pull requests go to,
 * as the agent repository knows it (its remote-tracking branch, fresher
 * after a fetch, else its local branch), read through the guard, and each
 * commit's CI read from GitHub newest first until CI says where it broke.
 * The run gets the result as `ciCulprit` and reverts the culprit only if
 * HEAD has it (ciRollback.ts); Candor never pulls.
 */
export async function readCiCulprit(ctx: PullRequestContext): Promise<CiCulpritResult> {
  const conn = await connectPullRequest(ctx);
  const target = await resolveTarget(conn.gh, { owner: conn.remote.owner, repo: conn.remote.repo, ...(ctx.baseRepository ? { baseRepository: ctx.baseRepository } : {}) });
  const defaultBranch = target.defaultBranch;
  const rev = await defaultBranchRef(conn.repo, ctx.remote, defaultBranch);
  if (rev === undefined) {
    return { culprit: null, reason: `The agent repository has neither ${ctx.remote}/${defaultBranch} nor ${defaultBranch}, the default branch of ${target.owner}/${target.repo}: no CI history to read (fetch it to let the run roll back what CI failed).` };
  }
  const history = await readCiHistory(conn.repo, rev);
  return ciCulprit(conn.gh, { owner: target.owner, repo: target.repo, defaultBranch, commits: culpritInput(history) });
}

async function defaultBranchRef(repo: ReadOnlyGit, remote: string, branch: string): Promise<string | undefined> {
  for (const ref of [`refs/remotes/${remote}/${branch}`, `refs/heads/${branch}`]) {
    if ((await repo.revParse(`${ref}^{commit}`)) !== undefined) return ref;
  }
  return undefined;
}
