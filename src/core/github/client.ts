import { Octokit } from '@octokit/rest';
import { redact } from '../redact';
import { DEFAULT_AUTH_FIX, GitHubError, errorForAnswer, type FailedAnswer } from './errors';
import { guardedFetch, type Fetch } from './guardedFetch';
import { DEFAULT_MAX_WAITS, DEFAULT_MAX_WAIT_MS, rateLimitOf, withRateLimitWaits, type OnWait, type RateLimitPolicy, type Sleep } from './rateLimit';
import { checkApiUrl } from './remote';
import type { CheckRunInfo, CombinedStatusInfo, GitHub, NewPullRequest, PullRequestInfo, RepositoryInfo } from './types';
import { abortableSleep } from '../sleep';
import { isKindError } from '../kindError';

export interface GitHubOptions {
  /** Where the API is (`https://api.github.com`, `https://ghe.example.com/api/v3`); the token goes there and nowhere else. */
  readonly apiUrl: string;
  /** A secret: never logged, never in a message. */
  readonly token: string;
  readonly userAgent: string;
  readonly fetch?: Fetch;
  /** One request, answer included. Default 30 s. */
  readonly timeoutMs?: number;
  /** Told before each rate-limit wait. */
  readonly onWait?: OnWait;
  readonly sleep?: Sleep;
  readonly clock?: () => Date;
  /** Rate-limit waits for one request. Default 3. */
  readonly maxWaits?: number;
  /** The longest rate-limit wait. Default 10 minutes. */
  readonly maxWaitMs?: number;
  /** What fixes a missing or refused token, in the caller's words (default: the command, and GITHUB_TOKEN for the CLI). */
  readonly authFix?: string;
}

const DEFAULT_TIMEOUT_MS = 30_000;
/** Pages of 100 check runs read at most for one commit. */
const MAX_CHECK_PAGES = 5;
const PER_PAGE = 100;

/** Octokit's logger would print deprecation notices to the console; Candor's messages say what matters. */
const SILENT = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/**
 * The GitHub port over `@octokit/rest` (the only file that imports it).
 * Octokit gets no token: guardedFetch adds it to requests under `apiUrl`
 * only. Every call waits out rate limits within bounds and fails with a
 * GitHubError whose message names the fix.
 */
export function createGitHub(options: GitHubOptions): GitHub {
  const apiUrl = checkedApiUrl(options.apiUrl);
  const authFix = options.authFix ?? DEFAULT_AUTH_FIX;
  const token = checkedToken(options.token, authFix);
  const octokit = new Octokit({
    baseUrl: apiUrl,
    userAgent: options.userAgent,
    log: SILENT,
    headers: { 'x-github-api-version': '2022-11-28' },
    request: { fetch: guardedFetch({ apiUrl, token, fetch: options.fetch, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS }) },
  });
  const clock = options.clock ?? (() => new Date());
  const policy: RateLimitPolicy = {
    maxWaits: options.maxWaits ?? DEFAULT_MAX_WAITS,
    maxWaitMs: options.maxWaitMs ?? DEFAULT_MAX_WAIT_MS,
    onWait: options.onWait,
    sleep: options.sleep ?? abortableSleep,
    clock,
  };
  const call = async <T>(what: string, run: () => Promise<T>): Promise<T> => {
    try {
      return await withRateLimitWaits(what, run, (err) => limitOf(err, clock()), policy);
    } catch (err) {
      throw toGitHubError(err, what, token, authFix);
    }
  };
  return endpoints(octokit, apiUrl, call);
}

type Call = <T>(what: string, run: () => Promise<T>) => Promise<T>;

function endpoints(octokit: Octokit, apiUrl: string, call: Call): GitHub {
  return {
    apiUrl,
    repository: (owner, repo) => call(`read ${owner}/${repo}`, async () => repositoryInfo((await octokit.rest.repos.get({ owner, repo })).data)),
    branchExists: async (owner, repo, branch) => {
      try {
        await call(`read the branch ${branch} of ${owner}/${repo}`, () => octokit.rest.repos.getBranch({ owner, repo, branch }));
        return true;
      } catch (err) {
        if (isKindError(err, GitHubError, 'not-found')) return false;
        throw err;
      }
    },
    openPullRequests: (owner, repo, head) =>
      call(`list the open pull requests of ${owner}/${repo}`, async () => (await octokit.rest.pulls.list({ owner, repo, head, state: 'open', per_page: PER_PAGE })).data.map(pullRequestInfo)),
    createPullRequest: (owner, repo, input: NewPullRequest) =>
      call(`open a pull request on ${owner}/${repo}`, async () => {
        const { title, head, base, body, headRepo } = input;
        return pullRequestInfo((await octokit.rest.pulls.create({ owner, repo, title, head, base, body, ...(headRepo ? { head_repo: headRepo } : {}) })).data);
      }),
    checkRuns: (owner, repo, sha) => call(`read the check runs of ${sha.slice(0, 12)} on ${owner}/${repo}`, () => allCheckRuns(octokit, owner, repo, sha)),
    combinedStatus: (owner, repo, sha) =>
      call(`read the commit status of ${sha.slice(0, 12)} on ${owner}/${repo}`, async () => {
        const { data } = await octokit.rest.repos.getCombinedStatusForRef({ owner, repo, ref: sha, per_page: PER_PAGE });
        return { state: data.state, totalCount: data.total_count, statuses: data.statuses.map((s) => ({ context: s.context, state: s.state, url: s.target_url ?? '' })) } satisfies CombinedStatusInfo;
      }),
  };
}

