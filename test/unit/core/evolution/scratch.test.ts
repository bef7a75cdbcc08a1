import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isUnsafeFile } from '../../../../src/core/boundedRead';
import { checkScratchPath, cloneIntoScratch, scratchGit, type Scratch } from '../../../../src/core/evolution/scratchGit';
import { prepareScratch, resetTo, setupInputsMatch, setupIsCurrent, setupPlan, setupStampFile, writeSetupStamp } from '../../../../src/core/evolution/scratch';
import { DEFAULT_MAX_CHANGED_BYTES, keepChange, measureChange, stagingDir } from '../../../../src/core/evolution/measure';
import { repoId, repoPaths } from '../../../../src/core/evolution/paths';
import { FIXTURE_ENV, git, removeTempDirs, snapshot, tempDir, workspaceRepo, write } from './helpers';
import { cannotChown, skipUnless } from '../../../helpers/preconditions';

const refusedOutside = (err: unknown): boolean => (err as { kind?: string }).kind === 'outside-scratch';

describe('scratch git: only ever inside <dataDir>/scratch/', () => {
  let dataDir: string;
  let ws: string;
  beforeEach(() => {
    dataDir = tempDir('candor-data-');
    ws = workspaceRepo();
  });
  afterEach(() => removeTempDirs());

  it('refuses the workspace, the scratch folder itself, `..` escapes and symlinks out — before git runs', async () => {
    const before = snapshot(ws);
    const aimed: Scratch[] = [
      { dataDir, dir: ws },
      { dataDir, dir: path.join(dataDir, 'scratch') },
      { dataDir, dir: path.join(dataDir, 'scratch', '..', 'elsewhere') },
      { dataDir, dir: dataDir },
      { dataDir: ws, dir: path.join(dataDir, 'scratch', 'x') },
    ];
    fs.mkdirSync(path.join(dataDir, 'scratch'), { recursive: true });
    fs.symlinkSync(ws, path.join(dataDir, 'scratch', 'link-to-workspace'));
    aimed.push({ dataDir, dir: path.join(dataDir, 'scratch', 'link-to-workspace') });
    for (const scratch of aimed) {
      assert.throws(() => checkScratchPath(scratch), refusedOutside, scratch.dir);
      await assert.rejects(scratchGit(scratch, ['reset', '--hard']), refusedOutside);
      await assert.rejects(scratchGit(scratch, ['clean', '-fdx']), refusedOutside);
      await assert.rejects(cloneIntoScratch(scratch, ws), refusedOutside);
    }
    assert.deepEqual(snapshot(ws), before);
  });

  it('never walks up into an enclosing repository: GIT_DIR is pinned to the clone', async () => {
    // A data folder that itself lies in some git repository (not the workspace).
    git(dataDir, 'init', '-q', '-b', 'main');
    const scratch: Scratch = { dataDir, dir: path.join(dataDir, 'scratch', 'no-clone-here') };
    fs.mkdirSync(scratch.dir, { recursive: true });
    await assert.rejects(scratchGit(scratch, ['status', '--porcelain']), (err: unknown) => (err as { kind?: string }).kind === 'scratch-git');
  });

  it('clones with objects copied, never hard-linked, and keeps nothing that names the source', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const before = snapshot(ws);
    // The trap: a plain local clone shares the source's object files and names its path in the reflog.
    const plain = path.join(tempDir('candor-plain-clone-'), 'clone');
    git(path.dirname(plain), 'clone', '-q', '--no-checkout', ws, plain);
    assert.ok(fs.statSync(objectFile(plain, head)).nlink >= 2, 'a plain local clone hard-links');
    assert.ok(fs.readFileSync(path.join(plain, '.git', 'logs', 'HEAD'), 'utf8').includes(ws), 'and its reflog names the source');

    const prepared = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    assert.equal(prepared.cloned, true);
    assert.equal(prepared.scratch.dir, path.join(dataDir, 'scratch', repoId(ws)));
    assert.equal(git(prepared.scratch.dir, 'rev-parse', 'HEAD').trim(), head);
    assert.equal(git(prepared.scratch.dir, 'remote').trim(), '', 'no origin: nothing in the clone can push to the workspace');
    assert.equal(fs.statSync(objectFile(prepared.scratch.dir, head)).nlink, 1, 'the commit object is a copy');
    assert.equal(git(prepared.scratch.dir, 'config', 'core.logAllRefUpdates').trim(), 'false');
    assert.deepEqual(filesNaming(path.join(prepared.scratch.dir, '.git'), ws), [], 'nothing in .git names the source');
    assert.deepEqual(snapshot(ws), before);
  });

  it('refreshes by fetch and starts each run at the workspace HEAD (a detached one too), clean', async () => {
    const first = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head: first, setupCommand: '' });
    write(ws, 'greet.js', "module.exports = () => 'hello again';\n");
    git(ws, 'commit', '-qam', 'second');
    git(ws, 'checkout', '-q', '--detach');
    write(ws, 'greet.js', "module.exports = () => 'detached';\n");
    git(ws, 'commit', '-qam', 'detached commit');
    const detached = git(ws, 'rev-parse', 'HEAD').trim();
    write(scratch.dir, 'greet.js', 'scribbled');
    write(scratch.dir, 'junk.txt', 'junk');
    const again = await prepareScratch({ dataDir, repositoryRoot: ws, head: detached, setupCommand: '' });
    assert.deepEqual([again.cloned, again.fetched], [false, true]);
    assert.equal(git(scratch.dir, 'rev-parse', 'HEAD').trim(), detached);
    assert.equal(fs.readFileSync(path.join(scratch.dir, 'greet.js'), 'utf8'), "module.exports = () => 'detached';\n");
    assert.equal(git(scratch.dir, 'status', '--porcelain', '--ignored').trim(), '');
    assert.deepEqual(filesNaming(path.join(scratch.dir, '.git'), ws), [], 'the fetch wrote no FETCH_HEAD and no reflog');
    const third = await prepareScratch({ dataDir, repositoryRoot: ws, head: first, setupCommand: '' });
    assert.deepEqual([third.cloned, third.fetched], [false, false], 'a commit already there needs no fetch');
  });

  it('a clone from before (hard-linked, with a reflog) is made afresh', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    fs.rmSync(scratch.dir, { recursive: true });
    git(path.dirname(scratch.dir), 'clone', '-q', '--no-checkout', ws, scratch.dir);
    assert.ok(fs.statSync(objectFile(scratch.dir, head)).nlink >= 2);
    const again = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    assert.equal(again.cloned, true);
    assert.equal(fs.statSync(objectFile(scratch.dir, head)).nlink, 1);
    assert.deepEqual(filesNaming(path.join(scratch.dir, '.git'), ws), []);
  });

  it('a clone damaged beyond use is cloned afresh', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    fs.rmSync(path.join(scratch.dir, '.git', 'objects'), { recursive: true });
    const again = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    assert.equal(again.cloned, true);
    assert.equal(git(scratch.dir, 'rev-parse', 'HEAD').trim(), head);
  });

  it('setup: the command given, else the install the lock file implies, else none', async () => {
    const dir = tempDir('candor-locks-');
    assert.equal(await setupPlan(dir, ''), undefined);
    assert.equal((await setupPlan(dir, 'make deps'))?.command, 'make deps');
    for (const [file, command] of [['pnpm-lock.yaml', 'pnpm install --frozen-lockfile'], ['yarn.lock', 'yarn install --frozen-lockfile'], ['package-lock.json', 'npm ci']]) {
      write(dir, file, 'lock');
      assert.equal((await setupPlan(dir, ''))?.command, command);
      assert.equal((await setupPlan(dir, ''))?.lockFile, file);
    }
    assert.equal((await setupPlan(dir, 'make deps'))?.command, 'make deps', 'the setting wins over the lock file');
    const before = (await setupPlan(dir, ''))?.stamp;
    write(dir, 'package.json', '{"scripts": {"postinstall": "node plant.js"}}\n');
    assert.notEqual((await setupPlan(dir, ''))?.stamp, before, 'the stamp covers the manifest too, not only the lock file');
  });

  it('dependencies survive the per-run clean while the lock file is unchanged, and go when it changes', async () => {
    write(ws, 'package-lock.json', '{"lockfileVersion": 3}\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'lock');
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    const stamp = setupStampFile(scratch);
    assert.equal(path.dirname(stamp), path.dirname(scratch.dir), 'the stamp lives beside the clone, not in it');
    assert.equal(await setupIsCurrent(scratch.dir, '', stamp), false, 'never installed');
    write(scratch.dir, 'node_modules/dep/index.js', 'installed');
    await writeSetupStamp(scratch, (await setupPlan(scratch.dir, '')) ?? assert.fail('plan'));
    assert.equal(await setupIsCurrent(scratch.dir, '', stamp), true);
    assert.equal(git(scratch.dir, 'status', '--porcelain').trim(), '', 'node_modules is excluded from changes');

    await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    assert.ok(fs.existsSync(path.join(scratch.dir, 'node_modules/dep/index.js')), 'kept: the lock file did not change');

    write(ws, 'package-lock.json', '{"lockfileVersion": 3, "packages": {}}\n');
    git(ws, 'commit', '-qam', 'lock changed');
    await prepareScratch({ dataDir, repositoryRoot: ws, head: git(ws, 'rev-parse', 'HEAD').trim(), setupCommand: '' });
    assert.equal(fs.existsSync(path.join(scratch.dir, 'node_modules')), false, 'cleaned: the lock file changed');
    assert.equal(await setupIsCurrent(scratch.dir, '', stamp), false);
    assert.equal(await setupIsCurrent(scratch.dir, 'other command', stamp), false);
  });

  it("setup inputs match HEAD only while the manifest, lock file and package settings are HEAD's bytes", async () => {
    write(ws, 'package.json', '{"name": "x"}\n');
    write(ws, 'package-lock.json', '{"lockfileVersion": 3}\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'manifest');
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    assert.equal(await setupInputsMatch(scratch, head), true);
    const changes: Array<[string, () => void]> = [
      ['the lock file', () => write(scratch.dir, 'package-lock.json', '{"lockfileVersion": 3, "packages": {"evil": {}}}\n')],
      ['the manifest', () => write(scratch.dir, 'package.json', '{"name": "x", "scripts": {"preinstall": "curl evil"}}\n')],
      ['a new .npmrc', () => write(scratch.dir, '.npmrc', 'registry=http://127.0.0.1:1/\n')],
      ['a lock file removed', () => fs.rmSync(path.join(scratch.dir, 'package-lock.json'))],
      ['a symlink in its place', () => { fs.rmSync(path.join(scratch.dir, 'package.json')); fs.symlinkSync(path.join(ws, 'package.json'), path.join(scratch.dir, 'package.json')); }],
    ];
    for (const [name, change] of changes) {
      change();
      assert.equal(await setupInputsMatch(scratch, head), false, name);
      await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
      assert.equal(await setupInputsMatch(scratch, head), true, `${name}: restored`);
    }
  });

  it('repo ids: readable, distinct for two folders of the same name', () => {
    const a = tempDir('candor-a-');
    const b = tempDir('candor-b-');
    fs.mkdirSync(path.join(a, 'My Project!'));
    fs.mkdirSync(path.join(b, 'My Project!'));
    const idA = repoId(path.join(a, 'My Project!'));
    assert.match(idA, /^my-project-[0-9a-f]{12}$/);
    assert.notEqual(idA, repoId(path.join(b, 'My Project!')));
    assert.equal(repoPaths(dataDir, ws).scratch, path.join(dataDir, 'scratch', repoId(ws)));
  });
});

