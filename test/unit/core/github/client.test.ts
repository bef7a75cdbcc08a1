import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isKindError } from '../../../../src/core/kindError';
import { createGitHub } from '../../../../src/core/github/client';
import { GitHubError } from '../../../../src/core/github/errors';
import { followCi } from '../../../../src/core/github/ciFollow';
import { openPullRequest } from '../../../../src/core/github/pullRequest';
import { FakeGitHub } from '../../../helpers/fakeGitHub';
import { TOKEN, useFakeGitHub } from './setup';

const BRANCH = 'candor/rant-01abc';

describe('GitHub client: the token goes to the API URL and nowhere else', () => {
  let other: FakeGitHub;
  beforeEach(async () => {
    other = await FakeGitHub.start({ token: TOKEN });
  });
  afterEach(async () => {
    await other.close();
  });

  describe('with every link in the answers pointing at another host', () => {
    const gh = useFakeGitHub();
    beforeEach(() => {
      gh.fake.state.links = { api: other.apiUrl, html: `${other.origin}/html` };
    });

    it('opens a pull request and follows CI with the token on every request to the API, and none to the other host', async () => {
      gh.fake.addRepo({ owner: 'alice', name: 'agent', branches: ['dev'] });
      const sha = gh.fake.push('alice/agent', BRANCH);
      gh.fake.setChecks(sha, [{ name: 'test', status: 'in_progress' }], [{ name: 'test', status: 'completed', conclusion: 'success' }]);
      const client = gh.client();
      const pr = await openPullRequest(client, { owner: 'alice', repo: 'agent', branch: BRANCH, base: 'dev', title: 'T', body: 'B' });
      const ci = await followCi(client, { owner: 'alice', repo: 'agent', sha, timeoutMs: 3_600_000, pushedAt: gh.time.now, clock: gh.time.clock, sleep: gh.time.sleep });
      assert.ok(pr.url.startsWith(other.origin), 'the answers did point at the other host');
      assert.ok(ci.url.startsWith(other.origin));
      assert.equal(ci.state, 'passed');
      assert.ok(gh.fake.requests.length >= 6);
      for (const request of gh.fake.requests) assert.equal(request.authorization, `Bearer ${TOKEN}`, `${request.method} ${request.path}`);
      assert.deepEqual(other.requests, [], 'nothing went to the host the answers linked to');
    });

    it('does not follow a redirect to another host, with the token or without', async () => {
      gh.fake.addRepo({ owner: 'alice', name: 'agent' });
      gh.fake.fail('repos/get', { kind: 'redirect', status: 301, location: `${other.apiUrl}/repos/alice/agent` });
      await assert.rejects(gh.client().repository('alice', 'agent'), (err) => isKindError(err, GitHubError, 'http') && /outside the GitHub API URL/.test(err.message) && !err.message.includes(TOKEN));
      assert.deepEqual(other.requests, []);
      assert.equal(gh.fake.requests.length, 1);
    });
  });

  describe('on the API itself', () => {
    const gh = useFakeGitHub();

    it('follows a redirect inside the API URL (a renamed repository), with the token', async () => {
      gh.fake.addRepo({ owner: 'alice', name: 'renamed' });
      gh.fake.fail('repos/get', { kind: 'redirect', status: 301, location: `${gh.fake.apiUrl}/repos/alice/renamed` });
      const repository = await gh.client().repository('alice', 'agent');
      assert.equal(repository.repo, 'renamed');
      assert.deepEqual(gh.fake.requests.map((r) => [r.path, r.authorization]), [
        ['/repos/alice/agent', `Bearer ${TOKEN}`],
        ['/repos/alice/renamed', `Bearer ${TOKEN}`],
      ]);
    });

    it('an expired token: auth, naming the command and GITHUB_TOKEN, never the token', async () => {
      gh.fake.addRepo({ owner: 'alice', name: 'agent' });
      const stale = 'ghp_stale0token0that0github0no0longer0knows';
      await assert.rejects(gh.client({ token: stale }).repository('alice', 'agent'), (err) => {
        assert.ok(isKindError(err, GitHubError, 'auth'));
        assert.equal(err.status, 401);
        assert.match(err.message, /Candor: Set GitHub Token/);
        assert.match(err.message, /GITHUB_TOKEN/);
        assert.ok(!err.message.includes(stale) && !String(err.stack).includes(stale));
        return true;
      });
      await assert.rejects(gh.client({ token: stale, authFix: 'Sign in to GitHub in VS Code.' }).repository('alice', 'agent'), (err) => isKindError(err, GitHubError, 'auth') && err.message.endsWith('Sign in to GitHub in VS Code.'));
      gh.fake.fail('repos/get', { kind: 'unauthorized' });
      await assert.rejects(gh.client().repository('alice', 'agent'), (err) => isKindError(err, GitHubError, 'auth') && /expired or revoked/.test(err.message));
    });

    it('a missing token or one with a line break is refused before anything is sent', async () => {
      assert.throws(() => gh.client({ token: '  ' }), (err) => isKindError(err, GitHubError, 'auth') && /No GitHub token/.test(err.message));
      const broken = `${TOKEN}\nX-Injected: yes`;
      assert.throws(() => gh.client({ token: broken, authFix: 'Set it again.' }), (err) => isKindError(err, GitHubError, 'auth') && !err.message.includes(TOKEN) && /Set it again\./.test(err.message));
      assert.deepEqual(gh.fake.requests, []);
    });

    it('a 403 for a missing scope names the scope the request needs', async () => {
      gh.fake.addRepo({ owner: 'alice', name: 'agent' });
      gh.fake.fail('repos/get', { kind: 'missing-scope', accepted: 'repo', has: 'read:org, gist' });
      await assert.rejects(gh.client().repository('alice', 'agent'), (err) => {
        assert.ok(isKindError(err, GitHubError, 'scope'), String(err));
        assert.match(err.message, /lacks the scope this needs: "repo" \(it has "read:org", "gist"\)/);
        assert.match(err.message, /Candor: Set GitHub Token/);
        return true;
      });
    });

    it('a repository the token cannot see is not-found, with the likely cause', async () => {
      await assert.rejects(gh.client().repository('alice', 'private-one'), (err) => isKindError(err, GitHubError, 'not-found') && /cannot see it/.test(err.message));
    });

    it('an answer that echoes the token has it redacted from the message', async () => {
      gh.fake.fail('repos/get', { kind: 'status', status: 502, message: `upstream said: Bearer ${TOKEN} and ${TOKEN}` });
      await assert.rejects(gh.client().repository('alice', 'agent'), (err) => isKindError(err, GitHubError, 'http') && err.status === 502 && !err.message.includes(TOKEN) && /\[redacted\]/.test(err.message));
    });

    it('a request GitHub does not answer is cut after the timeout, as network', async () => {
      gh.fake.fail('repos/get', { kind: 'hang' });
      const started = Date.now();
      await assert.rejects(gh.client({ timeoutMs: 300 }).repository('alice', 'agent'), (err) => isKindError(err, GitHubError, 'network') && /did not answer within/.test(err.message));
      assert.ok(Date.now() - started < 5_000);
    });
  });

  describe('under a path, as GitHub Enterprise serves it', () => {
    const gh = useFakeGitHub({ basePath: '/api/v3' });

    it('sends every request below the path, and refuses a redirect out of it on the same host', async () => {
      gh.fake.addRepo({ owner: 'team', name: 'agent' });
      assert.equal((await gh.client().repository('team', 'agent')).repo, 'agent');
      assert.ok(gh.fake.apiUrl.endsWith('/api/v3'));
      gh.fake.fail('repos/get', { kind: 'redirect', status: 302, location: `${gh.fake.origin}/login/oauth` });
      await assert.rejects(gh.client().repository('team', 'agent'), (err) => isKindError(err, GitHubError, 'http') && /outside the GitHub API URL/.test(err.message));
      assert.deepEqual(gh.fake.requests.map((r) => r.path), ['/repos/team/agent', '/repos/team/agent']);
    });
  });

  it('a host nothing listens on is network, naming the host', async () => {
    const server = http.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as AddressInfo).port;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const client = createGitHub({ apiUrl: `http://127.0.0.1:${port}`, token: TOKEN, userAgent: 'candor-test' });
    await assert.rejects(client.repository('alice', 'agent'), (err) => isKindError(err, GitHubError, 'network') && err.message.includes(`127.0.0.1:${port}`) && /ECONNREFUSED/.test(err.message));
  });

  it('an API URL that would send the token in the clear is refused', () => {
    assert.throws(() => createGitHub({ apiUrl: 'http://ghe.example.com/api/v3', token: TOKEN, userAgent: 'candor-test' }), (err) => isKindError(err, GitHubError, 'not-github') && /https/.test(err.message));
  });
});
