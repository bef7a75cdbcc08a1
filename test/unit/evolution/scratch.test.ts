import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkScratchPath, cloneIntoScratch, scratchGit, type Scratch } from '../../../src/core/evolution/scratchGit';
import { prepareScratch, setupInputsMatch, setupIsCurrent, setupPlan, setupStampFile, writeSetupStamp } from '../../../src/core/evolution/scratch';
import { repoId, repoPaths } from '../../../src/core/evolution/paths';
import { git, removeTempDirs, snapshot, tempDir, workspaceRepo, write } from './helpers';

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

  it('setup: the command given, else the install the lock file implies, else none', () => {
    const dir = tempDir('candor-locks-');
    assert.equal(setupPlan(dir, ''), undefined);
    assert.equal(setupPlan(dir, 'make deps')?.command, 'make deps');
    for (const [file, command] of [['pnpm-lock.yaml', 'pnpm install --frozen-lockfile'], ['yarn.lock', 'yarn install --frozen-lockfile'], ['package-lock.json', 'npm ci']]) {
      write(dir, file, 'lock');
      assert.equal(setupPlan(dir, '')?.command, command);
      assert.equal(setupPlan(dir, '')?.lockFile, file);
    }
    assert.equal(setupPlan(dir, 'make deps')?.command, 'make deps', 'the setting wins over the lock file');
  });

  it('dependencies survive the per-run clean while the lock file is unchanged, and go when it changes', async () => {
    write(ws, 'package-lock.json', '{"lockfileVersion": 3}\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'lock');
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    const stamp = setupStampFile(scratch);
    assert.equal(path.dirname(stamp), path.dirname(scratch.dir), 'the stamp lives beside the clone, not in it');
    assert.equal(setupIsCurrent(scratch.dir, '', stamp), false, 'never installed');
    write(scratch.dir, 'node_modules/dep/index.js', 'installed');
    writeSetupStamp(stamp, setupPlan(scratch.dir, '') ?? assert.fail('plan'));
    assert.equal(setupIsCurrent(scratch.dir, '', stamp), true);
    assert.equal(git(scratch.dir, 'status', '--porcelain').trim(), '', 'node_modules is excluded from changes');

    await prepareScratch({ dataDir, repositoryRoot: ws, head, setupCommand: '' });
    assert.ok(fs.existsSync(path.join(scratch.dir, 'node_modules/dep/index.js')), 'kept: the lock file did not change');

    write(ws, 'package-lock.json', '{"lockfileVersion": 3, "packages": {}}\n');
    git(ws, 'commit', '-qam', 'lock changed');
    await prepareScratch({ dataDir, repositoryRoot: ws, head: git(ws, 'rev-parse', 'HEAD').trim(), setupCommand: '' });
    assert.equal(fs.existsSync(path.join(scratch.dir, 'node_modules')), false, 'cleaned: the lock file changed');
    assert.equal(setupIsCurrent(scratch.dir, '', stamp), false);
    assert.equal(setupIsCurrent(scratch.dir, 'other command', stamp), false);
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
