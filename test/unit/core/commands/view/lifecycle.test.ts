import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { manifestPath, unsettledMarkerPath } from '../../../../../src/core/commands/view/manifest';
import { WorkspaceView, removeView } from '../../../../../src/core/commands/view/workspaceView';
import { assertMirrors, git, overlay, read, removeTempDirs, repoWith, viewOf, write } from './helpers';
import { cannotChown, skipUnless } from '../../../../helpers/preconditions';

/** One refresh or command at a time, what a command leaves in the view, ownership, and the manifest's life. */
describe('workspace view: lifecycle', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  it('runs one refresh or command at a time: a refresh asked for during a command waits for it', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    const { view, viewDir } = await viewOf(repo);
    const order: string[] = [];
    let release = (): void => undefined;
    let started = (): void => undefined;
    const commandStarted = new Promise<void>((resolve) => (started = resolve));
    const running = view.use([overlay('a.txt', 'while the command runs\n')], {}, async () => {
      order.push('command started');
      started();
      await new Promise<void>((resolve) => (release = resolve));
      assert.equal(read(viewDir, 'a.txt'), 'while the command runs\n', 'no refresh changed the view under the command');
      order.push('command ended');
    });
    await commandStarted;
    const refreshed = view.refresh([]).then(() => order.push('refreshed'));
    // The yardstick: a whole refresh of a view of its own, over the same files, ends; the one asked for still waits.
    const { view: other } = await viewOf(repo);
    await other.refresh([]);
    await other.refresh([overlay('a.txt', 'other\n')]);
    assert.deepEqual(order, ['command started']);
    release();
    await Promise.all([running, refreshed]);
    assert.deepEqual(order, ['command started', 'command ended', 'refreshed']);
    assert.equal(read(viewDir, 'a.txt'), 'a\n');
  });

  it('puts back files a command changed or deleted in the view, and keeps files it made', async () => {
    const repo = repoWith({ 'a.txt': 'a\n', 'src/b.ts': 'b\n', 'src/c.ts': 'c\n' });
    const { view, viewDir } = await viewOf(repo);
    await view.use([], {}, async () => {
      // What a command's `prettier --write`, `rm` and build did inside the view.
      fs.writeFileSync(path.join(viewDir, 'a.txt'), 'reformatted\n');
      fs.rmSync(path.join(viewDir, 'src/c.ts'));
      fs.writeFileSync(path.join(viewDir, 'out.log'), 'made by the command\n');
    });
    const report = await view.refresh();
    assert.equal(report.restored, 2);
    assert.equal(read(viewDir, 'a.txt'), 'a\n');
    assert.equal(read(viewDir, 'src/c.ts'), 'c\n');
    assert.equal(read(viewDir, 'out.log'), 'made by the command\n');
    assert.equal(read(repo, 'out.log'), undefined);
  });

  it('after a restart, still finds what the last command changed', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    const { view, viewDir, guard } = await viewOf(repo);
    let stopped = false;
    await view.use([], {}, async () => {
      fs.writeFileSync(path.join(viewDir, 'a.txt'), 'changed, then Candor stopped\n');
      stopped = true;
    });
    assert.ok(stopped);
    const restarted = new WorkspaceView({ root: repo, viewDir, git: guard });
    const report = await restarted.refresh();
    assert.equal(report.restored, 1);
    assert.equal(read(viewDir, 'a.txt'), 'a\n');
  });

  it('a refresh whose journal line a crash cut short is caught up with at the next start', async () => {
    const repo = repoWith({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
    const { view, viewDir, guard } = await viewOf(repo);
    await view.refresh();
    write(repo, 'a.txt', 'edited before the crash\n');
    await view.refresh();
    // The crash: the journal's last line half written, the marker of an unsettled view left behind.
    const journal = `${manifestPath(viewDir)}.log`;
    const text = fs.readFileSync(journal, 'utf8');
    fs.writeFileSync(journal, text.slice(0, Math.floor(text.length / 2)));
    fs.writeFileSync(unsettledMarkerPath(viewDir), '1\n');
    // Meanwhile the user put the file back: git status no longer names it.
    write(repo, 'a.txt', 'a\n');
    const report = await new WorkspaceView({ root: repo, viewDir, git: guard }).refresh();
    assert.equal(report.firstBuild, false);
    assertMirrors(repo, viewDir);
    assert.equal(fs.existsSync(unsettledMarkerPath(viewDir)), false);
  });

  it("gives what it writes to the sandbox's uid, and only what it writes", async function () {
    // Giving files to another uid needs CAP_CHOWN: root has it, the evolution gate's user does not.
    skipUnless(this, cannotChown());
    const repo = repoWith({ 'a.txt': 'a\n', 'src/b.ts': 'b\n', 'src/deep/c.ts': 'c\n' });
    write(repo, '.gitignore', 'node_modules/\n');
    write(repo, 'node_modules/x/index.js', 'x\n');
    const owner = { uid: 4242, gid: 4343 };
    const { view, viewDir } = await viewOf(repo, { owner });
    await view.refresh([overlay('src/new.ts', 'n\n')]);
    const owned = (rel: string): string => {
      const stat = fs.lstatSync(path.join(viewDir, rel));
      return `${stat.uid}:${stat.gid}`;
    };
    for (const rel of ['', 'a.txt', 'src', 'src/b.ts', 'src/deep', 'src/deep/c.ts', 'src/new.ts', 'node_modules', '.gitignore']) assert.equal(owned(rel), '4242:4343', rel);
    assert.equal(fs.lstatSync(path.join(repo, 'a.txt')).uid, process.getuid?.(), 'the workspace keeps its owner');
    const before = fs.lstatSync(path.join(viewDir, 'src/deep/c.ts')).ctimeMs;
    write(repo, 'src/b.ts', 'b, saved\n');
    await view.refresh([]);
    assert.equal(fs.lstatSync(path.join(viewDir, 'src/deep/c.ts')).ctimeMs, before, 'an untouched file is not chowned again');
    assert.equal(owned('src/b.ts'), '4242:4343');
  });

  it('keeps its manifest beside the view, rebuilds from scratch when it is damaged, and removeView deletes both', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    const { view, viewDir, guard } = await viewOf(repo);
    await view.refresh();
    const manifest = manifestPath(viewDir);
    assert.equal(path.dirname(manifest), path.dirname(viewDir), 'beside the view, where no command sees it');
    assert.ok(fs.existsSync(manifest));
    fs.writeFileSync(manifest, '{ not json');
    write(viewDir, 'leftover.txt', 'from before\n');
    const rebuilt = await new WorkspaceView({ root: repo, viewDir, git: guard }).refresh();
    assert.equal(rebuilt.firstBuild, true);
    assertMirrors(repo, viewDir);
    await removeView(viewDir);
    assert.equal(fs.existsSync(viewDir), false);
    assert.equal(fs.existsSync(manifest), false);
    assert.equal(git(repo, 'status', '--porcelain'), '', 'the workspace is untouched');
  });

  it('what a command left in the view (a tree deeper than PATH_MAX, a folder of mode 000) does not stop a rebuild or removeView', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    const { view, viewDir, guard } = await viewOf(repo);
    await view.refresh();
    const leave = (): void => {
      execFileSync('sh', ['-c', `d=$(printf 'd%.0s' $(seq 200)) && mkdir .t && for i in $(seq 25); do mkdir .w && mv .t ".w/$d" && mv .w .t || exit 1; done && mv .t deep && mkdir -p locked/inner && chmod 000 locked/inner locked`], { cwd: viewDir });
    };
    leave();
    fs.writeFileSync(manifestPath(viewDir), '{ not json');
    const rebuilt = await new WorkspaceView({ root: repo, viewDir, git: guard }).refresh();
    assert.equal(rebuilt.firstBuild, true);
    assert.equal(fs.existsSync(path.join(viewDir, 'deep')), false, 'the rebuild started from an empty folder');
    assertMirrors(repo, viewDir);
    leave();
    await removeView(viewDir);
    assert.equal(fs.existsSync(viewDir), false);
  });
});