async function allCheckRuns(octokit: Octokit, owner: string, repo: string, sha: string): Promise<CheckRunInfo[]> {
  const runs: CheckRunInfo[] = [];
  for (let page = 1; page <= MAX_CHECK_PAGES; page++) {
    const { data } = await octokit.rest.checks.listForRef({ owner, repo, ref: sha, filter: 'latest', per_page: PER_PAGE, page });
    for (const run of data.check_runs) runs.push({ name: run.name, status: run.status, conclusion: run.conclusion ?? null, url: run.html_url ?? run.details_url ?? '' });
    if (data.check_runs.length < PER_PAGE || runs.length >= data.total_count) break;
  }
  return runs;
}

type OctokitRepository = Awaited<ReturnType<Octokit['rest']['repos']['get']>>['data'];
type OctokitPull = Awaited<ReturnType<Octokit['rest']['pulls']['list']>>['data'][number];

function repositoryInfo(data: OctokitRepository): RepositoryInfo {
  const parent = data.parent;
  return {
    owner: data.owner.login,
    repo: data.name,
    private: data.private,
    fork: data.fork,
    defaultBranch: data.default_branch,
    htmlUrl: data.html_url,
    ...(parent ? { parent: { owner: parent.owner.login, repo: parent.name, private: parent.private, defaultBranch: parent.default_branch, htmlUrl: parent.html_url } } : {}),
  };
}

function pullRequestInfo(data: Pick<OctokitPull, 'number' | 'html_url' | 'head' | 'base'>): PullRequestInfo {
  return { number: data.number, url: data.html_url, headLabel: data.head.label, headSha: data.head.sha, base: data.base.ref };
}

function checkedApiUrl(apiUrl: string): string {
  const checked = checkApiUrl(apiUrl);
  if ('reason' in checked) throw new GitHubError('not-github', checked.reason);
  return checked.apiUrl;
}

/** A token is printable ASCII without blanks; anything else would be refused by the HTTP layer, whose message could quote it. */
function checkedToken(token: string, authFix: string): string {
  const trimmed = token.trim();
  if (trimmed === '') throw new GitHubError('auth', `No GitHub token. ${authFix}`);
  if (!/^[\x21-\x7e]+$/.test(trimmed)) throw new GitHubError('auth', `The GitHub token holds a character no token has (a blank, a line break or a control character). ${authFix}`);
  return trimmed;
}

/** Octokit's HttpError, by shape (the class is a dependency of a dependency). */
interface HttpErrorShape {
  readonly status: number;
  readonly response?: { readonly headers: Record<string, string | number | undefined>; readonly data: unknown };
}

function answerOf(err: unknown): FailedAnswer | undefined {
  if (!(err instanceof Error) || err.name !== 'HttpError') return undefined;
  const { status, response } = err as Error & HttpErrorShape;
  if (response === undefined) return undefined;
  const headers = Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name.toLowerCase(), value === undefined ? undefined : String(value)]));
  return { status, headers, message: messageOf(response.data) };
}

/** GitHub's `message`, and the `message` of each of its `errors` (where "A pull request already exists" is). */
function messageOf(data: unknown): string {
  if (typeof data === 'string') return data;
  if (data === null || typeof data !== 'object') return '';
  const record = data as { message?: unknown; errors?: unknown };
  const parts = typeof record.message === 'string' ? [record.message] : [];
  if (Array.isArray(record.errors)) {
    for (const item of record.errors) {
      if (typeof item === 'string') parts.push(item);
      else if (item !== null && typeof item === 'object' && typeof (item as { message?: unknown }).message === 'string') parts.push((item as { message: string }).message);
    }
  }
  return parts.join(': ');
}

function limitOf(err: unknown, now: Date): ReturnType<typeof rateLimitOf> {
  const answer = answerOf(err);
  return answer === undefined ? undefined : rateLimitOf(answer, now);
}

function toGitHubError(err: unknown, what: string, token: string, authFix: string): unknown {
  if (isKindError(err, GitHubError)) return err;
  // guardedFetch's own errors come back wrapped by Octokit's fetch wrapper.
  if (err instanceof Error && isKindError(err.cause, GitHubError)) return err.cause;
  const answer = answerOf(err);
  if (answer !== undefined) return errorForAnswer(answer, { what, token, authFix });
  if (err instanceof Error && err.name === 'AbortError') return err;
  const text = err instanceof Error ? err.message : String(err);
  return new GitHubError('network', redact(`Could not ${what} on GitHub (${text}).`, [token]), undefined, { cause: err });
}
