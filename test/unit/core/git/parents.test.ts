import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { ceilingFor, parentRepository } from '../../../../src/core/git/parents';
import { findRepositories } from '../../../../src/core/git/repositories';
import { gitDiffTool } from '../../../../src/core/workspace/gitTools';
import { plainGit } from './helpers/hostileRepo';
import { git, removeTempDirs, repoWith, tempDir, write } from './helpers/repo';

/**
 * A workspace folder inside a larger repository: git's own discovery would
 * use that repository and show files outside the folder.
 */

/** A parent repository with a modified secret.txt, and a workspace folder `sub/` inside it. */
function parentWithSecret(): { parent: string; sub: string } {
  const parent = repoWith({ 'secret.txt': 'nothing yet\n', 'sub/notes.txt': 'notes\n' });
  write(parent, 'secret.txt', 'password = hunter2-in-progress\n');
  return { parent, sub: path.join(parent, 'sub') };
}

describe('read-only git guard: repositories above a workspace folder', function () {
  this.timeout(30_000);
  after(removeTempDirs);

  it('by default a folder inside a repository is not opened, so the secret above it stays unseen', async () => {
    const { parent, sub } = parentWithSecret();
    assert.match(plainGit(sub, ['diff']).output, /hunter2/, 'trap: plain git in sub/ shows the modified secret above it');

    await assert.rejects(ReadOnlyGit.open(sub), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'not-a-repo');
      assert.ok((err as Error).message.includes(`the repository above it (${parent}) was not opened`));
      return true;
    });
    assert.equal(parentRepository(sub), parent);
    const [entry] = await findRepositories([sub]);
    assert.ok(entry?.status === 'no-repo');
    assert.equal(entry.error.kind, 'not-a-repo');
    assert.equal(entry.parent, parent);
  });

  it("with 'always' the repository above is opened and its changes are seen", async () => {
    const { parent, sub } = parentWithSecret();
    const guard = await ReadOnlyGit.open(sub, { openRepositoryInParentFolders: 'always' });
    assert.equal(guard.root, parent);
    assert.match(await guard.diffUnstaged(), /hunter2/);
    assert.match((await gitDiffTool(guard)).text, /secret\.txt/);
    const [entry] = await findRepositories([sub], { openRepositoryInParentFolders: 'always' });
    assert.ok(entry?.status === 'repo' && entry.repo.root === parent);
  });

  it('a folder reached through a symlink is held to the same rule', async () => {
    const { sub } = parentWithSecret();
    const link = path.join(tempDir('candor-link-'), 'workspace');
    fs.symlinkSync(sub, link);
    assert.match(plainGit(link, ['diff']).output, /hunter2/, 'trap: plain git follows the link and finds the parent');
    await assert.rejects(ReadOnlyGit.open(link), { kind: 'not-a-repo' });
  });

  it('a repository of its own inside a parent repository is opened as itself', async () => {
    const { parent, sub } = parentWithSecret();
    git(sub, 'init', '-q', '-b', 'main');
    const guard = await ReadOnlyGit.open(sub);
    assert.equal(guard.root, sub);
    assert.doesNotMatch(await guard.diffUnstaged(), /hunter2/);
    assert.equal(parentRepository(sub), parent, 'there is still a repository above; it is just not the one used');
  });

  it('refuses a work tree that core.worktree points outside the folder', async () => {
    const outside = repoWith({ 'id_rsa': 'old key\n' });
    write(outside, 'id_rsa', '-----BEGIN OPENSSH PRIVATE KEY-----\n');
    const folder = tempDir('candor-worktree-');
    fs.renameSync(path.join(outside, '.git'), path.join(folder, '.git'));
    git(folder, 'config', 'core.worktree', outside);
    assert.match(plainGit(folder, ['diff']).output, /PRIVATE KEY/, 'trap: plain git diff in the folder shows a file outside it');

    for (const rule of ['never', 'always'] as const) {
      await assert.rejects(ReadOnlyGit.open(folder, { openRepositoryInParentFolders: rule }), (err: unknown) => {
        assert.equal((err as { kind?: string }).kind, 'not-a-repo');
        assert.match((err as Error).message, /core\.worktree/);
        return true;
      }, rule);
    }
  });

  it('parentRepository looks at the disk only: a .git folder or file above, or nothing', () => {
    const plain = tempDir('candor-plain-');
    write(plain, 'a/b/c.txt', 'c\n');
    assert.equal(parentRepository(path.join(plain, 'a', 'b')), undefined);
    write(plain, 'a/.git', 'gitdir: /nowhere\n');
    assert.equal(parentRepository(path.join(plain, 'a', 'b')), path.join(plain, 'a'));
    assert.equal(parentRepository(path.join(plain, 'a')), undefined, 'the folder itself is not above itself');
  });

  it('ceilingFor: the parent of the folder under never, nothing under always or at a root', () => {
    assert.equal(ceilingFor('/home/u/project', 'never'), '/home/u');
    assert.equal(ceilingFor('/home/u/project', 'always'), undefined);
    assert.equal(ceilingFor('/', 'never'), undefined);
  });
});
