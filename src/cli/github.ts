import { noUnsavedBuffers } from '../core/git';
import type { CiResult } from '../core/github/ciState';
import { isPullRequestRefusal, openPullRequestRuns, readCiCulprit, readOpenPullRequestsCi, type PullRequestContext } from '../core/evolution';
import type { CiCulpritResult } from '../core/github/ciHistory';
import type { SecretSet } from '../core/redact';
import type { CliStream } from './output';

/** What fixes a missing or refused token from the command line. */
export const CLI_AUTH_FIX = 'Set GITHUB_TOKEN to a GitHub token with the "repo" scope (a fine-grained token: contents and pull requests, read and write).';

/**
 * The pull-request context of the CLI: the token is GITHUB_TOKEN, read when
 * the flow asks and sent to the API URL only; "dirty" is git's view only
 * (no editor buffers).
 */
export function cliPullRequestContext(input: CiInput): PullRequestContext {
  return {
    dataDir: input.dataDir,
    repository: input.repository,
    remote: input.remote,
    ...(input.apiUrl !== undefined ? { apiUrl: input.apiUrl } : {}),
    token: () => Promise.resolve(process.env.GITHUB_TOKEN?.trim() || undefined),
    unsaved: noUnsavedBuffers,
    secrets: input.secrets,
    onWait: (ms, why) => input.out.line(`GitHub asks to wait: ${Math.ceil(ms / 1000)} s (${why})`),
    authFix: CLI_AUTH_FIX,
  };
}

/** A CI verdict in one line, for people. */
export function describeCi(ci: CiResult): string {
  const count = `${ci.checks.length} check${ci.checks.length === 1 ? '' : 's'}`;
  const link = ci.url !== '' ? ` — ${ci.url}` : '';
  switch (ci.state) {
    case 'pending': {
      const running = ci.checks.filter((c) => c.conclusion === null).map((c) => `${c.name}: ${c.status}`);
      return `pending${ci.checks.length > 0 ? ` (${count}; ${running.join(', ')})` : ' (no check has reported yet)'}${link}`;
    }
    case 'passed':
      return `passed (${count})${link}`;
    case 'failed': {
      const failing = ci.checks.filter((c) => c.conclusion !== null && !['success', 'neutral', 'skipped'].includes(c.conclusion)).map((c) => `${c.name}: ${c.conclusion ?? ''}`);
      return `failed (${failing.join(', ')})${link}`;
    }
    case 'none':
      return 'none: 5 minutes after the push, no check run and no commit status reported on the commit (the repository runs no CI for it)';
    case 'timeout':
      return `timeout: CI was still running when Candor stopped following it (candor.evolution.ciTimeoutMinutes)${link}`;
  }
}

/**
 * At the start of `candor evolve`, with GITHUB_TOKEN set: one read of the
 * CI of each earlier run's pull request whose CI had not finished (recorded
 * as `ci` update lines and printed), then CI's culprit on the default
 * branch, returned for the run to roll back. Without GITHUB_TOKEN it reads
 * nothing (and says so when pull requests wait); a refusal (a token GitHub
 * does not accept, a remote that is not GitHub) is printed, and the run goes
 * on without CI.
 */
export async function ciAtStart(input: CiInput): Promise<CiCulpritResult | undefined> {
  const waiting = openPullRequestRuns(input.dataDir).length;
  if (!process.env.GITHUB_TOKEN?.trim()) {
    if (waiting > 0) input.out.line(`${waiting} pull request(s) of earlier runs wait for their CI: set GITHUB_TOKEN (and --github-api for GitHub Enterprise) to read it`);
    return undefined;
  }
  const ctx = cliPullRequestContext(input);
  try {
    for (const read of waiting > 0 ? await readOpenPullRequestsCi(ctx) : []) {
      input.out.line(read.ci ? `CI of pull request #${read.pr.number} (run ${read.run}): ${describeCi(read.ci)}` : `CI of pull request #${read.pr.number} (run ${read.run}) not read: ${read.error ?? 'unknown'}`);
    }
    const culprit = await readCiCulprit(ctx);
    input.out.line(culprit.culprit === null ? `CI of the default branch: ${culprit.reason}` : `CI of the default branch: ${culprit.culprit.sha.slice(0, 12)} (Candor-Rant: ${culprit.culprit.rantId}) failed CI after its parent passed`);
    return culprit;
  } catch (err) {
    if (!isPullRequestRefusal(err)) throw err;
    input.out.line(`CI not read: ${input.secrets.redact(err.message)}`);
    return undefined;
  }
}

export interface CiInput {
  readonly dataDir: string;
  readonly repository: string;
  readonly remote: string;
  readonly apiUrl?: string;
  readonly secrets: SecretSet;
  readonly out: CliStream;
}
