import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { confineTarget } from '../../../../src/core/workspace/confine';

describe('where a proposal may put a file that does not exist yet', () => {
  let root: string;
  let outside: string;
  beforeEach(() => {
    root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-target-')));
    outside = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-outside-')));
    fs.mkdirSync(path.join(root, 'src'));
  });
  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  it('a new file in an existing folder, or in a folder yet to be made, is inside the workspace', async () => {
    assert.deepEqual(await confineTarget([root], 'src/new.ts'), { root, absolute: path.join(root, 'src', 'new.ts'), display: 'src/new.ts' });
    assert.equal((await confineTarget([root], 'src/deep/er/new.ts')).display, 'src/deep/er/new.ts');
  });

  it('refuses a new file through a symlinked folder that leads out, through "..", or inside .git', async () => {
    // Tried: the model proposes a file whose folder is a link to somewhere else on the disk.
    fs.symlinkSync(outside, path.join(root, 'link'));
    await assert.rejects(confineTarget([root], 'link/planted.sh'), /symlink/);
    await assert.rejects(confineTarget([root], '../escape.ts'), /climbs out|outside/);
    fs.mkdirSync(path.join(root, '.git'));
    await assert.rejects(confineTarget([root], '.git/hooks/pre-commit'), /git's own directory/);
    await assert.rejects(confineTarget([root], 'src/..'), /is a folder/);
    // Tried: a dangling link in the repository, aimed at a file that does not exist yet outside it.
    fs.symlinkSync(path.join(outside, 'later.sh'), path.join(root, 'src', 'dangling.sh'));
    await assert.rejects(confineTarget([root], 'src/dangling.sh'), /symlink to a file that does not exist/);
    assert.deepEqual(fs.readdirSync(outside), [], 'nothing was made outside');
  });
});
