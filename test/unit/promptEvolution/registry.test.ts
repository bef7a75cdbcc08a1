import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PromptRegistry, RegistryError, type Lineage } from '../../../src/core/promptEvolution/registry';
import { SqliteFileError } from '../../../src/core/promptEvolution/sqliteFile';

const WRITER = path.join(__dirname, 'registryWriter.ts');
const TSX = require.resolve('tsx/cjs');

function startWriter(file: string, count: number, session: string): ChildProcess {
  return spawn(process.execPath, ['--require', TSX, WRITER, file, String(count), session], { stdio: ['ignore', 'pipe', 'pipe'] });
}

function finished(child: ChildProcess): Promise<{ code: number | null; out: string; err: string }> {
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve) => child.on('close', (code) => resolve({ code, out, err })));
}

/** The pid of a process that has exited. */
function deadPid(): number {
  const pid = spawnSync(process.execPath, ['-e', '']).pid;
  assert.ok(pid);
  return pid;
}

const LINEAGE: Lineage = { n: 40, b: 9, c: 1, effect: 0.2, p: 0.021484375, adjustedAlpha: 0.025, editDistance: 1, drift: 0.04, taskSetHash: 'f'.repeat(64), model: 'candor-offline' };

describe('prompt registry (traces.sqlite over sql.js)', function () {
  this.timeout(60_000);
  let dir: string;
  let file: string;

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-registry-'));
    file = path.join(dir, 'traces.sqlite');
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('versions with lineage: root, promotion, hand edit, rollback', async () => {
    const registry = await PromptRegistry.open({ file });
    assert.equal(await registry.current(), undefined);
    const root = await registry.ensureCurrent('v1');
    assert.equal((await registry.ensureCurrent('v1')).id, root.id, 'the same text is not registered twice');
    const promoted = await registry.promote(root.id, 'v2', LINEAGE);
    assert.deepEqual([promoted.kind, promoted.parent, promoted.root, promoted.lineage], ['promotion', root.id, root.id, LINEAGE]);
    await assert.rejects(registry.promote(root.id, 'v2b', LINEAGE), (e: unknown) => e instanceof RegistryError && e.kind === 'stale-parent');

    const rolled = await registry.rollback(root.id);
    assert.deepEqual([rolled.kind, rolled.text, rolled.parent, rolled.restores], ['rollback', 'v1', promoted.id, root.id]);
    assert.equal((await registry.current())?.id, rolled.id);
    await assert.rejects(registry.rollback('nope'), (e: unknown) => e instanceof RegistryError && e.kind === 'not-found');

    const again = await registry.promote(rolled.id, 'v3', LINEAGE);
    assert.deepEqual((await registry.lineage(again.id)).map((v) => v.kind), ['promotion', 'rollback', 'promotion', 'root']);

    const hand = await registry.ensureCurrent('edited by hand');
    assert.deepEqual([hand.kind, hand.parent, hand.root], ['root', again.id, hand.id]);
    assert.equal((await registry.versions()).length, 5);
  });

  it('the wasm file is found through an injectable locateFile (a fresh process: sql.js loads once per process)', () => {
    const registryModule = path.resolve(__dirname, '../../../src/core/promptEvolution/registry.ts');
    const custom = path.join(dir, 'renamed.wasm');
    fs.copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), custom);
    const script = (wasm: string): string => `
      const { PromptRegistry } = require(${JSON.stringify(registryModule)});
      PromptRegistry.open({ file: ${JSON.stringify(file)}, locateFile: () => ${JSON.stringify(wasm)} })
        .then((r) => r.ensureCurrent('v1')).then((v) => console.log(v.text), () => process.exit(3));`;
    const good = spawnSync(process.execPath, ['--require', TSX, '-e', script(custom)], { encoding: 'utf8' });
    assert.equal(good.stdout.trim(), 'v1', good.stderr);
    const bad = spawnSync(process.execPath, ['--require', TSX, '-e', script(path.join(dir, 'missing.wasm'))], { encoding: 'utf8' });
    assert.equal(bad.status, 3, 'a wrong wasm path fails to open');
  });

  it('traces, signals and evaluations round-trip; history counts tested candidates only', async () => {
    const registry = await PromptRegistry.open({ file, clock: () => new Date('2026-01-02T03:04:05.000Z') });
    await registry.addTrace({ session: 's1', replyId: 'r1', promptVersion: 'v', model: 'gpt', provider: 'offline', promptTokens: 120, completionTokens: 30, toolCalls: 2, durationMs: 850 });
    await registry.addSignal({ kind: 'down', replyId: 'r1', session: 's1' });
    await registry.addSignal({ kind: 'rant', rantId: 'rant1', session: 's1' });
    assert.deepEqual(await registry.traces('s1'), [{ session: 's1', replyId: 'r1', promptVersion: 'v', model: 'gpt', provider: 'offline', promptTokens: 120, completionTokens: 30, toolCalls: 2, durationMs: 850, ts: '2026-01-02T03:04:05.000Z' }]);
    assert.deepEqual(await registry.signals(), [
      { kind: 'down', replyId: 'r1', session: 's1', ts: '2026-01-02T03:04:05.000Z' },
      { kind: 'rant', rantId: 'rant1', session: 's1', ts: '2026-01-02T03:04:05.000Z' },
    ]);
    const base = { run: 'run1', candidateId: 'c-1', baselineVersion: 'v', text: 'cand', checks: [] };
    await registry.recordEvaluations([
      { ...base, verdict: 'near-miss', failed: 'confidence', tested: true, taskIds: ['t1', 't2'], stats: { n: 2, b: 1, c: 0, effect: 0.5, p: 1, adjustedAlpha: 0.05 } },
      { ...base, run: 'run2', verdict: 'near-miss', failed: 'confidence', tested: true, taskIds: ['t2', 't3'] },
      { ...base, candidateId: 'c-2', verdict: 'reject', failed: 'frozen_sections', tested: false, taskIds: [] },
    ]);
    assert.deepEqual(await registry.history('c-1', 'v'), { scoredTaskIds: ['t1', 't2', 't3'], tests: 2 });
    assert.deepEqual(await registry.history('c-1', 'other'), { scoredTaskIds: [], tests: 0 });
    assert.deepEqual(await registry.history('c-2', 'v'), { scoredTaskIds: [], tests: 0 });
    assert.equal((await registry.nearMisses())[0]?.run, 'run2');
  });

  it('two writers at once (two processes) lose nothing', async () => {
    await PromptRegistry.open({ file });
    const [a, b] = await Promise.all([finished(startWriter(file, 25, 'window-a')), finished(startWriter(file, 25, 'window-b'))]);
    assert.equal(a.code, 0, a.err);
    assert.equal(b.code, 0, b.err);
    const traces = await (await PromptRegistry.open({ file })).traces();
    assert.equal(traces.filter((t) => t.session === 'window-a').length, 25);
    assert.equal(traces.filter((t) => t.session === 'window-b').length, 25);
    assert.ok(!fs.existsSync(`${file}.lock`), 'the lock is released');
  });

  it('two registries in one process writing concurrently lose nothing', async () => {
    const [one, two] = await Promise.all([PromptRegistry.open({ file }), PromptRegistry.open({ file })]);
    await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? one : two).addTrace({ session: `s${i % 2}`, model: 'm', provider: 'p', toolCalls: i, durationMs: 1 })));
    assert.equal((await one.traces()).length, 30);
  });

  it('a writer killed mid-run leaves the previous database readable, and the next writer goes on', async () => {
    const registry = await PromptRegistry.open({ file });
    await registry.ensureCurrent('the prompt');
    const child = startWriter(file, 0, 'doomed');
    let written = -1;
    await new Promise<void>((resolve) => {
      child.stdout?.on('data', (d: Buffer) => {
        written = Math.max(written, ...d.toString().trim().split('\n').map(Number));
        if (written >= 25) resolve();
      });
    });
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    const after = await PromptRegistry.open({ file, lockTimeoutMs: 5_000 });
    assert.ok((await after.traces('doomed')).length >= written + 1, 'every reported write survived');
    assert.equal((await after.current())?.text, 'the prompt');
    await after.addTrace({ session: 'next', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 });
    assert.equal((await after.traces('next')).length, 1);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.includes('.tmp-')), [], 'no temp file left behind');
  });

  it('a leftover temp file and a dead writer’s lock are cleaned up; the database is untouched', async () => {
    const registry = await PromptRegistry.open({ file });
    await registry.ensureCurrent('kept');
    const pid = deadPid();
    fs.writeFileSync(`${file}.tmp-${pid}-deadbeef`, 'half a database');
    fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid, token: 'gone', ts: Date.now() }));
    const reopened = await PromptRegistry.open({ file, lockTimeoutMs: 2_000 });
    assert.equal((await reopened.current())?.text, 'kept');
    await reopened.addTrace({ session: 's', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 });
    assert.ok(!fs.existsSync(`${file}.tmp-${pid}-deadbeef`));
    assert.ok(!fs.existsSync(`${file}.lock`));
  });

  it('a live writer’s lock is respected: a clear "locked" error after the timeout', async () => {
    await PromptRegistry.open({ file });
    fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, token: 'someone', ts: Date.now() }));
    const registry = await PromptRegistry.open({ file, lockTimeoutMs: 200 });
    await assert.rejects(registry.addTrace({ session: 's', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 }), (e: unknown) => e instanceof SqliteFileError && e.kind === 'locked');
    fs.rmSync(`${file}.lock`);
  });

  for (const [label, damage] of [
    ['garbage bytes', (): void => fs.writeFileSync(file, 'this is not a database at all, just text')],
    ['a truncated database', (): void => fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2))],
  ] as const) {
    it(`${label} → error kind "corrupt", the file kept aside, then a fresh database`, async () => {
      const registry = await PromptRegistry.open({ file, clock: () => new Date('2026-05-06T07:08:09.010Z') });
      await registry.ensureCurrent('x'.repeat(20_000));
      await registry.addTraces(Array.from({ length: 200 }, (_, i) => ({ session: `s${i}`, model: 'm', provider: 'p', toolCalls: i, durationMs: 1 })));
      damage();
      const damaged = fs.readFileSync(file);
      const error = await PromptRegistry.open({ file, clock: () => new Date('2026-05-06T07:08:09.010Z') }).then(
        () => assert.fail('a corrupt file must not open silently'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof SqliteFileError && error.kind === 'corrupt', String(error));
      assert.equal(error.movedTo, `${file}.corrupt-2026-05-06T07-08-09-010Z`);
      assert.deepEqual(fs.readFileSync(error.movedTo), damaged, 'kept byte for byte');
      assert.ok(!fs.existsSync(file));
      const fresh = await PromptRegistry.open({ file });
      assert.equal(await fresh.current(), undefined);
    });
  }

  it('corruption found by a later write is reported and never overwritten', async () => {
    const registry = await PromptRegistry.open({ file });
    await registry.ensureCurrent('v1');
    fs.writeFileSync(file, 'garbage');
    await assert.rejects(registry.addTrace({ session: 's', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 }), (e: unknown) => e instanceof SqliteFileError && e.kind === 'corrupt');
    const aside = fs.readdirSync(dir).filter((n) => n.includes('.corrupt-'));
    assert.equal(aside.length, 1);
    assert.equal(fs.readFileSync(path.join(dir, aside[0] as string), 'utf8'), 'garbage');
    await registry.addTrace({ session: 's', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 });
    assert.equal((await registry.traces()).length, 1);
  });
});
