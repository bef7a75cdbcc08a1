import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside } from '../../../src/core/realPath';
import { readFile } from '../../../src/core/workspace/readFile';
import { removeTempDirs, repoWith, tempDir, viewOf, write } from './commands/view/helpers';

describe('isInside: the one test of "this path is in that folder"', () => {
  it('the folder itself and what lies below it, however the folder is written', () => {
    assert.equal(isInside('/a/b', '/a/b'), true);
    assert.equal(isInside('/a/b', '/a/b/c/d'), true);
    assert.equal(isInside('/a/b/', '/a/b/c'), true, 'a trailing separator on the folder');
    assert.equal(isInside('/a/b', '/a/b/'), true, 'a trailing separator on the path');
    assert.equal(isInside('/a/b//', '/a/b/c'), true);
    assert.equal(isInside('/', '/etc'), true, 'the root holds everything');
    assert.equal(isInside('/a/b', '/a/b/..b'), true, '`..b` is a name, not a step up');
  });

  it('not a sibling whose name starts like the folder, not a parent, not a path that climbs out with `..`', () => {
    assert.equal(isInside('/a/b', '/a/bc'), false);
    assert.equal(isInside('/a/b', '/a/b-evil/x'), false);
    assert.equal(isInside('/a/b', '/a'), false);
    assert.equal(isInside('/a/b', '/a/b/../c'), false);
    assert.equal(isInside('/a/b', '/a/b/c/../../b2'), false);
    assert.equal(isInside('/a/b', '/a/b/c/..'), true, 'climbing back to the folder itself');
  });

  it('compares case exactly: on Linux /a/B is another folder, and Windows paths are never lower-cased', () => {
    assert.equal(isInside('/a/b', '/a/B/c'), false);
    // On Windows callers compare the native real paths, which carry each name's case as it is on disk.
    assert.equal(isInside('C:\\Users\\me', 'C:\\Users\\me\\project', path.win32), true);
    assert.equal(isInside('C:\\Users\\me\\', 'C:/Users/me/project', path.win32), true, 'either separator, a trailing one');
    assert.equal(isInside('C:\\Users\\me', 'c:\\users\\ME\\project', path.win32), false);
    assert.equal(isInside('C:\\Users\\me', 'C:\\Users\\meow', path.win32), false);
    assert.equal(isInside('C:\\', 'C:\\Windows', path.win32), true);
    assert.equal(isInside('C:\\a', 'D:\\a', path.win32), false);
  });

  it('posix paths anywhere (cgroups) through path.posix', () => {
    assert.equal(isInside('/user.slice', '/user.slice/session-1.scope', path.posix), true);
    assert.equal(isInside('/user.slice', '/user.slice2', path.posix), false);
  });

  describe('its two readings, through their real callers', function () {
    this.timeout(30_000);
    after(removeTempDirs);

    it('confinement (inside = allowed): the workspace tools refuse a sibling folder whose name starts with the workspace\'s', async () => {
      const workspace = tempDir('candor-ws-');
      const sibling = `${workspace}-other`;
      fs.mkdirSync(sibling);
      try {
        write(sibling, 'secret.txt', 'secret\n');
        write(workspace, 'own.txt', 'own\n');
        fs.symlinkSync(path.join(sibling, 'secret.txt'), path.join(workspace, 'link.txt'));
        const secret = path.join(sibling, 'secret.txt');
        // The trap: as text, the sibling's file starts with the workspace's path.
        assert.ok(secret.startsWith(workspace));
        assert.equal((await readFile([workspace], 'own.txt')).text, 'own\n');
        await assert.rejects(readFile([workspace], 'link.txt'), (err: { kind?: string }) => err.kind === 'symlink-outside');
        await assert.rejects(readFile([workspace], secret), (err: { kind?: string }) => err.kind === 'outside');
      } finally {
        fs.rmSync(sibling, { recursive: true, force: true });
      }
    });

    it('hiding (inside = hidden): a dependency folder linked into a hidden folder is not bound, one in a sibling named like it is', async () => {
      const hidden = tempDir('candor-hidden-');
      const store = `${hidden}-store`;
      fs.mkdirSync(path.join(store, 'node_modules'), { recursive: true });
      try {
        fs.mkdirSync(path.join(hidden, 'shared', 'node_modules'), { recursive: true });
        const repo = repoWith({ '.gitignore': 'node_modules\npkg/node_modules\n', 'pkg/index.js': '1;\n' });
        fs.symlinkSync(path.join(hidden, 'shared', 'node_modules'), path.join(repo, 'node_modules'));
        fs.symlinkSync(path.join(store, 'node_modules'), path.join(repo, 'pkg', 'node_modules'));
        // Named with a trailing separator and a `..` step, as a setting may name it.
        const { view } = await viewOf(repo, { hidden: [`${path.join(hidden, 'shared', '..')}${path.sep}`] });
        const report = await view.refresh();
        assert.deepEqual(view.mounts().readOnly, [{ source: path.join(store, 'node_modules'), dest: path.join(repo, 'pkg', 'node_modules') }]);
        assert.ok(report.notes.some((n) => n.startsWith('node_modules points to') && n.includes(hidden)), report.notes.join('\n'));
      } finally {
        fs.rmSync(store, { recursive: true, force: true });
      }
    });
  });
});
