import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readOnlyReason } from '../../../../src/core/git/dirty';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { unsavedInWorktree, type UnsavedBufferSource } from '../../../../src/core/git/unsaved';
import { removeTempDirs, repoWith, tempDir, write } from './helpers/repo';

const buffers = (...files: string[]): UnsavedBufferSource => ({ unsavedFiles: () => files });

describe('unsaved buffers make the workspace dirty', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  it('clean git plus one unsaved buffer is dirty, with that file and where "unsaved"', async () => {
    const repo = repoWith({ 'src/app.ts': 'x\n', '.gitignore': '*.log\n' });
    const guard = await ReadOnlyGit.open(repo);
    assert.deepEqual(await guard.dirtyState(buffers()), { dirty: false, reasons: [] });

    const state = await guard.dirtyState(buffers(path.join(repo, 'src', 'app.ts')));
    assert.deepEqual(state, { dirty: true, reasons: [{ file: 'src/app.ts', kind: 'unsaved', where: 'unsaved' }] });
    assert.equal(readOnlyReason(state), 'dirty working tree — read-only cycle: 1 unsaved (src/app.ts)');
  });

  it('ignores buffers outside the work tree and inside .git (a commit message being edited)', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    const outside = tempDir();
    write(outside, 'other.txt', 'o\n');
    const guard = await ReadOnlyGit.open(repo);
    const state = await guard.dirtyState(buffers(path.join(outside, 'other.txt'), path.join(repo, '.git', 'COMMIT_EDITMSG'), 'relative/path.txt', repo));
    assert.deepEqual(state, { dirty: false, reasons: [] });
  });

  it('an unsaved buffer of an existing git-ignored file does not count; one of a new file does', async () => {
    const repo = repoWith({ 'a.txt': 'a\n', '.gitignore': '*.log\nbuild/\n' });
    write(repo, 'debug.log', 'x\n');
    write(repo, 'build/out.js', 'x\n');
    const guard = await ReadOnlyGit.open(repo);
    const state = await guard.dirtyState(buffers(path.join(repo, 'debug.log'), path.join(repo, 'build', 'out.js'), path.join(repo, 'not-yet-saved.ts')));
    assert.deepEqual(state.reasons, [{ file: 'not-yet-saved.ts', kind: 'unsaved', where: 'unsaved' }]);
  });

  it('matches a buffer opened through a symlinked folder to the real work tree', () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    const links = tempDir();
    fs.symlinkSync(repo, path.join(links, 'via-link'));
    assert.deepEqual(unsavedInWorktree([path.join(links, 'via-link', 'a.txt')], repo, path.join(repo, '.git')), ['a.txt']);
  });
});
