import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { divergeOn, git, hashFile, initRepo, removeTempDirs, repoWith, tempDir, write } from './helpers/repo';

describe('read-only git guard: reads', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  it('opens a repository folder and reports root and git dir', async () => {
    const repo = repoWith({ 'src/deep/a.txt': 'a\n' });
    const guard = await ReadOnlyGit.open(repo);
    assert.equal(guard.root, repo);
    assert.equal(guard.gitDir, path.join(repo, '.git'));
  });

  it('opens at the top level from a subfolder only when parent repositories are allowed', async () => {
    const repo = repoWith({ 'src/deep/a.txt': 'a\n' });
    const deep = path.join(repo, 'src', 'deep');
    await assert.rejects(ReadOnlyGit.open(deep), { kind: 'not-a-repo' });
    const guard = await ReadOnlyGit.open(deep, { openRepositoryInParentFolders: 'always' });
    assert.equal(guard.root, repo);
    assert.equal(guard.gitDir, path.join(repo, '.git'));
  });

  it('never rewrites .git/index, where a plain `git status` would (the control)', async () => {
    const repo = repoWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    // Make the index's stat data stale, so a refreshing status has work to save.
    const past = new Date('2001-02-03T04:05:06Z');
    for (const name of ['a.txt', 'b.txt']) fs.utimesSync(path.join(repo, name), past, past);
    const indexFile = path.join(repo, '.git', 'index');
    const before = hashFile(indexFile);

    const guard = await ReadOnlyGit.open(repo);
    await guard.status();
    await guard.diffUnstaged();
    await guard.diffStaged();
    await guard.dirtyState();
    assert.equal(hashFile(indexFile), before, 'the guard left the index alone');

    git(repo, 'status', '--porcelain');
    assert.notEqual(hashFile(indexFile), before, 'control: a plain git status refreshed and rewrote the index');
  });

  it('reads status: staged, unstaged, untracked, rename, upstream ahead/behind', async () => {
    const upstream = repoWith({ 'a.txt': 'a\n', 'old.txt': 'old\n' });
    const repo = tempDir();
    git(repo, 'clone', '-q', upstream, '.');
    write(repo, 'local.txt', 'l\n');
    git(repo, 'add', 'local.txt');
    git(repo, 'commit', '-q', '-m', 'local');
    write(upstream, 'up.txt', 'u\n');
    git(upstream, 'add', 'up.txt');
    git(upstream, 'commit', '-q', '-m', 'up');
    git(repo, 'fetch', '-q');
    write(repo, 'a.txt', 'a2\n');
    git(repo, 'mv', 'old.txt', 'new.txt');
    write(repo, 'fresh.txt', 'f\n');

    const guard = await ReadOnlyGit.open(repo);
    const status = await guard.status();
    assert.equal(status.branch.head, 'main');
    assert.equal(status.branch.upstream, 'origin/main');
    assert.equal(status.branch.ahead, 1);
    assert.equal(status.branch.behind, 1);
    assert.deepEqual(status.staged, [{ path: 'new.txt', change: 'renamed', from: 'old.txt' }]);
    assert.deepEqual(status.unstaged, [{ path: 'a.txt', change: 'modified' }]);
    assert.deepEqual(status.untracked, ['fresh.txt']);
    assert.match(await guard.diffUnstaged(), /^-a\n\+a2$/m);
    assert.match(await guard.diffStaged(), /rename from old\.txt\nrename to new\.txt/);
  });

  it('reads log, show, rev-parse, HEAD and trailers', async () => {
    const repo = repoWith({ 'a.txt': 'a\n', 'dir/b c.txt': 'b\n' });
    write(repo, 'a.txt', 'a2\n');
    git(repo, 'commit', '-q', '-am', 'second\n\nBody.\n\nCandor-Rant: 01hx4kqz\n');
    const guard = await ReadOnlyGit.open(repo);
    const head = git(repo, 'rev-parse', 'HEAD').trim();

    const log = await guard.log(10);
    assert.deepEqual(log.map((c) => c.subject), ['second', 'initial']);
    assert.equal(log[0]?.hash, head);
    assert.equal(await guard.headCommit(), head);
    assert.equal(await guard.revParse('HEAD~1'), git(repo, 'rev-parse', 'HEAD~1').trim());
    assert.equal(await guard.revParse('no-such-branch'), undefined);
    assert.match(await guard.show('HEAD'), /Candor-Rant: 01hx4kqz[\s\S]*\+a2/);
    assert.match(await guard.show(`${head}:dir/b c.txt`), /^b$/m);
    assert.deepEqual(await guard.topCommitTrailers(), [{ key: 'Candor-Rant', value: '01hx4kqz' }]);
  });

  it('refuses option-shaped revisions and bad log counts with kind invalid', async () => {
    const guard = await ReadOnlyGit.open(repoWith({ 'a.txt': 'a\n' }));
    for (const rev of ['--output=/tmp/x', '-p', '', 'a\nb']) {
      await assert.rejects(guard.show(rev), { kind: 'invalid' }, JSON.stringify(rev));
      await assert.rejects(guard.revParse(rev), { kind: 'invalid' }, JSON.stringify(rev));
    }
    await assert.rejects(guard.log(0), { kind: 'invalid' });
    await assert.rejects(guard.log(1.5), { kind: 'invalid' });
  });

  it('handles an unborn branch: empty log, no HEAD, no trailers, status works', async () => {
    const repo = initRepo();
    write(repo, 'a.txt', 'a\n');
    const guard = await ReadOnlyGit.open(repo);
    assert.deepEqual(await guard.log(5), []);
    assert.equal(await guard.headCommit(), undefined);
    assert.deepEqual(await guard.topCommitTrailers(), []);
    const status = await guard.status();
    assert.equal(status.branch.oid, null);
    assert.deepEqual(status.untracked, ['a.txt']);
  });

  it('reports merges, rebases, cherry-picks and reverts in progress', async () => {
    const repo = repoWith({ 'c.txt': 'base\n' });
    divergeOn(repo, 'c.txt');
    const guard = await ReadOnlyGit.open(repo);

    assert.deepEqual(await guard.inProgress(), []);
    assert.throws(() => git(repo, 'merge', 'other'));
    assert.deepEqual(await guard.inProgress(), [{ operation: 'merging', marker: '.git/MERGE_HEAD' }]);
    git(repo, 'merge', '--abort');

    assert.throws(() => git(repo, 'cherry-pick', 'other'));
    assert.deepEqual((await guard.inProgress()).map((p) => p.operation), ['cherry-picking']);
    git(repo, 'cherry-pick', '--abort');

    write(repo, 'c.txt', 'main again\n');
    git(repo, 'commit', '-q', '-am', 'main again');
    assert.throws(() => git(repo, 'revert', '--no-edit', 'HEAD~1'));
    assert.deepEqual((await guard.inProgress()).map((p) => p.operation), ['reverting']);
    git(repo, 'revert', '--abort');

    assert.throws(() => git(repo, 'rebase', 'other'));
    assert.deepEqual(await guard.inProgress(), [{ operation: 'rebasing', marker: '.git/rebase-merge' }]);
    git(repo, 'rebase', '--abort');
    assert.deepEqual(await guard.inProgress(), []);
  });
});
