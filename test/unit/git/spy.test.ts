import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ALLOWED_SUBCOMMANDS } from '../../../src/core/git/allowList';
import { ReadOnlyGit } from '../../../src/core/git/guard';
import { noUnsavedBuffers } from '../../../src/core/git/unsaved';
import { runEveryRead } from './helpers/everyRead';
import { git, removeTempDirs, repoWith, tempDir, write } from './helpers/repo';

/**
 * The git spy (test/fixtures/git-spy/git) logs every call with its working
 * directory. Every read, every tool and the hand-off run through it; no call
 * in the workspace repository may use a forbidden subcommand.
 */
const SHIM = path.resolve(__dirname, '../../fixtures/git-spy/git');
const FORBIDDEN = ['stash', 'reset', 'clean', 'checkout', 'switch', 'restore', 'rebase', 'merge', 'commit', 'push', 'pull', 'gc', 'update-index', 'add', 'rm', 'mv'];

interface SpiedCall {
  readonly cwd: string;
  readonly args: string;
  readonly subcommand: string;
}

/** The subcommand: the first word after git's global options (`-c k=v`, `-C dir`, `--no-…`). */
function subcommandOf(args: string): string {
  const words = args.split(' ');
  for (let i = 0; i < words.length; i++) {
    const word = words[i] ?? '';
    if (word === '-c' || word === '-C' || word === '--git-dir' || word === '--work-tree') {
      i++;
      continue;
    }
    if (word.startsWith('-')) continue;
    return word;
  }
  return '';
}

function readSpyLog(file: string): SpiedCall[] {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const tab = line.indexOf('\t');
      const args = line.slice(tab + 1);
      return { cwd: line.slice(0, tab), args, subcommand: subcommandOf(args) };
    });
}

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
    assert.ok(fs.statSync(SHIM).mode & 0o111, 'executable');
  });

  it('logs every read, tool and the hand-off; all in the workspace are allowed, none forbidden', async () => {
    const bin = tempDir('candor-spybin-');
    const spy = path.join(bin, 'git');
    fs.copyFileSync(SHIM, spy);
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
    const inWorkspace = calls.filter((call) => call.cwd === workspace || call.cwd.startsWith(`${workspace}${path.sep}`));
    assert.ok(inWorkspace.length >= 20, `only ${inWorkspace.length} calls logged`);
    const offending = inWorkspace.filter((call) => FORBIDDEN.includes(call.subcommand));
    assert.deepEqual(offending, []);
    for (const call of inWorkspace) {
      assert.ok((ALLOWED_SUBCOMMANDS as readonly string[]).includes(call.subcommand), `not allowed: ${call.args}`);
      for (const setting of ['-c core.fsmonitor=false', '-c log.showSignature=false', '--no-pager']) {
        assert.ok(call.args.includes(setting), `without ${setting}: ${call.args}`);
      }
    }
    const seen = new Set(inWorkspace.map((call) => call.subcommand));
    for (const expected of ['status', 'diff-files', 'diff', 'log', 'show', 'rev-parse', 'ls-files', 'ls-remote', 'config', 'fetch']) {
      assert.ok(seen.has(expected), `expected a ${expected} call; saw ${[...seen].join(', ')}`);
    }
    const fetches = inWorkspace.filter((call) => call.subcommand === 'fetch');
    assert.equal(fetches.length, 1, 'one hand-off fetch; the refused one never ran');
    assert.match(fetches[0]?.args ?? '', /-c gc\.auto=0 -c maintenance\.auto=false .*-c core\.alternateRefsCommand= -c credential\.helper= -c core\.hooksPath=\/\S+ fetch --no-tags .* refs\/heads\/candor\/rant-01spy:refs\/heads\/candor\/rant-01spy$/);
    assert.ok(!(fetches[0]?.args ?? '').includes('--update-head-ok'));
  });
});