describe('scratch clone: a clean start for every run, whatever the last run left', () => {
  let dataDir: string;
  let ws: string;
  beforeEach(() => {
    dataDir = tempDir('candor-data-');
    ws = workspaceRepo({ 'lib/util.js': 'module.exports = 1;\n' });
  });
  afterEach(() => removeTempDirs());

  const head = (): string => git(ws, 'rev-parse', 'HEAD').trim();
  const prepare = (setupCommand = ''): ReturnType<typeof prepareScratch> => prepareScratch({ dataDir, repositoryRoot: ws, head: head(), setupCommand });

  it('a FIFO named package-lock.json (and one in a tracked folder): a plain read hangs and git clean leaves them; the reset removes them, reading nothing', async () => {
    const { scratch } = await prepare();
    const fifo = path.join(scratch.dir, 'package-lock.json');
    const deep = path.join(scratch.dir, 'lib', 'pipe');
    execFileSync('mkfifo', [fifo, deep]);
    // The traps: a plain read waits for a writer forever (killed here by the timeout), and git does not list a FIFO, so git clean keeps it.
    assert.equal(spawnSync(process.execPath, ['-e', `require('fs').readFileSync(${JSON.stringify(fifo)})`], { timeout: 1500 }).signal, 'SIGTERM');
    git(scratch.dir, 'clean', '-ffdxq');
    assert.ok(fs.lstatSync(fifo).isFIFO() && fs.lstatSync(deep).isFIFO(), 'git clean left both FIFOs');
    // While the FIFO is there, planning setup refuses it by name instead of hanging.
    await assert.rejects(setupPlan(scratch.dir, ''), (err: unknown) => isUnsafeFile(err) && /^package-lock\.json in the scratch clone is a FIFO/.test(err.message));

    const again = await prepare();
    assert.equal(again.cloned, false);
    assert.equal(fs.existsSync(fifo), false);
    assert.equal(fs.existsSync(deep), false);
    assert.equal(git(scratch.dir, 'status', '--porcelain', '--ignored').trim(), '');
    assert.equal(await setupPlan(scratch.dir, ''), undefined, 'no lock file: no setup');
  });

  it('a folder named package-lock.json, untracked or in place of the tracked file: refused by name while there, gone after the reset', async () => {
    write(ws, 'yarn.lock', '# yarn lockfile v1\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'yarn lock');
    const { scratch } = await prepare();
    fs.mkdirSync(path.join(scratch.dir, 'package-lock.json', 'inside'), { recursive: true });
    fs.rmSync(path.join(scratch.dir, 'yarn.lock'));
    write(scratch.dir, 'yarn.lock/nested.txt', 'a folder where the tracked lock file was');
    // The trap: a plain read of the name fails, and would fail every later run the same way.
    assert.throws(() => fs.readFileSync(path.join(scratch.dir, 'package-lock.json')), /EISDIR/);
    await assert.rejects(setupPlan(scratch.dir, ''), (err: unknown) => isUnsafeFile(err) && /is a folder/.test(err.message));

    await prepare();
    assert.equal(fs.existsSync(path.join(scratch.dir, 'package-lock.json')), false);
    assert.equal(fs.readFileSync(path.join(scratch.dir, 'yarn.lock'), 'utf8'), '# yarn lockfile v1\n');
    assert.equal((await setupPlan(scratch.dir, ''))?.lockFile, 'yarn.lock');
  });

  it('a symlink from the lock file to /dev/zero is refused by name and never read; the reset removes it', async () => {
    const { scratch } = await prepare();
    const link = path.join(scratch.dir, 'package-lock.json');
    fs.symlinkSync('/dev/zero', link);
    // The trap: a read through the link goes on past any cap (stopped here after 2 MiB).
    const fd = fs.openSync(link, 'r');
    try {
      assert.equal(fs.readSync(fd, Buffer.alloc(2 * 1024 * 1024), 0, 2 * 1024 * 1024, null), 2 * 1024 * 1024);
    } finally {
      fs.closeSync(fd);
    }
    await assert.rejects(setupPlan(scratch.dir, ''), (err: unknown) => isUnsafeFile(err) && /^package-lock\.json in the scratch clone is a symbolic link/.test(err.message));
    await prepare();
    assert.equal(fs.existsSync(link), false);
  });

  it('a clone that cannot be reset (its index made a folder) is cloned afresh by the next run', async () => {
    const { scratch } = await prepare();
    fs.rmSync(path.join(scratch.dir, '.git', 'index'));
    fs.mkdirSync(path.join(scratch.dir, '.git', 'index', 'x'), { recursive: true });
    // The trap: git cannot work in it any more.
    assert.throws(() => git(scratch.dir, 'checkout', '--force', '--detach', head()));
    const again = await prepare();
    assert.equal(again.cloned, true);
    assert.equal(git(scratch.dir, 'status', '--porcelain', '--ignored').trim(), '');
  });

  it('no lock file: a node_modules/.bin planted by a gate does not survive the reset, even with a setup command and a stamp that matches', async () => {
    const { scratch } = await prepare('true');
    write(scratch.dir, 'node_modules/.bin/planted', '#!/bin/sh\necho planted\n');
    await writeSetupStamp(scratch, (await setupPlan(scratch.dir, 'true')) ?? assert.fail('plan'));
    // The trap: the reset's old rule (clean everything but node_modules while the stamp matches) keeps it.
    const copy = path.join(tempDir('candor-old-rule-'), 'copy');
    fs.cpSync(scratch.dir, copy, { recursive: true });
    git(copy, 'clean', '-ffdxq', '-e', 'node_modules');
    assert.ok(fs.existsSync(path.join(copy, 'node_modules/.bin/planted')), 'the old rule keeps the planted file');

    await prepare('true');
    assert.equal(fs.existsSync(path.join(scratch.dir, 'node_modules')), false);
    assert.equal(await setupIsCurrent(scratch.dir, 'true', setupStampFile(scratch)), false, 'setup runs again');
  });

  it('with a lock file: only the folder setup filled on an unchanged clone is kept; a nested node_modules never is; one filled while the clone held a change goes', async () => {
    write(ws, 'package-lock.json', '{"lockfileVersion": 3}\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'lock');
    const { scratch } = await prepare();
    const plan = (await setupPlan(scratch.dir, '')) ?? assert.fail('plan');
    write(scratch.dir, 'node_modules/dep/index.js', 'installed by setup');
    await writeSetupStamp(scratch, plan);
    write(scratch.dir, 'lib/node_modules/.bin/planted', 'not setup');
    await prepare();
    assert.ok(fs.existsSync(path.join(scratch.dir, 'node_modules/dep/index.js')), 'kept: setup filled it for this lock file, on a clean clone');
    assert.equal(fs.existsSync(path.join(scratch.dir, 'lib/node_modules')), false, 'the exception is the top-level folder only');

    // Setup that ran while the clone held the model's change (a script the manifest runs, say) filled the folder with that change's choice.
    write(scratch.dir, 'lib/util.js', 'module.exports = "changed by the model";\n');
    write(scratch.dir, 'node_modules/.bin/planted', 'filled by setup of the change');
    await writeSetupStamp(scratch, plan);
    assert.equal(await setupIsCurrent(scratch.dir, '', setupStampFile(scratch)), true, 'within the run, setup need not run again');
    await prepare();
    assert.equal(fs.existsSync(path.join(scratch.dir, 'node_modules')), false, 'the next run does not inherit it');
  });

  it('a source that borrows objects (--shared): the clone copies them (--dissociate) and borrows nothing; an old clone that borrows is made afresh', async () => {
    const shared = path.join(tempDir('candor-shared-'), 'shared');
    git(path.dirname(shared), 'clone', '-q', '--shared', ws, shared);
    const alternates = (repo: string): string => path.join(repo, '.git', 'objects', 'info', 'alternates');
    // The trap: a local clone without --dissociate passes the source's alternates on.
    const plain = path.join(tempDir('candor-plain-'), 'plain');
    git(path.dirname(plain), 'clone', '-q', '--no-hardlinks', '--no-checkout', shared, plain);
    assert.equal(fs.readFileSync(alternates(plain), 'utf8').trim(), path.join(ws, '.git', 'objects'));

    const sharedHead = git(shared, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: shared, head: sharedHead, setupCommand: '' });
    assert.equal(fs.existsSync(alternates(scratch.dir)), false);
    // With the borrowed objects out of reach, the clone still has all of its own.
    fs.renameSync(path.join(ws, '.git', 'objects'), path.join(ws, '.git', 'objects-away'));
    try {
      git(scratch.dir, 'fsck', '--no-dangling', '--connectivity-only');
      assert.equal(git(scratch.dir, 'rev-parse', 'HEAD').trim(), sharedHead);
    } finally {
      fs.renameSync(path.join(ws, '.git', 'objects-away'), path.join(ws, '.git', 'objects'));
    }
    fs.writeFileSync(alternates(scratch.dir), `${path.join(ws, '.git', 'objects')}\n`);
    const again = await prepareScratch({ dataDir, repositoryRoot: shared, head: sharedHead, setupCommand: '' });
    assert.equal(again.cloned, true, 'a clone that borrows is made afresh');
    assert.equal(fs.existsSync(alternates(scratch.dir)), false);
  });

  it('a linked worktree as the agent repository: the clone is made from it, at its HEAD', async () => {
    const linked = path.join(tempDir('candor-linked-'), 'linked');
    git(ws, 'worktree', 'add', '-q', linked, '-b', 'side');
    write(linked, 'greet.js', "module.exports = () => 'hello from the worktree';\n");
    git(linked, 'commit', '-qam', 'on the side branch');
    const linkedHead = git(linked, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: linked, head: linkedHead, setupCommand: '' });
    assert.equal(git(scratch.dir, 'rev-parse', 'HEAD').trim(), linkedHead);
    assert.equal(fs.readFileSync(path.join(scratch.dir, 'greet.js'), 'utf8'), "module.exports = () => 'hello from the worktree';\n");
    assert.ok(fs.statSync(path.join(scratch.dir, '.git')).isDirectory(), 'a clone of its own, not another worktree');
  });

  it("a work tree owned by the gate's uid: plain git refuses it as dubious, Candor's git (safe.directory) works on", async function () {
    // The work tree goes to another uid than the suite's own: that needs CAP_CHOWN, which the evolution gate's user lacks.
    skipUnless(this, cannotChown());
    const { scratch } = await prepare();
    const chownTree = (uid: number): void => {
      for (const entry of fs.readdirSync(scratch.dir, { recursive: true }) as string[]) {
        if (entry === '.git' || entry.startsWith(`.git${path.sep}`)) continue;
        fs.lchownSync(path.join(scratch.dir, entry), uid, uid);
      }
      fs.chownSync(scratch.dir, uid, uid);
    };
    chownTree(64999);
    assert.equal(fs.statSync(path.join(scratch.dir, '.git')).uid, process.getuid?.(), '.git stays ours');
    // The trap: git refuses a repository whose work tree another user owns.
    assert.throws(() => execFileSync('git', ['status', '--porcelain'], { cwd: scratch.dir, env: FIXTURE_ENV, stdio: 'pipe' }), /dubious ownership/);
    assert.equal((await scratchGit(scratch, ['status', '--porcelain'])).trim(), '');
    write(scratch.dir, 'junk.txt', 'left by the gate');
    await prepare();
    assert.equal(fs.existsSync(path.join(scratch.dir, 'junk.txt')), false);
  });
});

