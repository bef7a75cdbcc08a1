import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WorkspaceView } from '../../../../../src/core/commands/view/workspaceView';
import { assertMirrors, git, overlay, read, removeTempDirs, repoWith, viewOf, write } from './helpers';

/** What the view shows after each kind of change the user makes between two commands. */
describe('workspace view: refresh', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  const files = (): Record<string, string> => ({ 'a.txt': 'alpha\n', 'src/b.ts': 'export const b = 1;\n', 'src/c.ts': 'c\n', 'docs/readme.md': '# r\n' });

  it('first build copies the tracked and untracked files, as on disk', async () => {
    const repo = repoWith(files());
    write(repo, 'a.txt', 'edited, not committed\n');
    write(repo, 'notes/new.txt', 'untracked\n');
    const { view, viewDir } = await viewOf(repo);
    const report = await view.refresh();
    assert.equal(report.firstBuild, true);
    assert.equal(report.copied, 5);
    assertMirrors(repo, viewDir);
  });

  it('follows a save, a delete, a rename and a new untracked file, copying only those', async () => {
    const repo = repoWith(files());
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    const untouched = fs.statSync(path.join(viewDir, 'docs/readme.md')).ino;
    write(repo, 'a.txt', 'saved\n');
    fs.rmSync(path.join(repo, 'src/c.ts'));
    git(repo, 'mv', 'src/b.ts', 'src/renamed.ts');
    write(repo, 'fresh.txt', 'new\n');
    const report = await view.refresh();
    assert.equal(report.firstBuild, false);
    assert.equal(report.copied, 3, 'a.txt, src/renamed.ts, fresh.txt');
    assert.equal(report.removed, 2, 'src/c.ts and src/b.ts');
    assertMirrors(repo, viewDir);
    assert.equal(fs.statSync(path.join(viewDir, 'docs/readme.md')).ino, untouched, 'an unchanged file is not copied again');
  });

  it('a refresh with nothing changed copies nothing and reads no unchanged file', async () => {
    const many: Record<string, string> = {};
    for (let i = 0; i < 200; i++) many[`pkg/f${i}.txt`] = `file ${i}\n`;
    const repo = repoWith(many);
    write(repo, 'pkg/f7.txt', 'changed\n');
    const { view } = await viewOf(repo);
    const first = await view.refresh();
    assert.equal(first.copied, 200);
    const again = await view.refresh();
    assert.deepEqual({ copied: again.copied, removed: again.removed, overlaid: again.overlaid }, { copied: 0, removed: 0, overlaid: 0 });
    assert.equal(again.checked, 1, 'only git status\'s one changed path is compared');
    assert.equal(again.hashed, 1, 'and only its bytes are read');
  });

  it('shows an unsaved buffer, and the disk again once the buffer is closed', async () => {
    const repo = repoWith(files());
    const { view, viewDir } = await viewOf(repo);
    const withBuffer = await view.refresh([overlay('src/b.ts', 'export const b = 2; // unsaved\n')]);
    assert.equal(withBuffer.overlaid, 1);
    assert.equal(read(viewDir, 'src/b.ts'), 'export const b = 2; // unsaved\n');
    assert.equal(read(repo, 'src/b.ts'), 'export const b = 1;\n', 'the workspace file is untouched');
    const closed = await view.refresh([]);
    assert.equal(closed.copied, 1);
    assertMirrors(repo, viewDir);
  });

  it('a later overlay of the same path wins', async () => {
    const repo = repoWith(files());
    const { view, viewDir } = await viewOf(repo);
    await view.refresh([overlay('a.txt', 'buffer\n'), overlay('a.txt', 'proposal on top\n')]);
    assert.equal(read(viewDir, 'a.txt'), 'proposal on top\n');
  });

  it('a proposal, accepted (saved, then gone) and rejected (gone), and a proposal of a new file', async () => {
    const repo = repoWith(files());
    const { view, viewDir } = await viewOf(repo);
    await view.refresh([overlay('src/c.ts', 'proposed c\n'), overlay('src/new.ts', 'brand new\n')]);
    assert.equal(read(viewDir, 'src/c.ts'), 'proposed c\n');
    assert.equal(read(viewDir, 'src/new.ts'), 'brand new\n');
    // Accepted: the user's editor saves it; the overlay goes away. The view already holds those bytes.
    write(repo, 'src/c.ts', 'proposed c\n');
    const accepted = await view.refresh([overlay('src/new.ts', 'brand new\n')]);
    assert.equal(accepted.copied, 0, 'the saved bytes are what the view already holds');
    assertMirrors(repo, viewDir, { 'src/new.ts': 'brand new\n' });
    // Rejected: the overlay goes; the new file was never on disk.
    const rejected = await view.refresh([]);
    assert.equal(rejected.removed, 1);
    assertMirrors(repo, viewDir);
    assert.equal(read(viewDir, 'src/new.ts'), undefined);
  });

  it('a file edited twice between two refreshes, same size and same mtime, ends with the latest bytes', async () => {
    const repo = repoWith({ 'same.txt': 'base\n' });
    const { view, viewDir } = await viewOf(repo);
    const file = path.join(repo, 'same.txt');
    const tick = new Date('2030-01-01T00:00:00Z');
    fs.writeFileSync(file, 'one!\n');
    fs.utimesSync(file, tick, tick);
    await view.refresh();
    assert.equal(read(viewDir, 'same.txt'), 'one!\n');
    fs.writeFileSync(file, 'two!\n');
    fs.utimesSync(file, tick, tick);
    await view.refresh();
    assert.equal(read(viewDir, 'same.txt'), 'two!\n', 'same size, same mtime, other bytes');
    // Back to HEAD's bytes, still the same size and mtime: git status no longer names it, the last changed set does.
    fs.writeFileSync(file, 'base\n');
    fs.utimesSync(file, tick, tick);
    await view.refresh();
    assert.equal(read(viewDir, 'same.txt'), 'base\n');
  });

  it('after HEAD moves (a commit, a checkout) the whole list is reconciled', async () => {
    const repo = repoWith(files());
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    git(repo, 'checkout', '-q', '-b', 'other');
    write(repo, 'only-on-other.txt', 'o\n');
    fs.rmSync(path.join(repo, 'docs'), { recursive: true });
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'other');
    const onOther = await view.refresh();
    assert.deepEqual({ copied: onOther.copied, removed: onOther.removed }, { copied: 1, removed: 1 });
    assertMirrors(repo, viewDir);
    git(repo, 'checkout', '-q', 'main');
    await view.refresh();
    assertMirrors(repo, viewDir);
  });

  it('a file git starts to ignore leaves the view', async () => {
    const repo = repoWith(files());
    write(repo, 'debug.log', 'log\n');
    const { view, viewDir } = await viewOf(repo);
    await view.refresh();
    assert.equal(read(viewDir, 'debug.log'), 'log\n');
    write(repo, '.gitignore', '*.log\n');
    await view.refresh();
    assert.equal(read(viewDir, 'debug.log'), undefined);
    assertMirrors(repo, viewDir);
  });

  it('keeps an executable bit and a symlink inside the folder, and skips one that leaves it (and says so)', async () => {
    const repo = repoWith(files());
    fs.writeFileSync(path.join(repo, 'run.sh'), '#!/bin/sh\necho hi\n', { mode: 0o755 });
    fs.symlinkSync('src/b.ts', path.join(repo, 'inside-link'));
    fs.symlinkSync('/etc/passwd', path.join(repo, 'outside-link'));
    fs.symlinkSync('../../..', path.join(repo, 'src/up-link'));
    const { view, viewDir } = await viewOf(repo);
    const report = await view.refresh();
    assert.equal(fs.statSync(path.join(viewDir, 'run.sh')).mode & 0o111, 0o111);
    assert.equal(fs.readlinkSync(path.join(viewDir, 'inside-link')), 'src/b.ts');
    assert.equal(fs.lstatSync(path.join(viewDir, 'outside-link'), { throwIfNoEntry: false }), undefined);
    assert.equal(fs.lstatSync(path.join(viewDir, 'src/up-link'), { throwIfNoEntry: false }), undefined);
    assert.ok(report.notes.some((n) => n.includes('outside-link') && n.includes('/etc/passwd')), report.notes.join('\n'));
    fs.chmodSync(path.join(repo, 'a.txt'), 0o755);
    await view.refresh();
    assert.equal(fs.statSync(path.join(viewDir, 'a.txt')).mode & 0o111, 0o111, 'a chmod alone reaches the view');
  });

  it('a new instance on the same view folder (Candor restarted) resumes from the manifest', async () => {
    const repo = repoWith(files());
    const { view, viewDir, guard } = await viewOf(repo);
    await view.refresh();
    write(repo, 'a.txt', 'while Candor was closed\n');
    const again = new WorkspaceView({ root: repo, viewDir, git: guard });
    const report = await again.refresh();
    assert.equal(report.firstBuild, false);
    assert.equal(report.copied, 1);
    assertMirrors(repo, viewDir);
  });
});
