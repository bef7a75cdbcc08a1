import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ALLOWED_SUBCOMMANDS } from '../../../../src/core/git/allowList';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { noUnsavedBuffers } from '../../../../src/core/git/unsaved';
import { GIT_SPY, callsIn, readSpyLog, writingCalls } from '../../../helpers/gitSpy';
import { runEveryRead } from './helpers/everyRead';
import { git, removeTempDirs, repoWith, tempDir, write } from './helpers/repo';

/**
 * The git spy (test/fixtures/git-spy/git) logs every call with its working
 * directory. Every read, every tool and the hand-off run through it; no call
 * in the workspace repository may write but the hand-off's fetch, in its one
 * shape (test/helpers/gitSpy.ts judges each call).
 */
describe('git spy: the guard never runs a forbidden subcommand', function () {
  this.timeout(60_000);
  const saved = { log: process.env.SPY_GIT_LOG, real: process.env.SPY_REAL_GIT };
  after(() => {
    for (const [key, value] of [['SPY_GIT_LOG', saved.log], ['SPY_REAL_GIT', saved.real]] as const) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    removeTempDirs();
  });

  it('the shim is an executable script that logs and passes through', () => {
    assert.ok(fs.statSync(GIT_SPY).mode & 0o111, 'executable');
  });

  it('logs the folder and every argument apart, spaces, tabs and newlines kept, and passes the exit code through', () => {
    const repo = repoWith({ 'a.txt': 'a\n', 'sub dir/b.txt': 'b\n' });
    const log = path.join(tempDir('candor-spylog-'), 'calls.log');
    const env = { ...process.env, SPY_GIT_LOG: log, SPY_REAL_GIT: execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim() };
    const argv = ['-c', 'x.y=a b', '-C', 'sub dir', 'log', '--format=%H\t%s', '-n', '1', 'a\nb'];
    let code = 0;
    try {
      execFileSync(GIT_SPY, argv, { cwd: repo, env, stdio: 'ignore' });
    } catch (err) {
      code = (err as { status?: number }).status ?? -1;
    }
    assert.equal(code, 128, 'the real git ran and refused the revision "a\\nb"');
    execFileSync(GIT_SPY, ['rev-parse', 'HEAD'], { cwd: repo, env, stdio: 'ignore' });
    const [first, second] = readSpyLog(log);
    assert.deepEqual(first, { cwd: repo, dir: path.join(repo, 'sub dir'), argv, config: ['x.y=a b'], verb: 'log', args: ['--format=%H\t%s', '-n', '1', 'a\nb'] });
    assert.equal(second?.verb, 'rev-parse');
  });

  it('logs every read, tool and the hand-off; all in the workspace are allowed, none forbidden', async () => {
    const bin = tempDir('candor-spybin-');
    const spy = path.join(bin, 'git');
    fs.copyFileSync(GIT_SPY, spy);
    fs.chmodSync(spy, 0o755);
    const log = path.join(tempDir('candor-spylog-'), 'calls.log');
    process.env.SPY_GIT_LOG = log;
    process.env.SPY_REAL_GIT = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();

    // A workspace with a submodule, mid-merge, with every kind of change.
    const sub = repoWith({ 's.txt': 's\n' });
    const workspace = repoWith({ 'a.txt': 'a\n', 'c.txt': 'base\n', '.gitignore': '*.log\n' });
    git(workspace, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', sub, 'sub');
    git(workspace, 'commit', '-q', '-m', 'sub');
    const scratch = tempDir('candor-scratch-');
    git(scratch, 'clone', '-q', workspace, '.');
    git(scratch, 'checkout', '-q', '-b', 'candor/rant-01spy');
    write(scratch, 'a.txt', 'fixed\n');
    git(scratch, 'commit', '-q', '-am', 'fix\n\nCandor-Rant: 01spy');

    const guard = await ReadOnlyGit.open(workspace, { gitBinary: spy });
    await guard.takeBranch(scratch, 'candor/rant-01spy', { unsaved: noUnsavedBuffers });
    write(workspace, 'a.txt', 'dirty\n');
    write(workspace, 'new.txt', 'n\n');
    write(workspace, 'debug.log', 'ignored\n');
    write(workspace, 'sub/s.txt', 'changed\n');
    await runEveryRead(guard, { unsavedFiles: () => [path.join(workspace, 'c.txt')] }, ['a.txt']);
    await assert.rejects(guard.takeBranch(scratch, 'candor/rant-01spy2', { unsaved: noUnsavedBuffers }), { kind: 'dirty' });

    const calls = readSpyLog(log);
    const inWorkspace = callsIn(calls, workspace);
    assert.ok(inWorkspace.length >= 20, `only ${inWorkspace.length} calls logged`);
    assert.deepEqual(writingCalls(inWorkspace), []);
    for (const call of inWorkspace) {
      const args = call.argv.join(' ');
      assert.ok((ALLOWED_SUBCOMMANDS as readonly string[]).includes(call.verb), `not allowed: ${args}`);
      for (const setting of ['-c core.fsmonitor=false', '-c log.showSignature=false']) {
        assert.ok(args.includes(setting), `without ${setting}: ${args}`);
      }
      // A blob's bytes come through simple-git's showBuffer, which puts nothing between the -c pairs and `show`;
      // git pages only to a terminal, and simple-git's stdout is a pipe.
      if (!args.includes('^{blob}')) assert.ok(args.includes('--no-pager'), `without --no-pager: ${args}`);
    }
    assert.ok(inWorkspace.some((call) => call.argv.join(' ').includes('^{blob}')), 'the blob read ran, and was judged above');
    const seen = new Set(inWorkspace.map((call) => call.verb));
    for (const expected of ['status', 'diff-files', 'diff', 'log', 'show', 'rev-parse', 'ls-files', 'ls-remote', 'config', 'fetch']) {
      assert.ok(seen.has(expected), `expected a ${expected} call; saw ${[...seen].join(', ')}`);
    }
    const fetches = inWorkspace.filter((call) => call.verb === 'fetch').map((call) => call.argv.join(' '));
    assert.equal(fetches.length, 1, 'one hand-off fetch; the refused one never ran');
    assert.match(fetches[0] ?? '', /-c gc\.auto=0 -c maintenance\.auto=false .*-c core\.alternateRefsCommand= -c credential\.helper= -c core\.hooksPath=\/\S+ fetch --no-tags .* refs\/heads\/candor\/rant-01spy:refs\/heads\/candor\/rant-01spy$/);
    assert.ok(!(fetches[0] ?? '').includes('--update-head-ok'));
  });
});
