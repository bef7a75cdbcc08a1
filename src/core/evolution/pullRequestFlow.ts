import { isGitGuardError } from '../git';
import { GitGuardError } from '../git/errors';
import { openPullRequest } from '../github/pullRequest';
import { isoNow } from '../jsonl';
import { connectPullRequest, type PullRequestConnection } from './pullRequestConnect';
import type { PullRequestContext, PullRequestPreview, PushAndOpenResult } from './pullRequestContext';
import { PullRequestError } from './pullRequestErrors';
import { baseOf, branchState, checkRunRepository, scratchOf, shippedRun } from './pullRequestRun';
import { appendRunUpdate } from './record';

/**
 * Open Pull Request, one flow for the extension's command and `candor pr`
 * (docs/architecture.md, "Evolution"): preview (pullRequestPreview.ts), then,
 * on the user's word only, hand off, push and open; then follow CI
 * (ciFollowRecorded.ts).
 */
export type { PullRequestContext, PullRequestPreview, PushAndOpenResult } from './pullRequestContext';
export { previewPullRequest } from './pullRequestPreview';
export { followRecordedCi, openPullRequestRuns, readOpenPullRequestsCi } from './ciFollowRecorded';
export { isPullRequestRefusal } from './pullRequestErrors';
export { readCiCulprit } from './ciCulpritRead';

/**
 * Pushes what the preview showed and opens (or links) its pull request:
 * hands the branch to the agent repository first when it is only in the
 * scratch clone (the checks of Take Evolution Branch: clean, ref-only),
 * refuses when the branch moved since the preview, pushes through the guard
 * (no tags, no hooks, never forced), opens the pull request, and records
 * `pr` and then `ci` `pending` as update lines of the run.
 */
export async function pushAndOpen(ctx: PullRequestContext, preview: PullRequestPreview): Promise<PushAndOpenResult> {
  const run = shippedRun(ctx.dataDir, preview.branch);
  if (run.run !== preview.run) throw changed(preview, `run ${run.run} shipped it again after the preview (of run ${preview.run})`);
  const conn = await connectPullRequest(ctx);
  checkRunRepository(run, conn.repo.root);
  const state = await branchState(ctx, conn.repo, run, preview.branch);
  if (state.commit !== preview.commit) throw changed(preview, `it is at ${state.commit.slice(0, 12)} now, not at ${preview.commit.slice(0, 12)}`);
  if (state.handOff === 'needed') await handOffFirst(ctx, conn, preview.branch);
  await conn.repo.pushBranch(ctx.remote, preview.branch);
  const { owner, repo } = conn.remote;
  const opened = await openPullRequest(conn.gh, { owner, repo, branch: preview.branch, title: preview.title, body: preview.body, ...baseOf(run), ...(ctx.baseRepository ? { baseRepository: ctx.baseRepository } : {}) });
  recordOpened(ctx, run.run, opened);
  return { url: opened.url, number: opened.number, existed: opened.existed, pushed: state.handOff === 'taken-with-user-commits' ? 'user-branch' : 'hand-off-branch' };
}

function changed(preview: PullRequestPreview, how: string): PullRequestError {
  return new PullRequestError('changed', `${preview.branch} changed since the preview (${how}): nothing was pushed. Look at the preview again, then push.`);
}

/**
 * Take Evolution Branch's hand-off (the guard's ref-only fetch from the
 * scratch clone, refused unless the repository is clean), once branchState
 * found the branch in the scratch clone; a dirty repository is refused with
 * what makes it dirty and what to do.
 */
async function handOffFirst(ctx: PullRequestContext, conn: PullRequestConnection, branch: string): Promise<void> {
  try {
    await conn.repo.takeBranch(scratchOf(ctx.dataDir, conn.repo).dir, branch, { unsaved: ctx.unsaved });
  } catch (err) {
    if (isGitGuardError(err, 'dirty')) {
      throw new GitGuardError('dirty', `${err.message}. Open Pull Request hands the branch to the agent repository first, which needs it clean: commit or stash those changes (or save the files), then open the pull request again.`, err.detail);
    }
    throw err;
  }
}

function recordOpened(ctx: PullRequestContext, run: string, opened: { readonly url: string; readonly number: number }): void {
  appendRunUpdate(ctx.dataDir, ctx.secrets.redactDeep({ v: 1, ts: isoNow(), run, update: 'pr', pr: { url: opened.url, number: opened.number } }));
  appendRunUpdate(ctx.dataDir, ctx.secrets.redactDeep({ v: 1, ts: isoNow(), run, update: 'ci', ci: { state: 'pending', url: opened.url, checks: [] } }));
}
