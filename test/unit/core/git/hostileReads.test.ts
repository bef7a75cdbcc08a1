import * as assert from 'node:assert/strict';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { noUnsavedBuffers } from '../../../../src/core/git/unsaved';
import { gitLogTool } from '../../../../src/core/workspace/gitTools';
import { runEveryRead } from './helpers/everyRead';
import { HOOK_TRAPS, LAZY_REV, hostileRepository, plainGit } from './helpers/hostileRepo';
import { git, removeTempDirs, write } from './helpers/repo';

/**
 * A hostile repository against the guard's reads. Each test first shows the
 * trap springing under plain git, then that the guard's reads do not spring
 * it (or, for a trusted repository's filter, that it runs without the key).
 */

const KEY = 'sk-env-key-0123456789abcdef';
const STORED_KEY = 'stored-key-from-secret-storage-42';
/** The host's environment while Candor runs: the key, a Candor variable, and the stored key under another name. */
const HOST_ENV: Readonly<Record<string, string>> = { OPENAI_API_KEY: KEY, CANDOR_TOKEN: 'candor-variable-value', SOME_TOOL_TOKEN: STORED_KEY };

describe('read-only git guard: a hostile repository, read', function () {
  this.timeout(60_000);
  const saved: Record<string, string | undefined> = {};
  before(() => {
    for (const [key, value] of Object.entries(HOST_ENV)) {
      saved[key] = process.env[key];
      process.env[key] = value;
    }
  });
  after(() => {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    removeTempDirs();
  });

  it("a trusted repository's clean filter runs (as in VS Code's git) but never sees the key or Candor's variables", async () => {
    const hostile = hostileRepository({ filter: true });
    plainGit(hostile.deliver(), ['status', '--porcelain'], HOST_ENV);
    assert.ok(hostile.seen('filter').includes(KEY), 'trap: plain git status runs the filter and hands it the key');
    hostile.clear();

    const guard = await ReadOnlyGit.open(hostile.root, { secrets: [STORED_KEY] });
    await guard.status();
    await guard.diffUnstaged();
    assert.ok(hostile.ran('filter'), 'the filter of a trusted repository runs, by design');
    const seen = hostile.seen('filter');
    assert.ok(!seen.includes(KEY), 'OPENAI_API_KEY is not in its environment');
    assert.ok(!seen.includes(STORED_KEY), 'nor any variable holding a secret the host named');
    assert.doesNotMatch(seen, /^CANDOR_/m, 'nor any CANDOR_* variable');
    assert.match(seen, /^PATH=/m, 'the rest of the environment is there');
  });

  it('a read never writes the index, so post-index-change never runs; plain git status runs it', async () => {
    const hostile = hostileRepository({ hooks: true });
    plainGit(hostile.deliver(), ['status'], HOST_ENV);
    assert.ok(hostile.ran('post-index-change'), 'trap: a refreshing status writes the index and runs the hook');
    hostile.clear();

    const guard = await ReadOnlyGit.open(hostile.root);
    await runEveryRead(guard, noUnsavedBuffers, ['src/main.txt']);
    assert.deepEqual(HOOK_TRAPS.filter((hook) => hostile.ran(hook)), []);
  });

  it('no diff runs diff.external or a textconv driver', async () => {
    const hostile = hostileRepository({ diffPrograms: true });
    const change = (repo: string): void => {
      write(repo, 'src/main.txt', 'main, changed\n');
      write(repo, 'README.md', '# staged\n');
      git(repo, 'add', 'README.md');
    };
    const control = hostile.deliver();
    change(control);
    plainGit(control, ['diff'], HOST_ENV);
    assert.ok(hostile.seen('external-diff').includes(KEY), 'trap: plain git diff runs diff.external, with the key');
    plainGit(control, ['diff', '--no-ext-diff', '--cached'], HOST_ENV);
    assert.ok(hostile.ran('textconv'), 'trap: plain git diff runs the textconv driver');
    hostile.clear();

    change(hostile.root);
    const guard = await ReadOnlyGit.open(hostile.root);
    assert.match(await guard.diffUnstaged(), /\+main, changed/);
    assert.match(await guard.diffStaged(), /\+# staged/);
    await guard.show('HEAD');
    await runEveryRead(guard, noUnsavedBuffers, ['src/main.txt']);
    assert.deepEqual((['external-diff', 'textconv'] as const).filter((trap) => hostile.ran(trap)), []);
  });

  it('log and show never run gpg.program, even with log.showSignature=true and a signed commit', async () => {
    const hostile = hostileRepository({ signature: true });
    plainGit(hostile.deliver(), ['log', '-1'], HOST_ENV);
    assert.ok(hostile.seen('signature').includes(KEY), 'trap: plain git log runs gpg.program, with the key');
    hostile.clear();
    plainGit(hostile.deliver(), ['show', 'HEAD'], HOST_ENV);
    assert.ok(hostile.ran('signature'), 'trap: plain git show runs it too');
    hostile.clear();

    const guard = await ReadOnlyGit.open(hostile.root);
    assert.equal((await guard.log(5))[0]?.subject, 'signed');
    assert.match(await guard.show('HEAD'), /signed/);
    await guard.topCommitTrailers();
    await gitLogTool(guard);
    assert.equal(hostile.ran('signature'), false);
  });

  it("a read that needs a missing blob of a partial clone fails instead of running the promisor remote's upload-pack", async () => {
    const hostile = hostileRepository({ lazyFetch: true });
    plainGit(hostile.deliver(), ['show', LAZY_REV], HOST_ENV);
    assert.ok(hostile.ran('lazy-fetch'), 'trap: plain git show fetches the blob lazily, running remote.origin.uploadpack');
    hostile.clear();

    const guard = await ReadOnlyGit.open(hostile.root);
    await assert.rejects(guard.show(LAZY_REV), { kind: 'failed' });
    await guard.status();
    await guard.diffStaged();
    assert.equal(hostile.ran('lazy-fetch'), false);
  });

  it('every read and every tool at once, against every trap a read could meet: only the filter runs', async () => {
    const hostile = hostileRepository({ filter: true, diffPrograms: true, signature: true, hooks: true, alternateRefs: true, lazyFetch: true });
    const guard = await ReadOnlyGit.open(hostile.root, { secrets: [STORED_KEY] });
    hostile.clear();
    await runEveryRead(guard, { unsavedFiles: () => [] }, ['src/main.txt', 'README.md']);
    const sprung = (['external-diff', 'textconv', 'signature', 'alternate-refs', 'lazy-fetch', ...HOOK_TRAPS] as const).filter((trap) => hostile.ran(trap));
    assert.deepEqual(sprung, []);
    assert.ok(hostile.ran('filter'));
    assert.ok(!hostile.seen('filter').includes(KEY));
  });
});
