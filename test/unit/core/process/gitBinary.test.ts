import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveGitBinary } from '../../../../src/core/process/gitBinary';
import { openInChild } from '../git/helpers/child';
import { removeTempDirs, repoWith, tempDir } from '../git/helpers/repo';

/**
 * Git is resolved once to an absolute path, never from a workspace folder:
 * a `git` planted in the repository must not run, whether the repository's
 * folder is on PATH or PATH holds a relative entry (`.`, or an empty one).
 */

const REAL_GIT = resolveGitBinary() ?? '/usr/bin/git';
const REAL_DIR = path.dirname(REAL_GIT);

/** A repository with an executable `git` at its top that leaves a marker, then runs the real one. */
function repoWithPlantedGit(): { repo: string; marker: string } {
  const repo = repoWith({ 'a.txt': 'a\n' });
  const marker = path.join(tempDir('candor-marker-'), 'planted-git-ran');
  fs.writeFileSync(path.join(repo, 'git'), `#!/bin/sh\necho ran > '${marker}'\nexec '${REAL_GIT}' "$@"\n`, { mode: 0o755 });
  return { repo, marker };
}

/** What the operating system's own lookup runs for a bare `git` (the trap's control). */
function bareGitRuns(pathValue: string, cwd: string, marker: string): boolean {
  fs.rmSync(marker, { force: true });
  execFileSync('git', ['--version'], { cwd, env: { PATH: pathValue }, stdio: 'ignore' });
  const ran = fs.existsSync(marker);
  fs.rmSync(marker, { force: true });
  return ran;
}

describe('git binary: resolved to an absolute path, never from a workspace folder', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  it('skips a git planted in the repository folder placed first on PATH', () => {
    const { repo, marker } = repoWithPlantedGit();
    const pathValue = `${repo}:${REAL_DIR}`;
    assert.ok(bareGitRuns(pathValue, '/', marker), 'trap: a bare git runs the planted one');
    assert.equal(resolveGitBinary({ env: { PATH: pathValue } }), path.join(repo, 'git'), 'control: without the rule it would be chosen');
    assert.equal(resolveGitBinary({ env: { PATH: pathValue }, untrusted: [repo] }), path.join(REAL_DIR, 'git'));
  });

  it('skips relative PATH entries (`.`, empty, `bin`), which a bare lookup resolves against the working folder', () => {
    const { repo, marker } = repoWithPlantedGit();
    for (const pathValue of [`.:${REAL_DIR}`, `:${REAL_DIR}`]) {
      assert.ok(bareGitRuns(pathValue, repo, marker), `trap: with PATH=${pathValue} a bare git in the repository runs the planted one`);
      assert.equal(resolveGitBinary({ env: { PATH: pathValue } }), path.join(REAL_DIR, 'git'), pathValue);
    }
    assert.equal(resolveGitBinary({ env: { PATH: 'bin' } }), undefined);
  });

  it('skips an untrusted folder reached through a symlinked PATH entry', () => {
    const { repo } = repoWithPlantedGit();
    const link = path.join(tempDir('candor-link-'), 'tools');
    fs.symlinkSync(repo, link);
    assert.equal(resolveGitBinary({ env: { PATH: `${link}:${REAL_DIR}` }, untrusted: [repo] }), path.join(REAL_DIR, 'git'));
  });

  it('on Windows: Path with `;`, git.exe, and the repository folder and `.` skipped', () => {
    const repo = tempDir('candor-winrepo-');
    const bin = tempDir('candor-winbin-');
    fs.writeFileSync(path.join(repo, 'git.exe'), 'planted');
    fs.writeFileSync(path.join(bin, 'git.exe'), 'real');
    const env = { Path: `${repo};.;${bin}` };
    assert.equal(resolveGitBinary({ env, platform: 'win32' }), path.join(repo, 'git.exe'), 'control');
    assert.equal(resolveGitBinary({ env, platform: 'win32', untrusted: [repo] }), path.join(bin, 'git.exe'));
  });

  it('the guard, in a process whose PATH starts with the repository and `.`, never runs the planted git', () => {
    const { repo, marker } = repoWithPlantedGit();
    const pathValue = `${repo}:.:${REAL_DIR}`;
    assert.ok(bareGitRuns(pathValue, repo, marker), 'trap');
    const result = openInChild(repo, pathValue, repo);
    assert.ok('root' in result, JSON.stringify(result));
    assert.equal(result.root, repo);
    assert.equal(fs.existsSync(marker), false);
  });
});
