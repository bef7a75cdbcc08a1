import * as assert from 'node:assert/strict';
import { isKindError } from '../../../../src/core/kindError';
import { GitHubError } from '../../../../src/core/github/errors';
import { checkApiUrl, isGitHubHost, parseGitHubRemote, requireApiUrl, resolveApiUrl } from '../../../../src/core/github/remote';

const apiUrlOf = (host: string, configured?: string): string | undefined => {
  const resolved = resolveApiUrl(host, configured);
  return 'apiUrl' in resolved ? resolved.apiUrl : undefined;
};

describe('GitHub remotes: which repository a remote URL names', () => {
  it('reads https, scp-like ssh and ssh:// URLs, with or without .git', () => {
    const alice = { host: 'github.com', owner: 'alice', repo: 'agent' };
    for (const url of [
      'https://github.com/alice/agent.git',
      'https://github.com/alice/agent',
      'https://github.com/alice/agent/',
      'http://www.github.com/alice/agent.git',
      'git@github.com:alice/agent.git',
      'git@github.com:alice/agent',
      'ssh://git@github.com/alice/agent.git',
      'ssh://git@ssh.github.com:443/alice/agent.git',
      'git+ssh://git@github.com/alice/agent.git',
      'git://github.com/alice/agent.git',
      '  https://GitHub.com/alice/agent.git\n',
    ]) {
      assert.deepEqual(parseGitHubRemote(url), alice, url);
    }
  });

  it('keeps the host of a GitHub Enterprise remote, and a repository name with dots', () => {
    assert.deepEqual(parseGitHubRemote('git@ghe.example.com:team/my.agent.git'), { host: 'ghe.example.com', owner: 'team', repo: 'my.agent' });
    assert.deepEqual(parseGitHubRemote('https://ghe.example.com:8443/team/agent'), { host: 'ghe.example.com', owner: 'team', repo: 'agent' });
  });

  it('drops a user and password in the URL: only host, owner and repo come back', () => {
    const parsed = parseGitHubRemote('https://x-access-token:ghp_secret0secret0secret@github.com/alice/agent.git');
    assert.deepEqual(parsed, { host: 'github.com', owner: 'alice', repo: 'agent' });
    assert.ok(!JSON.stringify(parsed).includes('ghp_secret'));
  });

  it('names no repository for a local path, file://, a subgroup path or a bad name', () => {
    for (const url of [
      '/srv/git/agent.git',
      '../agent',
      'file:///srv/git/agent.git',
      'C:\\repos\\agent',
      'C:/repos/agent',
      'https://gitlab.com/group/sub/agent.git',
      'https://github.com/alice',
      'https://github.com/alice/..',
      'https://github.com/-alice/agent',
      'https://github.com/alice/agent?x=1',
      'ftp://github.com/alice/agent',
      '',
    ]) {
      assert.equal(parseGitHubRemote(url), undefined, url);
    }
  });

  it('knows github.com by its names', () => {
    assert.equal(isGitHubHost('github.com'), true);
    assert.equal(isGitHubHost('SSH.GitHub.com'), true);
    assert.equal(isGitHubHost('github.com.evil.example'), false);
    assert.equal(isGitHubHost('ghe.example.com'), false);
  });
});

describe('GitHub API URL: where the token may go', () => {
  it('is api.github.com for github.com, and nothing for another host without the setting', () => {
    assert.equal(apiUrlOf('github.com'), 'https://api.github.com');
    assert.equal(apiUrlOf('ghe.example.com'), undefined);
    const reason = resolveApiUrl('ghe.example.com');
    assert.ok('reason' in reason);
    assert.match(reason.reason, /candor\.github\.apiUrl/);
    assert.match(reason.reason, /https:\/\/ghe\.example\.com\/api\/v3/);
  });

  it('is the setting when it is set, without a trailing slash', () => {
    assert.equal(apiUrlOf('ghe.example.com', 'https://ghe.example.com/api/v3/'), 'https://ghe.example.com/api/v3');
    assert.equal(apiUrlOf('github.com', 'http://127.0.0.1:4010'), 'http://127.0.0.1:4010');
    assert.equal(apiUrlOf('github.com', '  '), 'https://api.github.com', 'a blank setting is no setting');
  });

  it('refuses http off this machine, a URL with a password, and what is no URL', () => {
    assert.match(reasonOf(checkApiUrl('http://ghe.example.com/api/v3')), /must use https/);
    const withPassword = reasonOf(checkApiUrl('https://bob:hunter2hunter2@ghe.example.com/api/v3'));
    assert.match(withPassword, /user or password/);
    assert.ok(!withPassword.includes('hunter2'), 'the reason does not repeat the password');
    assert.match(reasonOf(checkApiUrl('not a url')), /not a URL/);
    assert.match(reasonOf(checkApiUrl('https://ghe.example.com/api/v3?token=1')), /query/);
  });

  it('requireApiUrl throws a not-github GitHubError with the reason', () => {
    assert.throws(() => requireApiUrl('gitlab.com'), (err) => isKindError(err, GitHubError, 'not-github') && /gitlab\.com/.test(err.message));
    assert.equal(requireApiUrl('github.com'), 'https://api.github.com');
  });
});

function reasonOf(result: { apiUrl: string } | { reason: string }): string {
  assert.ok('reason' in result, `expected a refusal, got ${JSON.stringify(result)}`);
  return result.reason;
}
