import { planPullRequest } from '../github/pullRequest';
import { pullRequestText } from '../github/prText';
import { connectPullRequest, shownRemoteUrl } from './pullRequestConnect';
import type { PullRequestContext, PullRequestPreview } from './pullRequestContext';
import { visibleText } from '../../shared/visibleText';
import { baseOf, branchState, checkRunRepository, commitMessageOf, shippedRun, textInputOf } from './pullRequestRun';

/**
 * What Open Pull Request would push and open, before anything leaves the
 * machine (docs/architecture.md, "Evolution"): the remote and whether its
 * repository is public, the branch and the base, the commit message and the
 * pull request's title and body, all redacted. It reads the agent
 * repository through the guard and GitHub's API; it pushes and creates
 * nothing.
 */
export async function previewPullRequest(ctx: PullRequestContext, branch: string): Promise<PullRequestPreview> {
  const run = shippedRun(ctx.dataDir, branch);
  const conn = await connectPullRequest(ctx);
  checkRunRepository(run, conn.repo.root);
  const state = await branchState(ctx, conn.repo, run, branch);
  const redact = (text: string): string => ctx.secrets.redact(text);
  const candorMessage = run.commit !== null ? await commitMessageOf(ctx, conn.repo, run.commit) : '';
  const pushedMessage = state.commit === run.commit ? candorMessage : await commitMessageOf(ctx, conn.repo, state.commit);
  const { title, body } = pullRequestText(textInputOf(ctx.dataDir, run, candorMessage), redact);
  const { owner, repo } = conn.remote;
  const pushedTo = await conn.gh.repository(owner, repo);
  const plan = await planPullRequest(conn.gh, { owner, repo, branch, title, body, ...baseOf(run), ...(ctx.baseRepository ? { baseRepository: ctx.baseRepository } : {}) });
  return ctx.secrets.redactDeep({
    run: run.run,
    branch,
    commit: state.commit,
    remoteUrl: shownRemoteUrl(conn.remoteUrl, ctx),
    pushRedirects: await conn.repo.pushRedirects(ctx.remote),
    repository: { owner: pushedTo.owner, repo: pushedTo.repo, public: !pushedTo.private, fork: pushedTo.fork },
    target: { owner: plan.target.owner, repo: plan.target.repo },
    base: plan.base,
    // The branch's message may be the user's or an older Candor's: its control characters are shown as marks here too.
    commitMessage: visibleText(redact(pushedMessage.trimEnd()), { keepLayout: true }),
    title,
    body,
    handOff: state.handOff,
    ...(plan.existing ? { existing: { url: plan.existing.url, number: plan.existing.number } } : {}),
  } satisfies PullRequestPreview);
}
