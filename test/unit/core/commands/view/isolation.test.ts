import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashTree } from '../../../../helpers/hashTree';
import { git, overlay, read, removeTempDirs, repoWith, viewOf, write } from './helpers';

/** Nothing done in the view reaches the workspace, and nothing of the workspace's repository is in the view. */
describe('workspace view: isolation', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  const workspaceHash = (repo: string): string => hashTree(repo, () => false, true);

  it('no file of the view shares an inode with the workspace', async () => {
    const repo = repoWith({ 'a.txt': 'a\n', 'src/b.ts': 'b\n', 'bin/run': '#!/bin/sh\n' });
    write(repo, 'untracked.txt', 'u\n');
    write(repo, 'src/b.ts', 'modified\n');
    const { view, viewDir } = await viewOf(repo);
    await view.refresh([overlay('a.txt', 'buffer\n')]);
    const inodes = new Set<string>();
    const walk = (dir: string, into: (key: string, stat: fs.Stats) => void): void => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name);
        const stat = fs.lstatSync(full);
        into(`${stat.dev}:${stat.ino}`, stat);
        if (entry.isDirectory()) walk(full, into);
      }
    };
    walk(repo, (key) => inodes.add(key));
    let seen = 0;
    walk(viewDir, (key, stat) => {
      seen++;
      assert.ok(!inodes.has(key), `a view entry shares ${key} with the workspace`);
      if (stat.isFile()) assert.equal(stat.nlink, 1, 'no hard link');
    });
    assert.ok(seen >= 5);
    const before = workspaceHash(repo);
    fs.writeFileSync(path.join(viewDir, 'untracked.txt'), 'a command wrote this in the view\n');
    fs.appendFileSync(path.join(viewDir, 'src/b.ts'), 'more\n');
    fs.rmSync(path.join(viewDir, 'bin'), { recursive: true });
    assert.equal(workspaceHash(repo), before, 'writes and deletes in the view leave the workspace as it was');
  });

  it("has no copy of the workspace's .git: no hooks, no config, no remote, no history", async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    git(repo, 'remote', 'add', 'origin', 'https://example.invalid/secret-token@repo.git');
    git(repo, 'config', 'core.fsmonitor', 'touch /tmp/pwned');
    write(repo, '.git/hooks/pre-commit', '#!/bin/sh\nexit 1\n');
    write(repo, 'b.txt', 'b\n');
    git(repo, 'add', 'b.txt');
    git(repo, 'commit', '-q', '-m', 'second');
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    assert.equal(fs.existsSync(path.join(viewDir, '.git')), false, 'no repository until one is asked for');
    await view.ensureGit();
    assert.equal(git(viewDir, 'remote').trim(), '');
    assert.equal(git(viewDir, 'rev-list', '--count', 'HEAD').trim(), '1', 'one commit, not the history');
    assert.ok(!fs.readFileSync(path.join(viewDir, '.git', 'config'), 'utf8').includes('fsmonitor'));
    assert.equal(fs.existsSync(path.join(viewDir, '.git', 'hooks')), false);
    assert.notEqual(fs.statSync(path.join(viewDir, '.git')).ino, fs.statSync(path.join(repo, '.git')).ino);
  });

  it('takes no overlay whose path leaves the folder or enters a .git (each tried)', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    const { view, viewDir } = await viewOf(repo);
    const outside = path.join(path.dirname(viewDir), 'escaped.txt');
    write(repo, 'src/keep.ts', 'keep\n');
    const tried = ['../escaped.txt', '../../escaped.txt', 'a/../../escaped.txt', outside, '/etc/candor-test', '.git/hooks/pre-commit', 'sub/.GIT/config', 'x\\..\\..\\y', '', './a.txt', 'a//b', 'nul\0byte', 'src', 'a.txt/under-a-file'];
    const report = await view.refresh(tried.map((p) => overlay(p, 'hostile\n')));
    assert.equal(report.overlaid, 0);
    assert.equal(fs.existsSync(outside), false);
    assert.equal(fs.existsSync('/etc/candor-test'), false);
    assert.equal(fs.existsSync(path.join(viewDir, '.git')), false);
    assert.equal(report.notes.length, tried.length, report.notes.join('\n'));
    assert.equal(read(viewDir, 'a.txt'), 'a\n');
    assert.equal(read(viewDir, 'src/keep.ts'), 'keep\n', 'an overlay named like a folder does not replace it');
  });

  it('never writes through a folder a command swapped for a symlink into the workspace', async () => {
    const repo = repoWith({ 'src/b.ts': 'original\n', 'src/c.ts': 'c\n' });
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    // What a command in the sandbox could do: its view folder replaced by a link to the workspace's (its path outside the sandbox).
    fs.rmSync(path.join(viewDir, 'src'), { recursive: true });
    fs.symlinkSync(path.join(repo, 'src'), path.join(viewDir, 'src'));
    write(repo, 'src/b.ts', 'saved by the user\n');
    fs.rmSync(path.join(repo, 'src/c.ts'));
    const before = workspaceHash(repo);
    await view.refresh([overlay('src/d.ts', 'proposed\n')]);
    assert.equal(workspaceHash(repo), before, 'the workspace is as the user left it');
    assert.equal(read(repo, 'src/b.ts'), 'saved by the user\n');
    assert.equal(fs.lstatSync(path.join(viewDir, 'src')).isSymbolicLink(), false, 'the view has a real folder again');
    assert.equal(read(viewDir, 'src/b.ts'), 'saved by the user\n');
    assert.equal(read(viewDir, 'src/d.ts'), 'proposed\n');
  });

  it('refuses a view folder inside the workspace, or a workspace inside the view folder', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    await assert.rejects(viewOf(repo, { viewDir: path.join(repo, '.candor', 'view') }), { kind: 'bad-view-dir' });
    await assert.rejects(viewOf(repo, { viewDir: path.dirname(repo) }), { kind: 'bad-view-dir' });
  });
});
