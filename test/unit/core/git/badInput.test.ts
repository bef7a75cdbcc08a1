import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readOnlyReason } from '../../../../src/core/git/dirty';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { findRepositories } from '../../../../src/core/git/repositories';
import { gitDiffTool, gitStatusTool } from '../../../../src/core/workspace/gitTools';
import { openInChild } from './helpers/child';
import { git, removeTempDirs, repoWith, tempDir, write } from './helpers/repo';

describe('read-only git guard: bad input', function () {
  this.timeout(60_000);
  after(removeTempDirs);

  it('a folder outside any repository is not-a-repo, with the folder in the message', async () => {
    const plain = tempDir();
    await assert.rejects(ReadOnlyGit.open(plain), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'not-a-repo');
      assert.ok((err as Error).message.includes(plain));
      return true;
    });
    await assert.rejects(ReadOnlyGit.open(path.join(plain, 'missing')), { kind: 'not-a-repo' });
  });

  it('a bare repository (no work tree) is not-a-repo', async () => {
    const bare = tempDir();
    git(bare, 'init', '-q', '--bare');
    await assert.rejects(ReadOnlyGit.open(bare), { kind: 'not-a-repo' });
  });

  it('a missing git binary is git-missing: a bad gitBinary, or no git on PATH; a relative gitBinary is invalid', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    await assert.rejects(ReadOnlyGit.open(repo, { gitBinary: '/nonexistent/bin/git' }), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'git-missing');
      assert.match((err as Error).message, /is git installed and on PATH/);
      return true;
    });
    await assert.rejects(ReadOnlyGit.open(repo, { gitBinary: 'git' }), { kind: 'invalid' });
    // No git on PATH: in a fresh process, since git is resolved once per process.
    const emptyBin = tempDir();
    assert.deepEqual(openInChild(repo, emptyBin, repo), { kind: 'git-missing', message: 'no git found on PATH outside the folders being opened: is git installed and on PATH?' });
  });

  it('a corrupt .git/index is corrupt for status, dirty state and the status tool, and the index is left as found', async () => {
    const repo = repoWith({ 'a.txt': 'a\n' });
    const guard = await ReadOnlyGit.open(repo);
    const garbage = Buffer.from('this is not an index file at all, just garbage bytes\n');
    fs.writeFileSync(path.join(repo, '.git', 'index'), garbage);
    await assert.rejects(guard.status(), { kind: 'corrupt' });
    await assert.rejects(guard.dirtyState(), { kind: 'corrupt' });
    await assert.rejects(gitStatusTool(guard), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'corrupt');
      assert.match((err as Error).message, /git index .* cannot be read/);
      return true;
    });
    assert.deepEqual(fs.readFileSync(path.join(repo, '.git', 'index')), garbage);
  });

  it('3,000 changed files: status lists them all; the tool output and the log line stay bounded', async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1000; i++) files[`tracked/f${i}.txt`] = `v1 ${i}\n`;
    const repo = repoWith(files);
    for (let i = 0; i < 1000; i++) write(repo, `tracked/f${i}.txt`, `v2 ${i}\n`);
    for (let i = 0; i < 2000; i++) write(repo, `new/n${i}.txt`, `n ${i}\n`);
    const guard = await ReadOnlyGit.open(repo);

    const status = await guard.status();
    assert.equal(status.unstaged.length, 1000);
    assert.equal(status.untracked.length, 2000);

    const tool = await gitStatusTool(guard);
    assert.ok(tool.truncated);
    assert.match(tool.text, /3,000 changed entries:/);
    assert.match(tool.text, /\[truncated: showed 200 of 3,000 entries\]$/);
    assert.ok(tool.text.length < 16_000, `${tool.text.length} chars`);

    const diff = await gitDiffTool(guard, { which: 'unstaged', maxBytes: 8192 });
    assert.ok(diff.truncated);
    assert.match(diff.text, /\[truncated: showed [\d,]+ of [\d,]+ bytes\]$/);
    assert.ok(Buffer.byteLength(diff.text) < 8192 + 200);

    const line = readOnlyReason(await guard.dirtyState()) ?? '';
    assert.match(line, /^dirty working tree — read-only cycle: 1,000 unstaged \(.*, … 995 more\); 2,000 untracked/);
    assert.ok(line.length < 400);
  });

  it('findRepositories: one entry per folder, shared guard for one repository, typed errors for the rest', async () => {
    const repo = repoWith({ 'a/x.txt': 'x\n', 'b/y.txt': 'y\n' });
    const plain = tempDir();
    const folders = [path.join(repo, 'a'), path.join(repo, 'b'), plain];
    const entries = await findRepositories(folders, { openRepositoryInParentFolders: 'always' });
    assert.deepEqual(entries.map((e) => e.status), ['repo', 'repo', 'no-repo']);
    const [first, second, third] = entries;
    assert.ok(first?.status === 'repo' && second?.status === 'repo');
    assert.equal(first.repo, second.repo);
    assert.equal(first.repo.root, repo);
    assert.ok(third?.status === 'no-repo' && third.error.kind === 'not-a-repo');
    assert.equal(third.parent, undefined, 'no repository above a plain temp folder');
    assert.deepEqual(await findRepositories([]), []);

    // By default the folders inside the repository are not opened, and say which repository was left closed.
    const closed = await findRepositories(folders);
    assert.deepEqual(closed.map((e) => (e.status === 'no-repo' ? [e.error.kind, e.parent] : ['repo'])), [['not-a-repo', repo], ['not-a-repo', repo], ['not-a-repo', undefined]]);
  });
});
