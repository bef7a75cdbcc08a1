import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { noUnsavedBuffers } from '../../../../src/core/git/unsaved';
import { HOOK_TRAPS, hostileRepository, plainGit } from './helpers/hostileRepo';
import { git, removeTempDirs, repoWith, tempDir, write } from './helpers/repo';

/**
 * The one write, `takeBranch`, into a hostile repository. Each test first
 * runs the same fetch with plain git and shows the trap springing, then
 * shows that the hand-off does not spring it.
 */

const BRANCH = 'candor/rant-01hostile';
const REF = `refs/heads/${BRANCH}`;
const KEY = 'sk-env-key-0123456789abcdef';
const HOST_ENV = { OPENAI_API_KEY: KEY };

/** A scratch clone holding BRANCH (its history is unrelated to the workspace's; a fetch does not care). */
function scratchWithBranch(): { scratch: string; shipped: string } {
  const scratch = repoWith({ 'a.txt': 'a\n' });
  git(scratch, 'checkout', '-q', '-b', BRANCH);
  write(scratch, 'a.txt', 'a, fixed\n');
  git(scratch, 'commit', '-q', '-am', 'fix\n\nCandor-Rant: 01hostile');
  return { scratch, shipped: git(scratch, 'rev-parse', 'HEAD').trim() };
}

const plainFetch = (workspace: string, scratch: string, env: NodeJS.ProcessEnv = HOST_ENV): { status: number; output: string } =>
  plainGit(workspace, ['fetch', '--no-tags', scratch, `${REF}:${REF}`], env);

describe('read-only git guard: the hand-off into a hostile repository', function () {
  this.timeout(60_000);
  const savedKey = process.env.OPENAI_API_KEY;
  before(() => {
    process.env.OPENAI_API_KEY = KEY;
  });
  after(() => {
    if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = savedKey;
    removeTempDirs();
  });

  it("runs none of the repository's hooks (reference-transaction saw the key under plain git)", async () => {
    const { scratch, shipped } = scratchWithBranch();
    const hostile = hostileRepository({ hooks: true });
    assert.equal(plainFetch(hostile.deliver(), scratch).status, 0);
    assert.ok(hostile.seen('reference-transaction').includes(KEY), 'trap: plain git fetch runs the hook, with the key');
    hostile.clear();

    const guard = await ReadOnlyGit.open(hostile.root);
    assert.deepEqual(await guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers }), { branch: BRANCH, commit: shipped });
    assert.deepEqual(HOOK_TRAPS.filter((hook) => hostile.ran(hook)), []);
  });

  it('runs no core.alternateRefsCommand', async () => {
    const { scratch, shipped } = scratchWithBranch();
    const hostile = hostileRepository({ alternateRefs: true });
    assert.equal(plainFetch(hostile.deliver(), scratch).status, 0);
    assert.ok(hostile.ran('alternate-refs'), 'trap: plain git fetch runs the alternate-refs command');
    hostile.clear();

    const guard = await ReadOnlyGit.open(hostile.root);
    assert.equal((await guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers })).commit, shipped);
    assert.equal(hostile.ran('alternate-refs'), false);
  });

  it('refuses (unsafe-config) when an insteadOf rule rewrites the scratch path to an ext:: command the config allows', async () => {
    const { scratch } = scratchWithBranch();
    const hostile = hostileRepository({ insteadOf: scratch });
    assert.notEqual(plainFetch(hostile.deliver(), scratch).status, 0);
    assert.ok(hostile.seen('insteadof').includes(KEY), 'trap: plain git fetch runs the ext:: command, with the key');
    hostile.clear();
    // The second wall on its own: GIT_ALLOW_PROTOCOL=file overrides protocol.allow=always.
    assert.match(plainFetch(hostile.deliver(), scratch, { ...HOST_ENV, GIT_ALLOW_PROTOCOL: 'file' }).output, /transport 'ext' not allowed/);
    assert.equal(hostile.ran('insteadof'), false);

    const guard = await ReadOnlyGit.open(hostile.root);
    await assert.rejects(guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers }), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'unsafe-config');
      assert.match((err as Error).message, /insteadOf/);
      return true;
    });
    assert.equal(hostile.ran('insteadof'), false);
    assert.equal(await guard.revParse(REF), undefined, 'nothing was fetched');
  });

  it('refuses (unsafe-config) when the config names a remote after the scratch path', async () => {
    const { scratch } = scratchWithBranch();
    const workspace = repoWith({ 'w.txt': 'w\n' });
    const marker = path.join(tempDir('candor-marker-'), 'uploadpack-ran');
    git(workspace, 'config', `remote.${scratch}.uploadpack`, `touch ${marker}; git-upload-pack`);
    // Git reads such a section only for names that do not start with `/`
    // (a Windows path, `C:\…`); here it says so and ignores it. The guard
    // refuses on every platform rather than rely on that.
    const plain = plainFetch(workspace, scratch);
    assert.match(plain.output, /cannot begin with '\/'/);
    git(workspace, 'branch', '-q', '-D', BRANCH);

    const guard = await ReadOnlyGit.open(workspace);
    await assert.rejects(guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers }), (err: unknown) => {
      assert.equal((err as { kind?: string }).kind, 'unsafe-config');
      assert.ok((err as Error).message.includes(`remote.${scratch}.uploadpack`));
      return true;
    });
    assert.equal(fs.existsSync(marker), false);
    assert.equal(await guard.revParse(REF), undefined);
  });

  it('uses the hooks folder it is given, which must be empty, and leaves it in place', async () => {
    const { scratch, shipped } = scratchWithBranch();
    const hostile = hostileRepository({ hooks: true });
    const guard = await ReadOnlyGit.open(hostile.root);

    const crowded = tempDir('candor-hooks-');
    fs.writeFileSync(path.join(crowded, 'reference-transaction'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    await assert.rejects(guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers, emptyHooksDir: crowded }), { kind: 'invalid' });
    assert.equal(await guard.revParse(REF), undefined);

    const empty = tempDir('candor-hooks-');
    assert.equal((await guard.takeBranch(scratch, BRANCH, { unsaved: noUnsavedBuffers, emptyHooksDir: empty })).commit, shipped);
    assert.deepEqual(fs.readdirSync(empty), []);
    assert.deepEqual(HOOK_TRAPS.filter((hook) => hostile.ran(hook)), []);
  });
});
