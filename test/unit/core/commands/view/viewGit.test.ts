import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadOnlyGit } from '../../../../../src/core/git/guard';
import { initRepo } from '../../git/helpers/repo';
import { git, overlay, removeTempDirs, repoWith, statusPaths, viewOf, write } from './helpers';

/** The view's own repository: HEAD's tree, made by Candor, showing the workspace's changes and the overlays. */
describe('workspace view: its git repository', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  const base = (): string =>
    repoWith({
      'a.txt': 'alpha\n',
      'src/b.ts': 'b\n',
      'src/c.ts': 'c\n',
      'gone.txt': 'to delete\n',
      'staged-gone.txt': 'to git rm\n',
      'old-name.txt': 'to rename\n',
      'image.png': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0xff, 0xfe, 0x80]),
      'tool.sh': '#!/bin/sh\n',
      'a-b/x.txt': 'sorting: a-b sorts before a/ and a.txt\n',
      'a/y.txt': 'y\n',
    });

  /** Every kind of change git status reports. */
  const changeEverything = (repo: string): void => {
    write(repo, 'a.txt', 'alpha, edited\n');
    fs.rmSync(path.join(repo, 'gone.txt'));
    git(repo, 'rm', '-q', 'staged-gone.txt');
    git(repo, 'mv', 'old-name.txt', 'new-name.txt');
    write(repo, 'image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3, 0xff]));
    fs.chmodSync(path.join(repo, 'tool.sh'), 0o755);
    write(repo, 'staged-new.txt', 'added to the index\n');
    git(repo, 'add', 'staged-new.txt');
    write(repo, 'src/c.ts', 'c staged\n');
    git(repo, 'add', 'src/c.ts');
    write(repo, 'src/c.ts', 'c staged, then edited again\n');
    write(repo, 'untracked/deep/file.txt', 'u\n');
  };

  it("HEAD's tree is the workspace's; status shows exactly its changes plus the overlays; fsck finds every object", async () => {
    const repo = base();
    changeEverything(repo);
    const { view, viewDir } = await viewOf(repo);
    await view.refresh([overlay('src/b.ts', 'b, unsaved\n')]);
    const report = await view.ensureGit();
    assert.equal(report.built, true);
    assert.equal(git(viewDir, 'rev-parse', 'HEAD^{tree}'), git(repo, 'rev-parse', 'HEAD^{tree}'));
    assert.deepEqual(statusPaths(viewDir), [...statusPaths(repo), 'src/b.ts'].sort());
    git(viewDir, 'fsck', '--strict', '--no-dangling');
    assert.equal(git(viewDir, 'diff', '--', 'a.txt'), git(repo, 'diff', 'HEAD', '--', 'a.txt'), "the view's diff is the workspace's against HEAD");
    assert.match(git(viewDir, 'diff', '--stat', '--', 'image.png'), /Bin 8 -> 8 bytes/, "a binary file's HEAD bytes came across exactly");
    assert.match(git(viewDir, 'diff', '--', 'tool.sh'), /old mode 100644\nnew mode 100755/);
    assert.match(git(viewDir, 'diff', '--', 'src/b.ts'), /\+b, unsaved/);
    // HEAD's bytes of a.txt, gone.txt, staged-gone.txt, old-name.txt, image.png, src/b.ts, src/c.ts; tool.sh's are the view's.
    assert.equal(report.fetched, 7, "HEAD's bytes of each changed file, and only those, came from the workspace's repository");
  });

  it('a clean view reads its files, not the workspace repository, and the same tree always gives the same commit', async () => {
    const one = base();
    const { view, viewDir } = await viewOf(one);
    await view.refresh();
    const report = await view.ensureGit();
    assert.equal(report.fetched, 0);
    assert.equal(git(viewDir, 'status', '--porcelain'), '');
    const other = await viewOf(one);
    await other.view.refresh();
    await other.view.ensureGit();
    assert.equal(git(other.viewDir, 'rev-parse', 'HEAD'), git(viewDir, 'rev-parse', 'HEAD'));
    assert.match(git(viewDir, 'log', '-1', '--format=%an <%ae> %at'), /^Candor <candor@localhost> 0$/m);
    assert.equal(git(viewDir, 'symbolic-ref', 'HEAD').trim(), 'refs/heads/main', "the workspace's branch name");
  });

  it('is made once and kept while HEAD stays; after HEAD moves it goes, and comes back for the new HEAD', async () => {
    const repo = base();
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    await view.ensureGit();
    write(repo, 'a.txt', 'edited\n');
    await view.refresh();
    assert.equal((await view.ensureGit()).built, false);
    assert.deepEqual(statusPaths(viewDir), ['a.txt'], 'an edit after it was made shows');
    git(repo, 'commit', '-q', '-am', 'moved');
    const moved = await view.refresh();
    assert.equal(fs.existsSync(path.join(viewDir, '.git')), false, 'a stale repository would show the commit as uncommitted');
    assert.ok(moved.notes.some((n) => n.startsWith('HEAD moved')));
    assert.equal((await view.ensureGit()).built, true);
    assert.equal(git(viewDir, 'rev-parse', 'HEAD^{tree}'), git(repo, 'rev-parse', 'HEAD^{tree}'));
    assert.equal(git(viewDir, 'status', '--porcelain'), '');
  });

  it("is made again after a command committed in the view's repository", async () => {
    const repo = base();
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    await view.ensureGit();
    write(viewDir, 'a.txt', 'a command changed and committed this\n');
    git(viewDir, 'commit', '-q', '-am', 'inside the view');
    await view.refresh();
    assert.equal((await view.ensureGit()).built, true);
    assert.equal(git(viewDir, 'rev-parse', 'HEAD^{tree}'), git(repo, 'rev-parse', 'HEAD^{tree}'));
  });

  it('with a detached HEAD, an unborn branch, and a workspace folder below the top of its repository', async () => {
    const detached = base();
    git(detached, 'checkout', '-q', '--detach');
    const d = await viewOf(detached);
    await d.view.refresh();
    await d.view.ensureGit();
    assert.equal(git(d.viewDir, 'rev-parse', '--abbrev-ref', 'HEAD').trim(), 'HEAD');

    const unborn = initRepo();
    write(unborn, 'first.txt', 'not committed yet\n');
    const u = await viewOf(unborn);
    await u.view.refresh();
    await u.view.ensureGit();
    assert.deepEqual(statusPaths(u.viewDir), statusPaths(unborn));

    const repo = base();
    const sub = path.join(repo, 'src');
    write(repo, 'src/b.ts', 'b, edited\n');
    const guard = await ReadOnlyGit.open(sub, { openRepositoryInParentFolders: 'always' });
    const s = await viewOf(sub, { git: guard });
    await s.view.refresh();
    await s.view.ensureGit();
    assert.equal(git(s.viewDir, 'rev-parse', 'HEAD^{tree}'), git(repo, 'rev-parse', 'HEAD:src'));
    assert.deepEqual(statusPaths(s.viewDir), ['b.ts']);
  });

  it("the guard's blob read gives a binary file's exact bytes, and its lists are NUL-separated records", async () => {
    const bytes = Buffer.from([0, 1, 2, 0xff, 0xfe, 0xc3, 0x28, 0x0a, 0x0d]);
    const repo = repoWith({ 'bin.dat': bytes, 'dir/a.txt': 'a\n' });
    write(repo, 'new.txt', 'n\n');
    const guard = await ReadOnlyGit.open(repo);
    assert.deepEqual(await guard.blob(git(repo, 'rev-parse', 'HEAD:bin.dat').trim()), bytes);
    await assert.rejects(guard.blob('HEAD'), { kind: 'invalid' });
    await assert.rejects(guard.blob('--output=/tmp/x'), { kind: 'invalid' });
    const work = await guard.listFiles('work');
    assert.ok(work.some((r) => /^100644 [0-9a-f]{40} 0\tdir\/a\.txt$/.test(r)), work.join('\n'));
    assert.ok(work.includes('new.txt'));
  });
});
