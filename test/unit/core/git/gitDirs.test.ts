import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { configValue, hiddenForGate, repositoryPaths } from '../../../../src/core/git/gitDirs';
import { isGitGuardError } from '../../../../src/core/git';
import { git, removeTempDirs, tempDir, workspaceRepo, write } from '../evolution/helpers';

/** A .git file pointing somewhere: where git itself goes, read without running any program. */
function dotGitTarget(root: string): string {
  const line = fs.readFileSync(path.join(root, '.git'), 'utf8').trim();
  return path.resolve(root, line.replace(/^gitdir:\s*/, ''));
}

describe('git dirs: where a checkout keeps its git data, found without running git', () => {
  afterEach(() => removeTempDirs());

  it('a plain checkout: its .git is the git dir and the common dir; nothing else to hide', async () => {
    const repo = workspaceRepo();
    const paths = await repositoryPaths(repo);
    assert.deepEqual(paths, { workTree: repo, gitDir: path.join(repo, '.git'), commonDir: path.join(repo, '.git'), otherWorkTrees: [], alternates: [] });
    assert.deepEqual(await hiddenForGate(repo), [repo, path.join(repo, '.git')].sort());
  });

  it('a linked worktree (real `git worktree add`): the main .git and the main checkout are hidden too', async () => {
    const main = workspaceRepo();
    write(main, 'untracked-secret.txt', 'work in progress of the main checkout');
    const linked = path.join(tempDir('candor-linked-'), 'linked');
    git(main, 'worktree', 'add', '-q', linked, '-b', 'side');
    // The trap: the linked worktree's own folder holds only a pointer; hiding that folder alone leaves the main checkout in view.
    assert.ok(fs.statSync(path.join(linked, '.git')).isFile());
    const pointed = dotGitTarget(linked);
    assert.equal(pointed, path.join(main, '.git', 'worktrees', 'linked'));
    const mainFromPointer = path.resolve(pointed, fs.readFileSync(path.join(pointed, 'commondir'), 'utf8').trim(), '..');
    assert.ok(fs.existsSync(path.join(mainFromPointer, 'untracked-secret.txt')), 'the main checkout is reachable from the worktree by paths alone');
    assert.equal(path.relative(linked, mainFromPointer).startsWith('..'), true, 'and hiding the worktree folder alone does not cover it');

    const paths = await repositoryPaths(linked);
    assert.equal(paths.gitDir, pointed);
    assert.equal(paths.commonDir, path.join(main, '.git'));
    assert.equal(paths.mainWorkTree, main);
    const hidden = await hiddenForGate(linked);
    for (const dir of [linked, pointed, path.join(main, '.git'), main]) assert.ok(hidden.includes(dir), `${dir} is hidden: ${hidden.join(', ')}`);

    // From the main checkout, the linked worktree (another checkout of the same repository) is hidden as well.
    const fromMain = await repositoryPaths(main);
    assert.deepEqual(fromMain.otherWorkTrees, [linked]);
    assert.ok((await hiddenForGate(main)).includes(linked));
  });

  it('a clone made with --shared borrows objects: the borrowed folder and the repository it belongs to are hidden', async () => {
    const base = workspaceRepo();
    const shared = path.join(tempDir('candor-shared-'), 'shared');
    git(path.dirname(shared), 'clone', '-q', '--shared', base, shared);
    const alternates = fs.readFileSync(path.join(shared, '.git', 'objects', 'info', 'alternates'), 'utf8').trim();
    assert.equal(alternates, path.join(base, '.git', 'objects'), 'the trap: the clone reads its objects from the base repository');
    const paths = await repositoryPaths(shared);
    assert.deepEqual(paths.alternates, [path.join(base, '.git', 'objects')]);
    const hidden = await hiddenForGate(shared);
    for (const dir of [path.join(base, '.git', 'objects'), path.join(base, '.git'), base]) assert.ok(hidden.includes(dir), dir);
  });

  it('alternates are followed transitively, relative lines resolve against the objects folder, comments are skipped', async () => {
    const a = workspaceRepo();
    const b = workspaceRepo();
    const c = workspaceRepo();
    fs.writeFileSync(path.join(c, '.git', 'objects', 'info', 'alternates'), `# borrowed\n${path.relative(path.join(c, '.git', 'objects'), path.join(b, '.git', 'objects'))}\n`);
    fs.writeFileSync(path.join(b, '.git', 'objects', 'info', 'alternates'), `${path.join(a, '.git', 'objects')}\n`);
    assert.deepEqual((await repositoryPaths(c)).alternates, [path.join(b, '.git', 'objects'), path.join(a, '.git', 'objects')]);
  });

  it('a submodule: the superproject (its git dir and its whole checkout) is hidden as well', async () => {
    const agent = workspaceRepo();
    const superproject = workspaceRepo();
    git(superproject, '-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', agent, 'agent');
    git(superproject, 'commit', '-qm', 'add the agent as a submodule');
    const sub = path.join(superproject, 'agent');
    write(superproject, 'superproject-secret.txt', 'not the agent');
    assert.equal(dotGitTarget(sub), path.join(superproject, '.git', 'modules', 'agent'), "the trap: the submodule's git dir is inside the superproject's");

    const paths = await repositoryPaths(sub);
    assert.equal(paths.gitDir, path.join(superproject, '.git', 'modules', 'agent'));
    assert.equal(paths.superproject?.gitDir, path.join(superproject, '.git'));
    assert.equal(paths.superproject?.workTree, superproject);
    const hidden = await hiddenForGate(sub);
    for (const dir of [sub, path.join(superproject, '.git', 'modules', 'agent'), path.join(superproject, '.git'), superproject]) assert.ok(hidden.includes(dir), dir);
  });

  it('a .git file that leads nowhere is not a repository', async () => {
    const dir = tempDir('candor-notrepo-');
    fs.writeFileSync(path.join(dir, '.git'), 'gitdir: /nonexistent/candor/.git\n');
    await assert.rejects(repositoryPaths(dir), (err: unknown) => isGitGuardError(err, 'not-a-repo'));
    // A FIFO named .git is opened without waiting and refused: the lookup never hangs.
    fs.rmSync(path.join(dir, '.git'));
    execFileSync('mkfifo', [path.join(dir, '.git')]);
    await assert.rejects(repositoryPaths(dir), (err: unknown) => isGitGuardError(err, 'not-a-repo'));
  });

  it('reads config values as git writes them', () => {
    const text = '[core]\n\tbare = false\n\tworktree = "../../../my sub" ; a comment\n[core "x"]\n\tworktree = elsewhere\n[remote "origin"]\n\turl = x\n';
    assert.equal(configValue(text, 'core', 'worktree'), '../../../my sub');
    assert.equal(configValue(text, 'core', 'bare'), 'false');
    assert.equal(configValue('[Core]\nWorkTree=a\\\\b\n', 'core', 'worktree'), 'a\\b');
    assert.equal(configValue('[core]\nbare\n', 'core', 'bare'), 'true');
    assert.equal(configValue('[remote "core"]\nworktree = x\n', 'core', 'worktree'), undefined);
  });
});
