import { isGitGuardError, openWorkspaceRepo, type ReadOnlyGit } from '../git';
import { createGitHub } from '../github/client';
import { DEFAULT_AUTH_FIX, GitHubError } from '../github/errors';
import { parseGitHubRemote, requireApiUrl, type GitHubRemote } from '../github/remote';
import type { GitHub } from '../github/types';
import { EvolutionError } from './errors';
import type { PullRequestContext } from './pullRequestContext';
import { PullRequestError } from './pullRequestErrors';

/** Sent with every GitHub request. */
const USER_AGENT = 'Candor (candor.openPullRequest)';

/** The agent repository, its remote on GitHub, and a client for that GitHub. */
export interface PullRequestConnection {
  /** Opened after the token was read, so no git process of it can see the token. */
  readonly repo: ReadOnlyGit;
  /** As git expands it (`insteadOf` rules applied); may hold a user and password: show it through `shownRemoteUrl`. */
  readonly remoteUrl: string;
  readonly remote: GitHubRemote;
  readonly apiUrl: string;
  readonly gh: GitHub;
}

/**
 * Reads the remote's URL through the guard (never connecting), finds its
 * GitHub and API URL, asks the caller for the token, and adds the token to
 * the redaction set before anything else happens. The token goes to the
 * GitHub client and nowhere else: the repository is opened again with it
 * among the values no git process may see.
 */
export async function connectPullRequest(ctx: PullRequestContext): Promise<PullRequestConnection> {
  const probe = await openAgentRepository(ctx);
  const remoteUrl = await readRemoteUrl(probe, ctx);
  const remote = parseGitHubRemote(remoteUrl);
  if (remote === undefined) {
    throw new GitHubError(
      'not-github',
      `The remote "${ctx.remote}" of ${probe.root} is ${shownRemoteUrl(remoteUrl, ctx)}, which is not a GitHub repository (https://github.com/OWNER/REPO or git@github.com:OWNER/REPO). Candor opens pull requests on GitHub (and GitHub Enterprise) only; name a GitHub remote with candor.evolution.remote (--remote for the CLI).`,
    );
  }
  const apiUrl = requireApiUrl(remote.host, ctx.apiUrl);
  const authFix = ctx.authFix ?? DEFAULT_AUTH_FIX;
  const token = (await ctx.token(apiUrl, remote.host))?.trim();
  if (token === undefined || token === '') throw new GitHubError('auth', `No GitHub token for ${apiUrl}. ${authFix}`);
  ctx.secrets.add(token, 'the GitHub token');
  const repo = await openAgentRepository(ctx);
  const gh = createGitHub({ apiUrl, token, userAgent: USER_AGENT, authFix, ...(ctx.onWait ? { onWait: ctx.onWait } : {}) });
  return { repo, remoteUrl, remote, apiUrl, gh };
}

/** The agent repository through the guard, with every secret known so far kept out of git's environment. */
async function openAgentRepository(ctx: PullRequestContext): Promise<ReadOnlyGit> {
  const secrets = [...(ctx.guardOptions?.secrets ?? []), ...ctx.secrets.values()];
  try {
    return await openWorkspaceRepo(ctx.repository, { ...ctx.guardOptions, secrets });
  } catch (err) {
    if (isGitGuardError(err, 'not-a-repo')) throw new EvolutionError('refused', `${ctx.repository} (candor.evolution.repository, --repository for the CLI) is not a git repository: ${err.message}`);
    throw err;
  }
}

async function readRemoteUrl(repo: ReadOnlyGit, ctx: PullRequestContext): Promise<string> {
  try {
    return await repo.remoteUrl(ctx.remote);
  } catch (err) {
    if (isGitGuardError(err, 'no-remote')) {
      throw new PullRequestError(
        'no-remote',
        `The agent repository ${repo.root} has no remote named "${ctx.remote}": add it (git remote add ${ctx.remote} https://github.com/OWNER/REPO.git), or name the remote to push to with candor.evolution.remote (--remote for the CLI).`,
      );
    }
    throw err;
  }
}

/**
 * A remote URL as it may be shown: an http(s) URL without its user and
 * password (a token is often put there), then redacted.
 */
export function shownRemoteUrl(url: string, ctx: Pick<PullRequestContext, 'secrets'>): string {
  let shown = url;
  if (/^https?:\/\//i.test(url)) {
    try {
      const parsed = new URL(url);
      parsed.username = '';
      parsed.password = '';
      shown = parsed.toString();
    } catch {
      shown = url.replace(/\/\/[^/@]*@/, '//');
    }
  }
  return ctx.secrets.redact(shown);
}
