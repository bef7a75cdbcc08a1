import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { boundText } from '../../../../src/core/workspace/bounded';
import { gitLogTool, gitStatusTool } from '../../../../src/core/workspace/gitTools';
import { listFiles } from '../../../../src/core/workspace/listFiles';
import { readFile } from '../../../../src/core/workspace/readFile';
import { searchText } from '../../../../src/core/workspace/searchText';
import { git, removeTempDirs, repoWith, tempDir, write } from '../git/helpers/repo';

function kindOf(err: unknown): string | undefined {
  return (err as { kind?: string }).kind;
}

describe('workspace tools: confined, bounded, never crashing', function () {
  this.timeout(30_000);
  let root = '';
  let outside = '';
  before(() => {
    root = tempDir('candor-ws-');
    outside = tempDir('candor-outside-');
    write(outside, 'secret.txt', 'secret\n');
    write(root, 'src/app.ts', 'export const answer = 42;\n// TODO: more\n');
    write(root, 'src/ünï côdé.md', 'naïve TODO with spaces\n');
    write(root, 'node_modules/dep/index.js', 'TODO in a dependency\n');
    write(root, '.git/config', '[core]\n# TODO not for tools\n');
    write(root, 'latin1.txt', Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a])); // "café" in Latin-1
    write(root, 'image.bin', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 0x0d]));
    write(root, 'big.txt', `${'é'.repeat(50_000)}\n`);
    fs.symlinkSync('/etc', path.join(root, 'link-to-etc'));
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(root, 'secret-link.txt'));
    fs.symlinkSync(path.join(root, 'src', 'app.ts'), path.join(root, 'inner-link.ts'));
  });
  after(removeTempDirs);

  it('reads a file inside the folder, including through a symlink that stays inside', async () => {
    const result = await readFile([root], 'src/app.ts');
    assert.equal(result.text, 'export const answer = 42;\n// TODO: more\n');
    assert.equal(result.truncated, false);
    assert.equal((await readFile([root], 'inner-link.ts')).path, 'src/app.ts');
    assert.equal((await readFile([root], path.join(root, 'src', 'app.ts'))).path, 'src/app.ts');
    assert.equal((await readFile([root], 'src/../src/app.ts')).path, 'src/app.ts');
  });

  it('refuses escapes: "..", absolute paths elsewhere, symlinks out, git internals — each with a kind and a clear message', async () => {
    const cases: Array<[string, string]> = [
      ['../candor-outside/secret.txt', 'escape'],
      ['src/../../x', 'escape'],
      ['/etc/passwd', 'outside'],
      [path.join(outside, 'secret.txt'), 'outside'],
      ['link-to-etc/passwd', 'symlink-outside'],
      ['secret-link.txt', 'symlink-outside'],
      ['.git/config', 'git-internal'],
      ['src/nothing.ts', 'not-found'],
      ['src', 'not-a-file'],
    ];
    for (const [input, kind] of cases) {
      await assert.rejects(readFile([root], input), (err: unknown) => {
        assert.equal(kindOf(err), kind, input);
        assert.ok((err as Error).message.length > 10, (err as Error).message);
        return true;
      });
    }
    await assert.rejects(listFiles([root], 'link-to-etc'), { kind: 'symlink-outside' });
    await assert.rejects(listFiles([root], '..'), { kind: 'escape' });
    await assert.rejects(searchText([root], 'root', { dir: 'link-to-etc' }), { kind: 'symlink-outside' });
    await assert.rejects(readFile([], 'a.txt'), { kind: 'no-folder' });
  });

  it('reports binary and non-UTF-8 files instead of failing', async () => {
    const latin = await readFile([root], 'latin1.txt');
    assert.equal(latin.binary, true);
    assert.match(latin.text, /latin1\.txt is binary or not valid UTF-8 \(5 bytes\)/);
    assert.equal((await readFile([root], 'image.bin')).binary, true);
  });

  it('truncates a large file on a character boundary with an explicit marker', async () => {
    const result = await readFile([root], 'big.txt', { maxBytes: 1001 });
    assert.ok(result.truncated);
    assert.equal(result.totalBytes, 100_001);
    assert.ok(result.text.startsWith('é'.repeat(500)));
    assert.match(result.text, /\n\[truncated: showed 1,000 of 100,001 bytes\]$/);
  });

  it('lists a folder, marks folders and symlinks, and bounds a recursive listing', async () => {
    const top = await listFiles([root], '.');
    assert.deepEqual(top.text.split('\n'), ['big.txt', 'image.bin', 'inner-link.ts@', 'latin1.txt', 'link-to-etc@', 'node_modules/', 'secret-link.txt@', 'src/']);
    const deep = await listFiles([root], '', { recursive: true, maxEntries: 3 });
    assert.ok(deep.truncated);
    assert.ok(!deep.text.includes('node_modules/dep'), 'no walking into node_modules');
    assert.match(deep.text, /\[truncated: showed 3 of 9 entries\]$/);
    assert.equal((await listFiles([root], 'src')).text, 'src/app.ts\nsrc/ünï côdé.md');
  });

  it('searches text, skipping .git, node_modules, symlinks and binary files, with a bounded answer', async () => {
    const all = await searchText([root], 'todo');
    assert.equal(all.text, 'src/app.ts:2: // TODO: more\nsrc/ünï côdé.md:1: naïve TODO with spaces\n[skipped 2 binary, non-UTF-8 or large files]');
    const one = await searchText([root], 'TODO', { maxMatches: 1, caseSensitive: true });
    assert.ok(one.truncated);
    assert.match(one.text, /^src\/app\.ts:2: \/\/ TODO: more\n\[truncated: showed 1 of 2 matches\]/);
    assert.match((await searchText([root], 'no such text anywhere')).text, /^no matches for "no such text anywhere"/);
    await assert.rejects(searchText([root], ''), { kind: 'invalid' });
  });

  it('with several folders, addresses files by folder name and lists the folders', async () => {
    const second = tempDir('candor-second-');
    write(second, 'notes.md', 'TODO second\n');
    const roots = [root, second];
    assert.equal((await readFile(roots, `${path.basename(second)}/notes.md`)).text, 'TODO second\n');
    assert.equal((await readFile(roots, 'notes.md')).path, `${path.basename(second)}/notes.md`);
    assert.deepEqual((await listFiles(roots, '.')).text.split('\n'), [`${path.basename(root)}/`, `${path.basename(second)}/`]);
    assert.match((await searchText(roots, 'TODO second')).text, new RegExp(`^${path.basename(second)}/notes\\.md:1: TODO second`));
  });

  it('git tools print bounded text: status with branch and unsaved buffers, log with a marker', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    for (let i = 0; i < 3; i++) {
      write(repo, 'a.txt', `a${i}\n`);
      git(repo, 'commit', '-q', '-am', `change ${i}`);
    }
    write(repo, 'b.txt', 'b\n');
    const guard = await ReadOnlyGit.open(repo);
    const status = await gitStatusTool(guard, { unsaved: { unsavedFiles: () => [path.join(repo, 'a.txt')] } });
    assert.match(status.text, /^on branch main at [0-9a-f]{12}\n2 changed entries:\nuntracked b\.txt\nunsaved {3}a\.txt$/);
    const log = await gitLogTool(guard, { maxCount: 2 });
    assert.match(log.text, /^[0-9a-f]{7,} \d{4}-\d\d-\d\d Fixture Author: change 2\n[0-9a-f]{7,} .*: change 1\n\[truncated: showed 2 commits; older ones exist\]$/);
  });

  it('boundText cuts at a line break when one fits', () => {
    const text = 'line one\nline two\nline three\n';
    assert.deepEqual(boundText(text, 1000), { text, truncated: false });
    assert.deepEqual(boundText(text, 12), { text: 'line one\n[truncated: showed 9 of 29 bytes]', truncated: true });
  });
});