describe('measuring a change: bytes checked before git stores anything, no blob kept of a change that does not ship', () => {
  let dataDir: string;
  let ws: string;
  beforeEach(() => {
    dataDir = tempDir('candor-data-');
    ws = workspaceRepo();
  });
  afterEach(() => removeTempDirs());

  const objects = (repo: string): string => git(repo, 'count-objects', '-v');
  const twoMiB = 'y'.repeat(2 * 1024 * 1024);

  it('a 2 MiB file over a 1 MiB limit: refused from its size, and the object store does not grow (plain `git add` would keep its blob)', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    // The trap: `git add --all` before the size check stores the blob, and discarding the change leaves it.
    const plain = path.join(tempDir('candor-plain-'), 'plain');
    git(path.dirname(plain), 'clone', '-q', '--no-hardlinks', ws, plain);
    const plainBefore = objects(plain);
    write(plain, 'big.bin', twoMiB);
    git(plain, 'add', '--all');
    git(plain, 'reset', '-q', '--hard');
    assert.notEqual(objects(plain), plainBefore, 'the discarded blob stays in a plain clone');

    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    const before = objects(scratch.dir);
    write(scratch.dir, 'big.bin', twoMiB);
    write(scratch.dir, 'greet.js', "module.exports = () => 'hello big';\n");
    const size = await measureChange(scratch, head, { maxBytes: DEFAULT_MAX_CHANGED_BYTES, maxFiles: 10 });
    assert.equal(size.staged, false);
    assert.equal(size.files, 2);
    assert.match(size.staged ? '' : size.reason, /^the change is too big: 2097\d{3} changed bytes \(limit 1048576\)$/);
    assert.match(size.diffstat, /big\.bin \| 2097152 bytes/);
    assert.equal(objects(scratch.dir), before, 'nothing was stored');
    await resetTo(scratch, head, '');
    assert.equal(objects(scratch.dir), before);
    assert.equal(fs.existsSync(stagingDir(scratch)), false);
  });

  it('a repository nested in the change, holding 64 MiB 25 folders of 200 characters deep: refused for its .git before anything sizes it (and Node could not size it by path), never counted as 0', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    const nested = path.join(scratch.dir, 'vendored');
    fs.mkdirSync(nested);
    git(nested, 'init', '-q');
    git(nested, 'commit', '-q', '--allow-empty', '-m', 'vendored');
    const deep = "n=$(printf 'd%.0s' $(seq 200)); i=0; while [ $i -lt 25 ]; do mkdir \"$n\" && cd -P \"$n\" || exit 1; i=$((i + 1)); done; fallocate -l 64M reserved";
    try {
      const made = spawnSync('sh', ['-c', deep], { cwd: nested, encoding: 'utf8' });
      assert.equal(made.status, 0, made.stderr);
      // The trap: git names the nested repository as one changed path, and its file cannot be reached by its path.
      assert.match(git(scratch.dir, 'status', '--porcelain', '--untracked-files=all'), /^\?\? vendored\/$/m);
      assert.throws(() => fs.lstatSync(path.join(nested, ...Array<string>(25).fill('d'.repeat(200)), 'reserved')), /ENAMETOOLONG/);
      const size = await measureChange(scratch, head, { maxBytes: DEFAULT_MAX_CHANGED_BYTES });
      assert.equal(size.staged, false);
      assert.match(size.staged ? '' : size.reason, /^the change holds a git repository \(vendored\/\.git\)/);
    } finally {
      spawnSync('rm', ['-rf', nested]);
    }
  });

  it('too many files is refused before staging too', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    for (let i = 0; i < 12; i++) write(scratch.dir, `many/f${i}.txt`, `${i}\n`);
    const size = await measureChange(scratch, head, { maxBytes: DEFAULT_MAX_CHANGED_BYTES, maxFiles: 10 });
    assert.equal(size.staged ? '' : size.reason, 'the change is too big: 12 changed files (limit 10)');
  });

  it('a change within the limits is staged apart: discarded, its objects go with the reset; kept, they move into the clone and a commit can be made', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    const before = objects(scratch.dir);
    const content = `${'z'.repeat(500_000)}\n`;
    write(scratch.dir, 'data.txt', content);
    const greet = "module.exports = () => 'hello world';\n";
    write(scratch.dir, 'greet.js', greet);
    const blob = git(scratch.dir, 'hash-object', 'data.txt').trim();
    const size = await measureChange(scratch, head, { maxBytes: DEFAULT_MAX_CHANGED_BYTES });
    if (!size.staged) assert.fail(size.reason);
    assert.deepEqual([size.files, size.insertions, size.deletions, size.bytes], [2, 2, 1, content.length + greet.length]);
    assert.equal(objects(scratch.dir), before, 'staged apart: the clone does not hold it yet');
    assert.throws(() => git(scratch.dir, 'cat-file', '-e', blob));
    assert.equal(git(scratch.dir, 'status', '--porcelain').trim().split('\n').length, 2, "the clone's own index is untouched");

    // Discarded (the gate failed, say): the next reset removes it, and the clone never held it.
    await resetTo(scratch, head, '');
    assert.equal(objects(scratch.dir), before);

    write(scratch.dir, 'data.txt', content);
    const kept = await measureChange(scratch, head);
    if (!kept.staged) assert.fail(kept.reason);
    await keepChange(scratch);
    assert.equal(git(scratch.dir, 'cat-file', '-t', kept.tree).trim(), 'tree');
    assert.equal(git(scratch.dir, 'cat-file', '-e', blob), '');
    const commit = (await scratchGit(scratch, ['-c', 'user.name=t', '-c', 'user.email=t@t', 'commit-tree', kept.tree, '-p', head, '-m', 'kept'])).trim();
    assert.equal(git(scratch.dir, 'show', `${commit}:data.txt`, '--'), content);
    assert.equal(fs.existsSync(stagingDir(scratch)), false);
  });

  it('no change: nothing staged, zero files', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    const size = await measureChange(scratch, head);
    assert.equal(size.files, 0);
    assert.equal(fs.existsSync(stagingDir(scratch)), false);
  });
});


function objectFile(repo: string, sha: string): string {
  return path.join(repo, '.git', 'objects', sha.slice(0, 2), sha.slice(2));
}

/** Files under `dir` whose bytes contain `text`. */
function filesNaming(dir: string, text: string): string[] {
  const found: string[] = [];
  const walk = (current: string): void => {
    for (const entry of fs.readdirSync(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && fs.readFileSync(full).includes(text)) found.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return found;
}
