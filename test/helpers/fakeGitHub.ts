// A loopback GitHub: the few REST endpoints Candor uses, with switches for
// the faults GitHub answers with. Every request it receives and every answer
// it gives is checked against GitHub's OpenAPI description (githubSchema.ts);
// what does not fit is kept in `violations` and answered with a 500, so a
// test that meets one fails. Every request is recorded, its Authorization
// header too, so that a test can say where the token went.
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { faultAnswer, type Answer, type Fault } from './githubFaults';
import { fullName, shaOf, type FakeCheck, type FakePull, type FakeRepo, type FakeStatus, type Links } from './githubFixtures';
import { matchOperation, requestProblems, responseProblems, type OperationId } from './githubSchema';
import { route } from './githubRoutes';

export type { Fault } from './githubFaults';
export type { FakeCheck, FakePull, FakeRepo, FakeStatus } from './githubFixtures';

export interface RecordedRequest {
  readonly method: string;
  /** The path below the API's base path, with its query. */
  readonly path: string;
  readonly operation: OperationId | undefined;
  readonly authorization: string | undefined;
  readonly body: unknown;
}

export interface FakeGitHubOptions {
  /** The one token the fake accepts. */
  readonly token: string;
  /** The API's path on the server, as GitHub Enterprise's `/api/v3`. Default: none. */
  readonly basePath?: string;
  /** Where the `url` and `html_url` fields of the answers point. Default: this server. */
  readonly links?: Links;
}

/** The fake's state, as the routes see it. */
export interface FakeState {
  readonly repos: Map<string, FakeRepo>;
  readonly pulls: FakePull[];
  /** Where the answers' links point: a test may point them at another host. */
  links: Links;
  /** Check runs of a commit: one step per read, the last one stays. */
  readonly checks: Map<string, { steps: FakeCheck[][]; read: number }>;
  readonly statuses: Map<string, { steps: FakeStatus[][]; read: number }>;
}

export class FakeGitHub {
  readonly requests: RecordedRequest[] = [];
  readonly violations: string[] = [];
  readonly state: FakeState;
  readonly #faults: Array<{ operation: OperationId | '*'; fault: Fault; times: number }> = [];
  readonly #basePath: string;
  readonly #token: string;

  private constructor(
    readonly server: http.Server,
    readonly origin: string,
    options: FakeGitHubOptions,
  ) {
    this.#basePath = (options.basePath ?? '').replace(/\/+$/, '');
    this.#token = options.token;
    this.state = { repos: new Map(), pulls: [], links: options.links ?? { api: this.apiUrl, html: `${origin}/html` }, checks: new Map(), statuses: new Map() };
  }

