// The fake GitHub's answers, each built from the OpenAPI description's own
// example for that schema with the fields that matter set: so an answer
// has every field GitHub's has, and the schema check is a real one.
import { createHash } from 'node:crypto';
import { specExample } from './githubSchema';

type Json = Record<string, unknown>;

export interface FakeRepo {
  readonly owner: string;
  readonly name: string;
  readonly defaultBranch: string;
  readonly private: boolean;
  /** `owner/name` of the repository this one is a fork of. */
  readonly parent?: string;
  /** Branch name → head commit: a push adds one. */
  readonly branches: Map<string, string>;
}

export interface FakePull {
  readonly number: number;
  readonly repo: string;
  readonly headOwner: string;
  readonly headRepo: string;
  readonly branch: string;
  readonly sha: string;
  readonly base: string;
  readonly title: string;
  readonly body: string;
  state: 'open' | 'closed';
}

export interface FakeCheck {
  readonly name: string;
  readonly status: 'queued' | 'in_progress' | 'completed';
  readonly conclusion?: 'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | 'action_required';
}

export interface FakeStatus {
  readonly context: string;
  readonly state: 'pending' | 'success' | 'failure' | 'error';
}

/** Where the answers' links point: `api` for `url` fields, `html` for pages. */
export interface Links {
  readonly api: string;
  readonly html: string;
}

export function fullName(repo: FakeRepo): string {
  return `${repo.owner}/${repo.name}`;
}

/** A stable made-up id for a name. */
export function idOf(text: string): number {
  return createHash('sha256').update(text).digest().readUInt32BE(0) % 1_000_000_000;
}

export function shaOf(text: string): string {
  return createHash('sha1').update(text).digest('hex');
}

/** Every `https://api.github.com` link of an example pointed at `links.api`, every `https://github.com` one at `links.html`. */
function relink<T>(value: T, links: Links): T {
  if (typeof value === 'string') return value.replace(/^https:\/\/api\.github\.com/, links.api).replace(/^https:\/\/github\.com/, links.html) as T;
  if (Array.isArray(value)) return value.map((item: unknown) => relink(item, links)) as T;
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, relink(item, links)])) as T;
}

function user(login: string, links: Links): Json {
  const owner = specExample('full-repository-default-response').owner as Json;
  return relink({ ...owner, login, id: idOf(login), url: `https://api.github.com/users/${login}`, html_url: `https://github.com/${login}` }, links);
}

/** A `repository` (as in a fork's `parent`, or a pull request's head and base). */
function repository(repo: FakeRepo, links: Links): Json {
  const base = specExample('full-repository-default-response').parent as Json;
  const name = fullName(repo);
  return relink(
    {
      ...base,
      id: idOf(name),
      name: repo.name,
      full_name: name,
      owner: user(repo.owner, links),
      private: repo.private,
      visibility: repo.private ? 'private' : 'public',
      fork: repo.parent !== undefined,
      default_branch: repo.defaultBranch,
      url: `https://api.github.com/repos/${name}`,
      html_url: `https://github.com/${name}`,
    },
    links,
  );
}

/** `GET /repos/{owner}/{repo}`: a `full-repository`. */
export function fullRepositoryBody(repo: FakeRepo, parent: FakeRepo | undefined, links: Links): Json {
  const body: Json = { ...specExample('full-repository-default-response'), ...repository(repo, links), language: null };
  delete body.parent;
  delete body.source;
  if (parent !== undefined) body.parent = body.source = repository(parent, links);
  return relink(body, links);
}

/** `GET …/branches/{branch}`: a `branch-with-protection`. */
export function branchBody(repo: FakeRepo, branch: string, sha: string, links: Links): Json {
  const body = specExample('branch-get');
  const commit = { ...(body.commit as Json), sha, url: `https://api.github.com/repos/${fullName(repo)}/commits/${sha}` };
  return relink({ ...body, name: branch, commit }, links);
}

/** A pull request: `pull-request-simple` for the list, `pull-request` for the one created. */
export function pullBody(pull: FakePull, repos: { readonly head: FakeRepo; readonly base: FakeRepo }, full: boolean, links: Links): Json {
  const example = full ? specExample('pull-request') : ((specExample('pull-request-simple-items') as unknown as Json[])[0] as Json);
  const head = { label: `${pull.headOwner}:${pull.branch}`, ref: pull.branch, sha: pull.sha, user: user(pull.headOwner, links), repo: repository(repos.head, links) };
  const base = { label: `${repos.base.owner}:${pull.base}`, ref: pull.base, sha: repos.base.branches.get(pull.base) ?? shaOf(pull.base), user: user(repos.base.owner, links), repo: repository(repos.base, links) };
  return relink(
    {
      ...example,
      id: idOf(`${pull.repo}#${pull.number}`),
      number: pull.number,
      state: pull.state,
      title: pull.title,
      body: pull.body,
      url: `https://api.github.com/repos/${pull.repo}/pulls/${pull.number}`,
      html_url: `https://github.com/${pull.repo}/pull/${pull.number}`,
      requested_teams: [],
      head,
      base,
      ...(full ? { merged: false, mergeable: null, merged_by: null } : {}),
    },
    links,
  );
}

/** One `check-run` of a commit. */
export function checkRunBody(repo: FakeRepo, sha: string, check: FakeCheck, links: Links): Json {
  const id = idOf(`${sha}/${check.name}`);
  const completed = check.status === 'completed';
  return relink(
    {
      ...specExample('check-run'),
      id,
      name: check.name,
      head_sha: sha,
      status: check.status,
      conclusion: completed ? (check.conclusion ?? 'success') : null,
      completed_at: completed ? '2024-01-01T00:10:00Z' : null,
      url: `https://api.github.com/repos/${fullName(repo)}/check-runs/${id}`,
      html_url: `https://github.com/${fullName(repo)}/runs/${id}`,
      details_url: `https://github.com/${fullName(repo)}/runs/${id}`,
      pull_requests: [],
    },
    links,
  );
}

/** `GET …/commits/{ref}/status`: GitHub's combined state is `pending` when nothing reports. */
export function combinedStatusBody(repo: FakeRepo, sha: string, statuses: readonly FakeStatus[], links: Links): Json {
  const example = specExample('combined-commit-status');
  const template = (example.statuses as Json[])[0] as Json;
  const states = statuses.map((s) => s.state);
  const state = states.length === 0 || states.includes('pending') ? 'pending' : states.some((s) => s === 'failure' || s === 'error') ? 'failure' : 'success';
  return relink(
    {
      ...example,
      state,
      sha,
      total_count: statuses.length,
      statuses: statuses.map((s) => ({ ...template, id: idOf(`${sha}/${s.context}`), context: s.context, state: s.state, target_url: `https://ci.example.com/${s.context}` })),
      commit_url: `https://api.github.com/repos/${fullName(repo)}/commits/${sha}`,
      url: `https://api.github.com/repos/${fullName(repo)}/commits/${sha}/status`,
    },
    links,
  );
}

/** GitHub's error body. */
export function errorBody(message: string, status: number): Json {
  return { message, documentation_url: 'https://docs.github.com/rest', status: String(status) };
}

/** GitHub's 422 body. */
export function validationBody(errors: ReadonlyArray<{ readonly field?: string; readonly code: string; readonly message?: string }>): Json {
  return { message: 'Validation Failed', documentation_url: 'https://docs.github.com/rest/pulls/pulls#create-a-pull-request', errors: errors.map((e) => ({ resource: 'PullRequest', ...e })), status: '422' };
}
