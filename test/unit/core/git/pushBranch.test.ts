import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { GIT_SPY, readSpyLog, writingCalls } from '../../../helpers/gitSpy';
import { startHttpRemote } from './helpers/httpRemote';
import { git, removeTempDirs, repoWith, snapshot, tempDir, write } from './helpers/repo';

/**
 * The push, for real: a bare repository on disk (and one behind a loopback
 * HTTP server) is the remote. Each trap is first sprung by a plain
 * `git push`, then shown not to spring under the guard.
 */

const BRANCH = 'candor/rant-01hpush';
const REF = `refs/heads/${BRANCH}`;

function bare(): string {
  const dir = tempDir('candor-remote-');
  git(dir, 'init', '-q', '--bare');
  return dir;
}

const refsOf = (repo: string): string[] => git(repo, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n').filter(Boolean).sort();

/**
 * The agent repository as a user has it after the hand-off: the evolution
 * branch, another branch, tags (one annotated on the branch's commit, which
 * `push.followTags` would send along), `push.followTags=true` in its config,
 * and pre-push and reference-transaction hooks that leave a marker file.
 */
function agentWithTraps(hooks: 'git-dir' | 'husky'): { agent: string; shipped: string; marker: string } {
  const agent = repoWith({ 'a.txt': 'a\n' });
  git(agent, 'tag', 'v1');
  git(agent, 'branch', 'feature');
  git(agent, 'checkout', '-q', '-b', BRANCH);
  write(agent, 'a.txt', 'a, fixed\n');
  git(agent, 'commit', '-q', '-am', 'fix\n\nCandor-Rant: 01hpush');
  git(agent, 'tag', '-a', '-m', 'release', 'v2');
  git(agent, 'checkout', '-q', 'main');
  git(agent, 'config', 'push.followTags', 'true');
  git(agent, 'config', 'push.recurseSubmodules', 'on-demand');
  const marker = path.join(tempDir('candor-marker-'), 'hook-ran');
  const hookDir = hooks === 'husky' ? path.join(agent, '.husky') : path.join(agent, '.git', 'hooks');
  if (hooks === 'husky') git(agent, 'config', 'core.hooksPath', '.husky');
  for (const hook of ['pre-push', 'reference-transaction']) {
    write(path.dirname(hookDir), path.join(path.basename(hookDir), hook), `#!/bin/sh\necho ${hook} >> '${marker}'\n`);
    fs.chmodSync(path.join(hookDir, hook), 0o755);
  }
  return { agent, shipped: git(agent, 'rev-parse', REF).trim(), marker };
}

describe('read-only git guard: the push of an evolution branch', function () {
  this.timeout(60_000);
  after(removeTempDirs);

  for (const hooks of ['git-dir', 'husky'] as const) {
    it(`lands the one branch in the bare remote: no tags, no other ref, no hook (${hooks === 'husky' ? '.husky/pre-push' : '.git/hooks/pre-push'})`, async () => {
      const { agent, shipped, marker } = agentWithTraps(hooks);
      // The trap: a plain push of the branch runs the hook and sends the tag along.
      const trapRemote = bare();
      git(agent, 'remote', 'add', 'trap', trapRemote);
      git(agent, 'push', '-q', 'trap', `${REF}:${REF}`);
      assert.ok(fs.readFileSync(marker, 'utf8').includes('pre-push'), 'trap: plain git push runs the pre-push hook');
      assert.ok(refsOf(trapRemote).some((ref) => ref.startsWith('refs/tags/v2 ')), 'trap: plain git push follows the annotated tag');
      fs.rmSync(marker);

      const remote = bare();
      git(agent, 'remote', 'add', 'origin', remote);
      const before = snapshot(agent);
      const guard = await ReadOnlyGit.open(agent);
      assert.deepEqual(await guard.pushBranch('origin', BRANCH), { remote: 'origin', branch: BRANCH, commit: shipped });

      assert.deepEqual(refsOf(remote), [`${REF} ${shipped}`], 'the branch and nothing else');
      assert.equal(git(remote, 'cat-file', '-t', shipped).trim(), 'commit');
      assert.ok(!fs.existsSync(marker), `a hook ran: ${fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8') : ''}`);
      const after = snapshot(agent);
      assert.equal(after.head, before.head);
      assert.equal(after.index, before.index);
      assert.equal(after.worktree, before.worktree);
      assert.deepEqual(after.refs.split('\n').filter(Boolean).sort(), [...before.refs.split('\n').filter(Boolean), `refs/remotes/origin/${BRANCH} ${shipped}`].sort(), 'locally only the remote-tracking ref moves');
    });
  }

  it('a push the remote would have to force is rejected with git\'s reason, never forced: the remote\'s branch is unchanged', async () => {
    const { agent } = agentWithTraps('git-dir');
    const remote = bare();
    git(agent, 'remote', 'add', 'origin', remote);
    // Someone else pushed another commit to the same branch first.
    const other = tempDir('candor-other-');
    git(other, 'clone', '-q', agent, '.');
    git(other, 'checkout', '-q', '-b', BRANCH, 'origin/main');
    write(other, 'b.txt', 'theirs\n');
    git(other, 'add', '-A');
    git(other, 'commit', '-q', '-m', 'theirs');
    git(other, 'push', '-q', remote, `${REF}:${REF}`);
    const theirs = git(remote, 'rev-parse', REF).trim();

    const guard = await ReadOnlyGit.open(agent);
    await assert.rejects(guard.pushBranch('origin', BRANCH), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'rejected');
      assert.match((err as Error).message, /^origin rejected the push of candor\/rant-01hpush: (fetch first|non-fast-forward)\. .*never forced/);
      return true;
    });
    assert.equal(git(remote, 'rev-parse', REF).trim(), theirs, 'the remote keeps its commit');
    // With the remote's commit merged beneath its own, the same push goes through: only the history stood in the way.
    git(agent, 'fetch', '-q', remote, REF);
    git(agent, 'checkout', '-q', BRANCH);
    git(agent, 'merge', '-q', '--no-edit', 'FETCH_HEAD');
    git(agent, 'checkout', '-q', 'main');
    const merged = git(agent, 'rev-parse', REF).trim();
    assert.equal((await guard.pushBranch('origin', BRANCH)).commit, merged);
    assert.equal(git(remote, 'rev-parse', REF).trim(), merged);
  });

  it('a server that refuses the update (a hook of the remote) is rejected with its reason', async () => {
    const { agent } = agentWithTraps('git-dir');
    const remote = bare();
    write(remote, 'hooks/pre-receive', '#!/bin/sh\necho "protected branches only" >&2\nexit 1\n');
    fs.chmodSync(path.join(remote, 'hooks', 'pre-receive'), 0o755);
    git(agent, 'remote', 'add', 'origin', remote);
    const guard = await ReadOnlyGit.open(agent);
    await assert.rejects(guard.pushBranch('origin', BRANCH), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'rejected');
      assert.match((err as Error).message, /^origin rejected the push of candor\/rant-01hpush: pre-receive hook declined \(the remote says: protected branches only\)\. Candor's push is never forced\.$/);
      return true;
    });
    assert.deepEqual(refsOf(remote), []);
  });

  it('refuses a branch the repository lacks, a remote it does not configure, and names that could be paths, URLs or options; nothing is pushed', async () => {
    const { agent } = agentWithTraps('git-dir');
    const remote = bare();
    git(agent, 'remote', 'add', 'origin', remote);
    // A folder named like the remote: without the configured-remote check, git would push into it.
    fs.mkdirSync(path.join(agent, 'upstream'));
    git(path.join(agent, 'upstream'), 'init', '-q', '--bare');
    const guard = await ReadOnlyGit.open(agent);
    await assert.rejects(guard.pushBranch('origin', 'candor/rant-missing'), { kind: 'no-branch' });
    await assert.rejects(guard.pushBranch('upstream', BRANCH), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'no-remote');
      assert.match((err as Error).message, /no remote named "upstream"/);
      return true;
    });
    for (const name of ['main', 'refs/heads/candor/x', '+candor/x', 'candor/x:candor/y', '-f']) {
      await assert.rejects(guard.pushBranch('origin', name), { kind: 'invalid' }, name);
    }
    for (const name of [remote, '../x', 'https://example.invalid/r.git', '--mirror', '-f', '.git', '', 'a b']) {
      await assert.rejects(guard.pushBranch(name, BRANCH), { kind: 'invalid' }, JSON.stringify(name));
    }
    assert.deepEqual(refsOf(remote), []);
    assert.deepEqual(refsOf(path.join(agent, 'upstream')), []);
  });

  it('runs in exactly the spy\'s one shape of a push: no force, no credential override', async () => {
    const { agent } = agentWithTraps('git-dir');
    git(agent, 'remote', 'add', 'origin', bare());
    const log = path.join(tempDir('candor-spylog-'), 'calls.log');
    const saved = { log: process.env.SPY_GIT_LOG, real: process.env.SPY_REAL_GIT };
    process.env.SPY_GIT_LOG = log;
    process.env.SPY_REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    try {
      const guard = await ReadOnlyGit.open(agent, { gitBinary: GIT_SPY });
      await guard.pushBranch('origin', BRANCH);
      assert.equal(await guard.remoteUrl('origin'), git(agent, 'config', 'remote.origin.url').trim());
    } finally {
      for (const [key, value] of [['SPY_GIT_LOG', saved.log], ['SPY_REAL_GIT', saved.real]] as const) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    const calls = readSpyLog(log);
    const pushes = calls.filter((call) => call.verb === 'push');
    assert.equal(pushes.length, 1);
    assert.deepEqual(writingCalls(calls), []);
    const push = pushes[0];
    assert.deepEqual(push?.args, ['--no-follow-tags', '--recurse-submodules=no', 'origin', `${REF}:${REF}`]);
    assert.deepEqual(push?.config.filter((pair) => pair.startsWith('push.') || pair.startsWith('core.hooksPath')).map((pair) => pair.replace(/=\/.*/, '=<dir>')), ['push.followTags=false', 'push.recurseSubmodules=no', 'core.hooksPath=<dir>']);
    assert.ok(!push?.config.some((pair) => pair.startsWith('credential')), `a credential override: ${push?.config.join(' ')}`);
    assert.ok(!push?.argv.some((word) => word.startsWith('+') || word === '--force' || word === '-f'));
  });

  describe('over HTTP, signed in by the user\'s own credential helper', () => {
    const TOKEN = 'ghp_Candor0push0token0abcdefghijklmnopqr';
    // A home of its own: a helper of the machine's global config (`store`, say) must not keep the test's password.
    const saved = { GITHUB_TOKEN: process.env.GITHUB_TOKEN, HOME: process.env.HOME, XDG_CONFIG_HOME: process.env.XDG_CONFIG_HOME };
    before(() => {
      process.env.GITHUB_TOKEN = TOKEN;
      process.env.HOME = tempDir('candor-home-');
      delete process.env.XDG_CONFIG_HOME;
    });
    after(() => {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    });

    it('the helper the repository configures answers the server; the API token is in none of git\'s environment', async () => {
      const root = tempDir('candor-http-');
      git(root, 'init', '-q', '--bare', 'agent.git');
      const server = await startHttpRemote(root, { user: 'alice', password: 'helper-password' });
      try {
        const { agent, shipped } = agentWithTraps('git-dir');
        git(agent, 'remote', 'add', 'origin', server.url('agent'));
        const envDump = path.join(tempDir('candor-helper-'), 'env');
        const helper = `!f() { env > '${envDump}'; test "$1" = get && echo username=alice && echo password=helper-password; }; f`;
        // The trap: without a helper the push cannot sign in, and says how to fix it.
        const unsigned = await ReadOnlyGit.open(agent);
        await assert.rejects(unsigned.pushBranch('origin', BRANCH), (err: unknown) => {
          assert.equal((err as { kind?: string }).kind, 'failed');
          assert.match((err as Error).message, /^the push could not sign in to origin \(fatal: could not read Username.*\): Candor pushes with your own git credentials.*credential helper/);
          return true;
        });
        git(agent, 'config', 'credential.helper', helper);

        const guard = await ReadOnlyGit.open(agent, { secrets: [TOKEN] });
        assert.equal(await guard.remoteUrl('origin'), server.url('agent'));
        assert.equal((await guard.pushBranch('origin', BRANCH)).commit, shipped);

        assert.deepEqual(refsOf(path.join(root, 'agent.git')), [`${REF} ${shipped}`]);
        assert.ok(server.seen.includes('alice'), `the server saw ${server.seen.join(', ')}`);
        const env = fs.readFileSync(envDump, 'utf8');
        assert.ok(env.includes('PATH='), 'the helper dumped its environment');
        assert.ok(!env.includes(TOKEN), 'the API token reached the credential helper');
        assert.ok(!env.includes('GITHUB_TOKEN'));
      } finally {
        await server.close();
      }
    });
  });
});