  static async start(options: FakeGitHubOptions): Promise<FakeGitHub> {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const fake = new FakeGitHub(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, options);
    server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => void fake.handle(req, res));
    return fake;
  }

  /** What createGitHub's `apiUrl` is. */
  get apiUrl(): string {
    return `${this.origin}${this.#basePath}`;
  }

  addRepo(repo: { owner: string; name: string; defaultBranch?: string; private?: boolean; parent?: string; branches?: string[] }): FakeRepo {
    const defaultBranch = repo.defaultBranch ?? 'main';
    const branches = new Map([defaultBranch, ...(repo.branches ?? [])].map((b) => [b, shaOf(`${repo.owner}/${repo.name}@${b}`)]));
    const added: FakeRepo = { owner: repo.owner, name: repo.name, defaultBranch, private: repo.private ?? false, parent: repo.parent, branches };
    this.state.repos.set(fullName(added).toLowerCase(), added);
    return added;
  }

  /** A push: the branch now exists on `repo` at `sha`. */
  push(repo: string, branch: string, sha = shaOf(`${repo}@${branch}@${Date.now()}`)): string {
    const found = this.state.repos.get(repo.toLowerCase());
    if (!found) throw new Error(`the fake has no repository ${repo}`);
    found.branches.set(branch, sha);
    return sha;
  }

  /** An open pull request made by someone else before Candor looked. */
  addPull(repo: string, pull: { headOwner: string; headRepo?: string; branch: string; base: string; title?: string }): FakePull {
    const added: FakePull = { number: this.state.pulls.length + 1, repo, headRepo: pull.headRepo ?? repo, sha: shaOf(pull.branch), title: pull.title ?? 'an earlier one', body: '', state: 'open', ...pull };
    this.state.pulls.push(added);
    return added;
  }

  /** The check runs of `sha`, read after read: each read moves one step on, the last step stays. */
  setChecks(sha: string, ...steps: FakeCheck[][]): void {
    this.state.checks.set(sha, { steps, read: 0 });
  }

  setStatuses(sha: string, ...steps: FakeStatus[][]): void {
    this.state.statuses.set(sha, { steps, read: 0 });
  }

  /** Answer the next `times` requests for `operation` (or any) with `fault`. */
  fail(operation: OperationId | '*', fault: Fault, times = 1): void {
    this.#faults.push({ operation, fault, times });
  }

  /** The requests for one operation. */
  calls(operation: OperationId): RecordedRequest[] {
    return this.requests.filter((r) => r.operation === operation);
  }

  /** Throws when a request or an answer did not fit GitHub's description. */
  assertValid(): void {
    if (this.violations.length > 0) throw new Error(`the fake GitHub saw what GitHub's OpenAPI description does not allow:\n${this.violations.join('\n')}`);
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.origin);
    const text = await readBody(req);
    const body = text === '' ? undefined : (JSON.parse(text) as unknown);
    const below = url.pathname.startsWith(`${this.#basePath}/`) ? url.pathname.slice(this.#basePath.length) : undefined;
    const matched = below === undefined ? undefined : matchOperation(req.method ?? 'GET', below);
    const authorization = req.headers.authorization;
    this.requests.push({ method: req.method ?? '', path: `${below ?? url.pathname}${url.search}`, operation: matched?.op.id, authorization, body });
    if (!matched) {
      this.violations.push(`no operation of the fake is ${req.method} ${url.pathname}`);
      return send(res, { status: 404, body: { message: 'Not Found' } });
    }
    const query = Object.fromEntries(url.searchParams);
    const problems = requestProblems(matched.op, matched.params, query, body);
    if (problems.length > 0) return this.refuse(res, problems);
    const fault = this.takeFault(matched.op.id);
    if (fault?.kind === 'hang') return;
    const answer = (fault && faultAnswer(fault)) ?? this.authorized(authorization) ?? route(this.state, matched.op.id, matched.params, query, body);
    const sent = fault?.kind === 'tamper' ? { ...answer, body: fault.edit(answer.body) } : answer;
    const redirect = sent.status >= 300 && sent.status < 400 && sent.headers?.location !== undefined;
    const wrong = redirect ? [] : responseProblems(matched.op, sent.status, sent.body);
    if (wrong.length > 0) return this.refuse(res, wrong);
    send(res, sent);
  }

  /** 401 unless the request carries the token, as GitHub answers. */
  private authorized(authorization: string | undefined): Answer | undefined {
    if (authorization === undefined) return { status: 401, body: { message: 'Requires authentication', documentation_url: 'https://docs.github.com/rest', status: '401' } };
    if (authorization !== `Bearer ${this.#token}` && authorization !== `token ${this.#token}`) return { status: 401, body: { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' } };
    return undefined;
  }

  private takeFault(operation: OperationId): Fault | undefined {
    const index = this.#faults.findIndex((f) => f.times > 0 && (f.operation === operation || f.operation === '*'));
    const found = this.#faults[index];
    if (found === undefined) return undefined;
    found.times--;
    return found.fault;
  }

  private refuse(res: http.ServerResponse, problems: string[]): void {
    this.violations.push(...problems);
    send(res, { status: 500, body: { message: `fake GitHub: does not fit GitHub's OpenAPI description: ${problems.join('; ')}` } });
  }
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** Sends an answer with the headers GitHub sends on every one. */
function send(res: http.ServerResponse, answer: Answer): void {
  const headers: Record<string, string> = { 'x-ratelimit-limit': '5000', 'x-ratelimit-remaining': '4999', 'x-ratelimit-reset': '4102444800', 'x-github-media-type': 'github.v3', ...answer.headers };
  if (answer.body !== undefined) headers['content-type'] = 'application/json; charset=utf-8';
  res.writeHead(answer.status, headers);
  res.end(answer.body === undefined ? undefined : JSON.stringify(answer.body));
}
