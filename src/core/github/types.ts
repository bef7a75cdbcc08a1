/**
 * The GitHub port: the few REST endpoints Candor uses, in Candor's words.
 * createGitHub (client.ts) is its one adapter; nothing else of Candor sees
 * the client library (docs/architecture.md, "Layout").
 */
export interface GitHub {
  /** The API URL every request goes to, and the only one the token is sent to. */
  readonly apiUrl: string;
  /** `GET /repos/{owner}/{repo}`. */
  repository(owner: string, repo: string): Promise<RepositoryInfo>;
  /** `GET /repos/{owner}/{repo}/branches/{branch}`: false on a 404. */
  branchExists(owner: string, repo: string, branch: string): Promise<boolean>;
  /** `GET /repos/{owner}/{repo}/pulls?head=…&state=open`; `head` is `owner:branch`. */
  openPullRequests(owner: string, repo: string, head: string): Promise<PullRequestInfo[]>;
  /** `POST /repos/{owner}/{repo}/pulls`; a 422 "already exists" is GitHubError `exists`. */
  createPullRequest(owner: string, repo: string, input: NewPullRequest): Promise<PullRequestInfo>;
  /** `GET /repos/{owner}/{repo}/commits/{sha}/check-runs`, the latest run of each check, every page up to a bound. */
  checkRuns(owner: string, repo: string, sha: string): Promise<CheckRunInfo[]>;
  /** `GET /repos/{owner}/{repo}/commits/{sha}/status`. */
  combinedStatus(owner: string, repo: string, sha: string): Promise<CombinedStatusInfo>;
}

export interface RepositoryRef {
  readonly owner: string;
  readonly repo: string;
}

export interface RepositoryInfo extends RepositoryRef {
  readonly private: boolean;
  readonly fork: boolean;
  readonly defaultBranch: string;
  /** The repository's page (`https://github.com/owner/repo`). */
  readonly htmlUrl: string;
  /** What a fork was forked from. */
  readonly parent?: RepositoryRef & { readonly private: boolean; readonly defaultBranch: string; readonly htmlUrl: string };
}

export interface NewPullRequest {
  readonly title: string;
  /** `branch`, or `owner:branch` for a pull request from a fork. */
  readonly head: string;
  /** `owner/repo` of the head, when a fork has the same owner as its parent. */
  readonly headRepo?: string;
  readonly base: string;
  readonly body: string;
}

export interface PullRequestInfo {
  readonly number: number;
  /** The pull request's page. */
  readonly url: string;
  /** `owner:branch`. */
  readonly headLabel: string;
  readonly headSha: string;
  readonly base: string;
}

export interface CheckRunInfo {
  readonly name: string;
  /** `queued`, `in_progress`, `completed`, `waiting`, `requested`, `pending`. */
  readonly status: string;
  /** Set once completed: `success`, `failure`, `neutral`, `cancelled`, `skipped`, `timed_out`, `action_required`, `stale`. */
  readonly conclusion: string | null;
  readonly url: string;
}

export interface CommitStatusInfo {
  readonly context: string;
  /** `pending`, `success`, `failure`, `error`. */
  readonly state: string;
  readonly url: string;
}

export interface CombinedStatusInfo {
  /** GitHub's combined state: `pending` also when there is no status at all. */
  readonly state: string;
  readonly totalCount: number;
  readonly statuses: readonly CommitStatusInfo[];
}
