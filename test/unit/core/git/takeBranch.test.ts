import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { noUnsavedBuffers } from '../../../../src/core/git/unsaved';
import { git, removeTempDirs, repoWith, snapshot, tempDir, write } from './helpers/repo';

const BRANCH = 'candor/rant-01hx4kqz';

/** A workspace and a scratch clone holding one commit on BRANCH. */
function workspaceAndScratch(): { workspace: string; scratch: string; shipped: string } {
  const workspace = repoWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
  const scratch = tempDir('candor-scratch-');
  git(scratch, 'clone', '-q', workspace, '.');
  git(scratch, 'checkout', '-q', '-b', BRANCH);
  write(scratch, 'a.txt', 'a, fixed\n');
  git(scratch, 'commit', '-q', '-am', `fix\n\nCandor-Rant: 01hx4kqz`);
  return { workspace, scratch, shipped: git(scratch, 'rev-parse', 'HEAD').trim() };
}

describe('read-only git guard: the branch hand-off', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  it('on a clean workspace: the branch appears; HEAD, index and work tree are untouched; no gc, no FETCH_HEAD', async () => {
    const { workspace, scratch, shipped } = workspaceAndScratch();
    const before = snapshot(workspace);
    const reflog = (name: string): string => fs.readFileSync(path.join(workspace, '.git', 'logs', name), 'utf8');
    const reflogsBefore = [reflog('HEAD'), reflog('refs/heads/main')];
    const guard = await ReadOnlyGit.open(workspace);

    assert.deepEqual(await guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers }), { branch: BRANCH, commit: shipped });

    const after = snapshot(workspace);
    assert.equal(git(workspace, 'rev-parse', `refs/heads/${BRANCH}`).trim(), shipped);
    assert.equal(after.head, before.head);
    assert.equal(after.index, before.index);
    assert.equal(after.worktree, before.worktree);
    assert.equal(after.stashList, before.stashList);
    assert.equal(git(workspace, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'main');
    assert.deepEqual(after.refs.split('\n').filter(Boolean).sort(), [...before.refs.split('\n').filter(Boolean), `refs/heads/${BRANCH} ${shipped}`].sort());
    assert.deepEqual([reflog('HEAD'), reflog('refs/heads/main')], reflogsBefore, 'existing reflogs untouched');
    assert.ok(!fs.existsSync(path.join(workspace, '.git', 'FETCH_HEAD')));
    assert.ok(!fs.existsSync(path.join(workspace, '.git', 'gc.log')));
    assert.equal(git(workspace, 'tag').trim(), '', 'no tags followed');
  });

  it('is refused (dirty) when the work tree has changes, and nothing is fetched', async () => {
    const { workspace, scratch } = workspaceAndScratch();
    write(workspace, 'untracked.txt', 'u\n');
    const guard = await ReadOnlyGit.open(workspace);
    await assert.rejects(guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers }), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'dirty');
      assert.match((err as Error).message, /dirty working tree — read-only cycle: 1 untracked \(untracked\.txt\)/);
      return true;
    });
    assert.equal(await guard.revParse(`refs/heads/${BRANCH}`), undefined);
  });

  it('is refused (dirty) when the only change is an unsaved buffer', async () => {
    const { workspace, scratch } = workspaceAndScratch();
    const guard = await ReadOnlyGit.open(workspace);
    const unsaved = { unsavedFiles: () => [path.join(workspace, 'b.txt')] };
    await assert.rejects(guard.takeBranch(scratch, BRANCH, { unsaved }), { kind: 'dirty' });
    assert.equal(await guard.revParse(`refs/heads/${BRANCH}`), undefined);
  });

  it('is refused (exists) when the branch is already there, which is left as it was', async () => {
    const { workspace, scratch } = workspaceAndScratch();
    git(workspace, 'branch', BRANCH);
    const mine = git(workspace, 'rev-parse', BRANCH).trim();
    const guard = await ReadOnlyGit.open(workspace);
    await assert.rejects(guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers }), { kind: 'exists' });
    assert.equal(git(workspace, 'rev-parse', BRANCH).trim(), mine);
  });

  it('refuses names outside candor/ and sources that are not absolute folders (invalid)', async () => {
    const { workspace, scratch } = workspaceAndScratch();
    const guard = await ReadOnlyGit.open(workspace);
    for (const name of ['main', 'candor/../main', '-f', 'candor/x y', '+candor/x']) {
      await assert.rejects(guard.takeBranch(scratch, name, { unsaved: noUnsavedBuffers }), { kind: 'invalid' }, name);
    }
    await assert.rejects(guard.takeBranch('relative/scratch', BRANCH, { unsaved: noUnsavedBuffers }), { kind: 'invalid' });
    await assert.rejects(guard.takeBranch('--upload-pack=touch /tmp/pwned', BRANCH, { unsaved: noUnsavedBuffers }), { kind: 'invalid' });
    await assert.rejects(guard.takeBranch(path.join(scratch, 'missing'), BRANCH, { unsaved: noUnsavedBuffers }), { kind: 'invalid' });
  });

  it('fails (failed) when the scratch clone lacks the branch', async () => {
    const { workspace, scratch } = workspaceAndScratch();
    const guard = await ReadOnlyGit.open(workspace);
    await assert.rejects(guard.takeBranch(scratch, 'candor/rant-nothere', { unsaved: noUnsavedBuffers }), { kind: 'failed' });
  });
});
