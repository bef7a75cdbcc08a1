import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ViewRefusedError } from '../../../../../src/core/commands/view/errors';
import { isKindError } from '../../../../../src/core/kindError';
import { bytesReadSoFar } from '../../../../helpers/bytesRead';
import { contents, read, removeTempDirs, repoWith, tempDir, viewOf, write } from './helpers';

/** What the view refuses to copy, and how it says so. */
describe('workspace view: bounds', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  it('refuses an untracked file over the bound at once, naming the file and the bound, and reads and copies nothing of it', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    // Sparse: 100 MiB by its size (over the 64 MiB bound, well under any file-size limit), no blocks on disk.
    const size = 100 * 1024 * 1024;
    fs.writeFileSync(path.join(repo, 'dump.bin'), '');
    fs.truncateSync(path.join(repo, 'dump.bin'), size);
    const { view, viewDir } = await viewOf(repo);
    const readBefore = bytesReadSoFar();
    await assert.rejects(view.refresh(), (err: unknown) => {
      assert.ok(isKindError(err, ViewRefusedError, 'file-too-large'), String(err));
      assert.match(err.message, /dump\.bin is 100 MiB, more than the 64 MiB/);
      assert.match(err.message, /\.gitignore/, 'says what to do next');
      return true;
    });
    // Refused from its size: whatever the refresh read (git's output, the small file), it was not the 100 MiB.
    const readBytes = bytesReadSoFar() - readBefore;
    assert.ok(readBytes < size / 10, `the refresh read ${readBytes} bytes`);
    assert.equal(fs.existsSync(path.join(viewDir, 'dump.bin')), false);
    fs.rmSync(path.join(repo, 'dump.bin'));
    const report = await view.refresh();
    assert.equal(read(viewDir, 'a.txt'), 'a\n', 'once the file is gone the view builds');
    assert.equal(report.copied, 1);
  });

  it('takes a smaller per-file bound, and a tracked file is not held to it', async () => {
    const repo = repoWith({ 'big-but-tracked.bin': 'x'.repeat(5000) });
    write(repo, 'untracked.bin', 'y'.repeat(5000));
    const { view } = await viewOf(repo, { maxFileBytes: 4096 });
    await assert.rejects(view.refresh(), (err: unknown) => isKindError(err, ViewRefusedError, 'file-too-large') && /untracked\.bin/.test(err.message) && !/big-but-tracked/.test(err.message));
  });

  it('copies a folder without git within the bound, and says it had no git', async () => {
    const folder = tempDir('candor-nogit-');
    write(folder, 'main.c', 'int main(void) { return 0; }\n');
    write(folder, 'lib/util.c', 'void u(void) {}\n');
    write(folder, 'node_modules/dep/index.js', 'dep\n');
    write(folder, 'build/old.o', 'stale\n');
    write(folder, '.env', 'KEY=secret\n');
    const { view, viewDir } = await viewOf(folder, { withoutGit: true });
    const report = await view.refresh([{ path: 'main.c', bytes: Buffer.from('int main(void) { return 1; }\n') }]);
    assert.deepEqual([...contents(viewDir).keys()].sort(), ['lib/util.c', 'main.c']);
    assert.equal(read(viewDir, 'main.c'), 'int main(void) { return 1; }\n');
    assert.deepEqual(view.mounts().readOnly, [{ source: path.join(folder, 'node_modules'), dest: path.join(folder, 'node_modules') }]);
    assert.deepEqual(fs.readdirSync(path.join(viewDir, 'build')), []);
    assert.ok(report.notes.some((n) => n.startsWith('no git repository') && n.includes('256 MiB')), report.notes.join('\n'));
    assert.ok(report.notes.some((n) => n.startsWith('.env')), 'the .env left out is named');
    write(folder, 'lib/util.c', 'void u(void) { /* saved */ }\n');
    const again = await view.refresh([]);
    assert.deepEqual({ copied: again.copied, removed: again.removed }, { copied: 2, removed: 0 }, 'lib/util.c saved, main.c back to the disk');
  });

  it('refuses a folder without git larger than the bound, naming the bound', async () => {
    const folder = tempDir('candor-nogit-');
    for (let i = 0; i < 10; i++) write(folder, `f${i}.txt`, 'z'.repeat(1024));
    const { view, viewDir } = await viewOf(folder, { withoutGit: true, maxTotalBytesWithoutGit: 8 * 1024 });
    await assert.rejects(view.refresh(), (err: unknown) => isKindError(err, ViewRefusedError, 'folder-too-large') && /8 KiB/.test(err.message) && /no git repository/.test(err.message));
    assert.deepEqual(fs.existsSync(viewDir) ? fs.readdirSync(viewDir) : [], []);
  });
});
