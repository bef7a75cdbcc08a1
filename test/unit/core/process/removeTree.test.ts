import * as assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { removeEntriesNamed, removeTree } from '../../../../src/core/process/removeTree';
import { notRoot, skipUnless } from '../../../helpers/preconditions';

/** A folder under `parent` holding 25 nested folders of 200 characters, made by renames so no command names the long path; returns the top one. */
function deepTree(parent: string, leaf: (bottom: string) => string = () => 'echo leaf > leaf'): string {
  execFileSync('sh', ['-c', `d=$(printf 'd%.0s' $(seq 200)) && mkdir .t && (cd .t && ${leaf('.')}) && for i in $(seq 25); do mkdir .w && mv .t ".w/$d" && mv .w .t || exit 1; done && mv .t deep`], { cwd: parent });
  return path.join(parent, 'deep');
}

const made: string[] = [];
function temp(prefix: string): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

describe('removal at any depth (rm, find and chmod as host children)', () => {
  afterEach(() => {
    for (const dir of made.splice(0)) execFileSync('rm', ['-rf', '--', dir]);
  });

  it('the trap: Node\'s fs.rm fails on a tree deeper than PATH_MAX; removeTree removes it, and removes a link without touching its target', async () => {
    const parent = temp('candor-rm-');
    const deep = deepTree(parent, () => 'mkfifo pipe && echo leaf > leaf');
    assert.throws(() => fs.rmSync(deep, { recursive: true, force: true }), /ENAMETOOLONG/);
    assert.ok(fs.existsSync(deep), 'Node left the tree');
    await removeTree(deep);
    assert.equal(fs.existsSync(deep), false);

    const outside = temp('candor-rm-outside-');
    fs.writeFileSync(path.join(outside, 'kept.txt'), 'kept\n');
    fs.symlinkSync(outside, path.join(parent, 'link'));
    await removeTree(path.join(parent, 'link'));
    assert.equal(fs.existsSync(path.join(parent, 'link')), false);
    assert.equal(fs.readFileSync(path.join(outside, 'kept.txt'), 'utf8'), 'kept\n', 'the link\'s target is untouched');
    await removeTree(path.join(parent, 'absent'));
  });

  it('removeEntriesNamed: every .git below the top, at any depth, of any kind and case, named relative to the top; the top one stays; a link\'s target stays', async () => {
    // A root whose name holds glob characters: find's -path must match only the root's own .git.
    const root = path.join(temp('candor-named-'), 'we[ir]d*?root');
    fs.mkdirSync(path.join(root, '.git', 'objects'), { recursive: true });
    fs.mkdirSync(path.join(root, 'sub', '.git', 'hooks'), { recursive: true });
    fs.mkdirSync(path.join(root, 'lib', 'sub2'), { recursive: true });
    fs.writeFileSync(path.join(root, 'lib', 'sub2', '.git'), 'gitdir: /somewhere/else\n');
    fs.mkdirSync(path.join(root, 'UPPER', '.GIT'), { recursive: true });
    const outside = temp('candor-named-outside-');
    fs.symlinkSync(outside, path.join(root, 'linked.git-not'));
    fs.mkdirSync(path.join(root, 'via'));
    fs.symlinkSync(outside, path.join(root, 'via', '.git'));
    deepTree(root, () => 'mkdir -p .git/hooks && echo x > .git/config');
    const removed = await removeEntriesNamed(root, '.git');
    const deepEntry = removed.find((entry) => entry.startsWith('deep/'));
    assert.ok(deepEntry !== undefined && deepEntry.endsWith('/.git') && deepEntry.length > 5000, 'the deep one is named');
    assert.deepEqual(removed.filter((entry) => entry !== deepEntry).sort(), ['UPPER/.GIT', 'lib/sub2/.git', 'sub/.git', 'via/.git']);
    assert.ok(fs.existsSync(path.join(root, '.git', 'objects')), 'the top .git stays');
    assert.ok(fs.existsSync(outside), 'a link\'s target stays');
    assert.ok(fs.existsSync(path.join(root, 'linked.git-not')));
    assert.deepEqual(await removeEntriesNamed(root, '.git'), [], 'nothing is left to remove');
  });

  it('not root: a tree the user made unreadable is made theirs to enter first; plain rm -rf as that user fails on it', function () {
    skipUnless(this, notRoot());
    const uid = 65534;
    const home = temp('candor-rm-user-');
    fs.chmodSync(home, 0o755);
    const work = path.join(home, 'work');
    fs.mkdirSync(work);
    fs.chownSync(work, uid, uid);
    const asUser = (script: string): ReturnType<typeof spawnSync> => spawnSync('setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', 'sh', '-c', script], { cwd: work, encoding: 'utf8' });
    const build = 'mkdir -p locked/inner/.git sub/x && echo data > locked/inner/file && mkdir sub/x/.git && chmod 000 locked/inner locked && chmod 111 sub/x';
    assert.equal(asUser(`mkdir trap && cd trap && ${build}`).status, 0);
    // The trap: the user's own rm cannot remove what the user made unreadable.
    assert.notEqual(asUser('rm -rf trap').status, 0);
    assert.ok(fs.existsSync(path.join(work, 'trap', 'locked')));

    assert.equal(asUser(`mkdir tree named && (cd tree && ${build}) && (cd named && ${build})`).status, 0);
    const tsx = require.resolve('tsx/cjs');
    const module = path.resolve(__dirname, '../../../../src/core/process/removeTree.ts');
    const script = `const m = require(${JSON.stringify(module)}); m.removeTree('tree').then(() => m.removeEntriesNamed(require('path').resolve('named'), '.git')).then((r) => console.log(JSON.stringify(r.sort())), (e) => { console.error(e.message); process.exit(1); });`;
    const ran = spawnSync('setpriv', ['--reuid', String(uid), '--regid', String(uid), '--clear-groups', process.execPath, '--require', tsx, '-e', script], { cwd: work, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: work, TMPDIR: work } });
    assert.equal(ran.status, 0, ran.stderr);
    assert.equal(fs.existsSync(path.join(work, 'tree')), false, 'removeTree removed the locked tree');
    assert.deepEqual(JSON.parse(ran.stdout), ['locked/inner/.git', 'sub/x/.git'], 'and found the .git under folders the user had made unreadable');
  });
});
