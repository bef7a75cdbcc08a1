import * as assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import initSqlJs from 'sql.js';
import { LEGACY_SCOPE, PromptRegistry, RegistryError, type Lineage } from '../../../../src/core/promptEvolution/registry';
import { SqliteFileError } from '../../../../src/core/promptEvolution/sqliteFile';

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

/** The CREATE statements of schema 1 (before workspace scopes), verbatim. */
const SCHEMA_V1 = `
CREATE TABLE IF NOT EXISTS prompt_versions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  parent TEXT,
  root TEXT NOT NULL,
  restores TEXT,
  text TEXT NOT NULL,
  created TEXT NOT NULL,
  n INTEGER, b INTEGER, c INTEGER, effect REAL, p REAL, adjusted_alpha REAL,
  edit_distance INTEGER, drift REAL, task_set_hash TEXT, model TEXT
);
CREATE TABLE IF NOT EXISTS traces (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session TEXT NOT NULL,
  reply_id TEXT,
  prompt_version TEXT,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  tool_calls INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  ts TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS traces_session ON traces(session);
CREATE TABLE IF NOT EXISTS signals (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  reply_id TEXT,
  session TEXT,
  rant_id TEXT,
  ts TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS evaluations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run TEXT NOT NULL,
  candidate_id TEXT NOT NULL,
  baseline_version TEXT NOT NULL,
  text TEXT NOT NULL,
  verdict TEXT NOT NULL,
  failed TEXT,
  tested INTEGER NOT NULL,
  task_ids TEXT NOT NULL,
  checks TEXT NOT NULL,
  n INTEGER, b INTEGER, c INTEGER, effect REAL, p REAL, adjusted_alpha REAL,
  task_set_hash TEXT, model TEXT,
  ts TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS evaluations_candidate ON evaluations(candidate_id, baseline_version);
PRAGMA user_version = 1;
`;

/** Runs raw SQL on the file (created if absent) the way another build would, and saves it. */
async function rawSql(file: string, sql: string): Promise<Array<{ columns: string[]; values: unknown[][] }>> {
  const SQL = await initSqlJs({ locateFile: (name: string) => require.resolve(`sql.js/dist/${name}`) });
  const db = fs.existsSync(file) ? new SQL.Database(fs.readFileSync(file)) : new SQL.Database();
  try {
    const result = db.exec(sql);
    fs.writeFileSync(file, db.export());
    return result;
  } finally {
    db.close();
  }
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
    const registry = await PromptRegistry.open({ file, scope: 'ws' });
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

  it('two workspace scopes in one file: independent roots, versions in force, lineage, rollback lists and near-miss histories', async () => {
    const a = await PromptRegistry.open({ file, scope: 'app-aaaaaaaaaaaa' });
    const b = await PromptRegistry.open({ file, scope: 'lib-bbbbbbbbbbbb' });
    const rootA = await a.ensureCurrent('prompt A');
    const rootB = await b.ensureCurrent('prompt B');
    assert.deepEqual([rootB.kind, rootB.parent, rootB.root], ['root', null, rootB.id], 'B starts its own root, not a child of A');
    assert.equal((await a.current())?.id, rootA.id, 'A is still in force for A');
    assert.equal((await a.ensureCurrent('prompt A')).id, rootA.id, 'opening B did not add a root to A');

    const promotedA = await a.promote(rootA.id, 'prompt A2', LINEAGE);
    assert.equal(promotedA.root, rootA.id);
    assert.equal((await b.current())?.id, rootB.id, 'A’s promotion is not in force for B');
    await assert.rejects(b.promote(rootA.id, 'x', LINEAGE), (e: unknown) => e instanceof RegistryError && e.kind === 'stale-parent');

    // Rollback lists: each scope sees only its own versions; another scope's id is unknown.
    assert.deepEqual((await a.versions()).map((v) => v.text), ['prompt A', 'prompt A2']);
    assert.deepEqual((await b.versions()).map((v) => v.text), ['prompt B']);
    assert.equal(await b.version(rootA.id), undefined);
    assert.deepEqual(await b.lineage(promotedA.id), []);
    await assert.rejects(b.rollback(rootA.id), (e: unknown) => e instanceof RegistryError && e.kind === 'not-found');
    const rolledA = await a.rollback(rootA.id);
    assert.deepEqual([rolledA.parent, rolledA.root, rolledA.text], [promotedA.id, rootA.id, 'prompt A']);
    assert.deepEqual((await a.lineage(rolledA.id)).map((v) => v.kind), ['rollback', 'promotion', 'root']);

    // B's hand edit is a new root in B only.
    const handB = await b.ensureCurrent('prompt B, edited');
    assert.deepEqual([handB.parent, handB.root], [rootB.id, handB.id]);
    assert.equal((await a.current())?.id, rolledA.id);

    // Near-misses and re-test history, even for the same candidate id and baseline id.
    const evaluation = { run: 'r', candidateId: 'c-1', baselineVersion: 'same', text: 'cand', verdict: 'near-miss' as const, failed: 'confidence', tested: true, checks: [] };
    await a.recordEvaluations([{ ...evaluation, taskIds: ['t1'] }]);
    await b.recordEvaluations([{ ...evaluation, run: 'rb', taskIds: ['t2', 't3'] }, { ...evaluation, run: 'rb2', taskIds: ['t4'] }]);
    assert.deepEqual((await a.nearMisses()).map((e) => e.run), ['r']);
    assert.deepEqual((await b.nearMisses()).map((e) => e.run), ['rb2'], 'the re-test replaces the numbers shown');
    assert.deepEqual(await a.history('c-1', 'same'), { scoredTaskIds: ['t1'], tests: 1 });
    assert.deepEqual(await b.history('c-1', 'same'), { scoredTaskIds: ['t2', 't3', 't4'], tests: 2 });

    // A third registry on the same file and scope sees A's state; traces and signals stay shared.
    const a2 = await PromptRegistry.open({ file, scope: 'app-aaaaaaaaaaaa' });
    assert.equal((await a2.current())?.id, rolledA.id);
    await a.addTrace({ session: 'sa', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 });
    await b.addSignal({ kind: 'down', replyId: 'r1', session: 'sb' });
    assert.deepEqual((await b.traces()).map((t) => t.session), ['sa']);
    assert.equal((await a.signals()).length, 1);
    const scopes = await rawSql(file, 'SELECT (SELECT scope FROM traces), (SELECT scope FROM signals)');
    assert.deepEqual(scopes[0]?.values[0], ['app-aaaaaaaaaaaa', 'lib-bbbbbbbbbbbb'], 'each trace and signal records its scope');
    for (const r of [a, b, a2]) r.close();
  });

  it('a schema-1 database is migrated: its rows become legacy (scope \'\'), never shown to a named workspace, and kept', async () => {
    await rawSql(file, `${SCHEMA_V1}
      INSERT INTO prompt_versions (id, kind, parent, root, restores, text, created) VALUES ('old-root', 'root', NULL, 'old-root', NULL, 'old prompt', '2026-01-01T00:00:00.000Z');
      INSERT INTO prompt_versions (id, kind, parent, root, restores, text, created, n, b, c, effect, p, adjusted_alpha, edit_distance, drift, task_set_hash, model)
        VALUES ('old-promo', 'promotion', 'old-root', 'old-root', NULL, 'old prompt 2', '2026-01-02T00:00:00.000Z', 40, 9, 1, 0.2, 0.021484375, 0.025, 1, 0.04, '${'f'.repeat(64)}', 'candor-offline');
      INSERT INTO traces (session, model, provider, tool_calls, duration_ms, ts) VALUES ('old-session', 'm', 'p', 0, 1, '2026-01-01T00:00:00.000Z');
      INSERT INTO signals (kind, reply_id, session, ts) VALUES ('down', 'r-old', 'old-session', '2026-01-01T00:00:00.000Z');
      INSERT INTO evaluations (run, candidate_id, baseline_version, text, verdict, failed, tested, task_ids, checks, ts)
        VALUES ('old-run', 'c-old', 'old-promo', 'cand', 'near-miss', 'confidence', 1, '["t1"]', '[]', '2026-01-02T00:00:00.000Z');
    `);

    const named = await PromptRegistry.open({ file, scope: 'app-aaaaaaaaaaaa' });
    assert.equal(await named.current(), undefined, 'the legacy head is not this workspace’s prompt');
    assert.deepEqual(await named.versions(), []);
    assert.equal(await named.version('old-root'), undefined);
    assert.deepEqual(await named.nearMisses(), []);
    assert.deepEqual(await named.history('c-old', 'old-promo'), { scoredTaskIds: [], tests: 0 });
    assert.deepEqual((await named.traces()).map((t) => t.session), ['old-session'], 'traces are still read across scopes');
    assert.equal((await named.signals()).length, 1);
    const root = await named.ensureCurrent('old prompt 2');
    assert.deepEqual([root.kind, root.parent, root.root], ['root', null, root.id], 'a fresh root: drift is not measured from another workspace’s original');

    const [version, ...groups] = await rawSql(file, "PRAGMA user_version; SELECT scope, COUNT(*) FROM prompt_versions GROUP BY scope ORDER BY scope");
    assert.equal(version?.values[0]?.[0], 3, 'the write saved the migrated schema');
    assert.deepEqual(groups[0]?.values, [['', 2], ['app-aaaaaaaaaaaa', 1]], 'the legacy rows are kept');

    const legacy = await PromptRegistry.open({ file, scope: LEGACY_SCOPE });
    assert.equal((await legacy.current())?.id, 'old-promo');
    assert.deepEqual((await legacy.lineage('old-promo')).map((v) => v.id), ['old-promo', 'old-root']);
    assert.deepEqual((await legacy.current())?.lineage, LINEAGE);
    assert.deepEqual((await legacy.nearMisses()).map((e) => e.run), ['old-run']);
    assert.deepEqual(await legacy.history('c-old', 'old-promo'), { scoredTaskIds: ['t1'], tests: 1 });

    // An older build sharing the data folder resets user_version and inserts without a scope: still fine, still legacy.
    await rawSql(file, `PRAGMA user_version = 1; INSERT INTO prompt_versions (id, kind, parent, root, restores, text, created) VALUES ('older-build', 'root', NULL, 'older-build', NULL, 'from an old window', '2026-01-03T00:00:00.000Z');`);
    const again = await PromptRegistry.open({ file, scope: 'app-aaaaaaaaaaaa' });
    assert.equal((await again.current())?.id, root.id);
    await again.addTrace({ session: 's', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 });
    assert.equal((await legacy.current())?.id, 'older-build');
    for (const r of [named, legacy, again]) r.close();
  });

  it('the wasm file is found through an injectable locateFile (a fresh process: sql.js loads once per process)', () => {
    const registryModule = path.resolve(__dirname, '../../../../src/core/promptEvolution/registry.ts');
    const custom = path.join(dir, 'renamed.wasm');
    fs.copyFileSync(require.resolve('sql.js/dist/sql-wasm.wasm'), custom);
    const script = (wasm: string): string => `
      const { PromptRegistry } = require(${JSON.stringify(registryModule)});
      PromptRegistry.open({ file: ${JSON.stringify(file)}, scope: 'ws', locateFile: () => ${JSON.stringify(wasm)} })
        .then((r) => r.ensureCurrent('v1')).then((v) => console.log(v.text), () => process.exit(3));`;
    const good = spawnSync(process.execPath, ['--require', TSX, '-e', script(custom)], { encoding: 'utf8' });
    assert.equal(good.stdout.trim(), 'v1', good.stderr);
    const bad = spawnSync(process.execPath, ['--require', TSX, '-e', script(path.join(dir, 'missing.wasm'))], { encoding: 'utf8' });
    assert.equal(bad.status, 3, 'a wrong wasm path fails to open');
  });

  it('traces, signals and evaluations round-trip; history counts tested candidates only', async () => {
    const registry = await PromptRegistry.open({ file, scope: 'ws', clock: () => new Date('2026-01-02T03:04:05.000Z') });
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
    await PromptRegistry.open({ file, scope: 'ws' });
    const [a, b] = await Promise.all([finished(startWriter(file, 25, 'window-a')), finished(startWriter(file, 25, 'window-b'))]);
    assert.equal(a.code, 0, a.err);
    assert.equal(b.code, 0, b.err);
    const traces = await (await PromptRegistry.open({ file, scope: 'ws' })).traces();
    assert.equal(traces.filter((t) => t.session === 'window-a').length, 25);
    assert.equal(traces.filter((t) => t.session === 'window-b').length, 25);
    assert.ok(!fs.existsSync(`${file}.lock`), 'the lock is released');
  });

  it('two registries in one process writing concurrently lose nothing', async () => {
    const [one, two] = await Promise.all([PromptRegistry.open({ file, scope: 'ws' }), PromptRegistry.open({ file, scope: 'ws' })]);
    await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? one : two).addTrace({ session: `s${i % 2}`, model: 'm', provider: 'p', toolCalls: i, durationMs: 1 })));
    assert.equal((await one.traces()).length, 30);
  });

  it('a writer killed mid-run leaves the previous database readable, and the next writer goes on', async () => {
    const registry = await PromptRegistry.open({ file, scope: 'ws' });
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
    const after = await PromptRegistry.open({ file, scope: 'ws', lockTimeoutMs: 5_000 });
    assert.ok((await after.traces('doomed')).length >= written + 1, 'every reported write survived');
    assert.equal((await after.current())?.text, 'the prompt');
    await after.addTrace({ session: 'next', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 });
    assert.equal((await after.traces('next')).length, 1);
    assert.deepEqual(fs.readdirSync(dir).filter((n) => n.includes('.tmp-')), [], 'no temp file left behind');
  });

  it('a leftover temp file and a dead writer’s lock are cleaned up; the database is untouched', async () => {
    const registry = await PromptRegistry.open({ file, scope: 'ws' });
    await registry.ensureCurrent('kept');
    const pid = deadPid();
    fs.writeFileSync(`${file}.tmp-${pid}-deadbeef`, 'half a database');
    fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid, token: 'gone', ts: Date.now() }));
    const reopened = await PromptRegistry.open({ file, scope: 'ws', lockTimeoutMs: 2_000 });
    assert.equal((await reopened.current())?.text, 'kept');
    await reopened.addTrace({ session: 's', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 });
    assert.ok(!fs.existsSync(`${file}.tmp-${pid}-deadbeef`));
    assert.ok(!fs.existsSync(`${file}.lock`));
  });

  it('a live writer’s lock is respected: a clear "locked" error after the timeout', async () => {
    await PromptRegistry.open({ file, scope: 'ws' });
    const writer = spawn('sleep', ['30']);
    try {
      fs.writeFileSync(`${file}.lock`, JSON.stringify({ pid: writer.pid, host: os.hostname(), started: new Date().toISOString(), token: 'someone' }));
      const registry = await PromptRegistry.open({ file, scope: 'ws', lockTimeoutMs: 200 });
      await assert.rejects(registry.addTrace({ session: 's', model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 }), (e: unknown) => e instanceof SqliteFileError && e.kind === 'locked');
    } finally {
      writer.kill('SIGKILL');
    }
    fs.rmSync(`${file}.lock`);
  });

  for (const [label, damage] of [
    ['garbage bytes', (): void => fs.writeFileSync(file, 'this is not a database at all, just text')],
    ['a truncated database', (): void => fs.truncateSync(file, Math.floor(fs.statSync(file).size / 2))],
  ] as const) {
    it(`${label} → error kind "corrupt", the file kept aside, then a fresh database`, async () => {
      const registry = await PromptRegistry.open({ file, scope: 'ws', clock: () => new Date('2026-05-06T07:08:09.010Z') });
      await registry.ensureCurrent('x'.repeat(20_000));
      await registry.addTraces(Array.from({ length: 200 }, (_, i) => ({ session: `s${i}`, model: 'm', provider: 'p', toolCalls: i, durationMs: 1 })));
      damage();
      const damaged = fs.readFileSync(file);
      const error = await PromptRegistry.open({ file, scope: 'ws', clock: () => new Date('2026-05-06T07:08:09.010Z') }).then(
        () => assert.fail('a corrupt file must not open silently'),
        (e: unknown) => e,
      );
      assert.ok(error instanceof SqliteFileError && error.kind === 'corrupt', String(error));
      assert.equal(error.movedTo, `${file}.corrupt-2026-05-06T07-08-09-010Z`);
      assert.deepEqual(fs.readFileSync(error.movedTo), damaged, 'kept byte for byte');
      assert.ok(!fs.existsSync(file));
      const fresh = await PromptRegistry.open({ file, scope: 'ws' });
      assert.equal(await fresh.current(), undefined);
    });
  }

  it('corruption found by a later write is reported and never overwritten', async () => {
    const registry = await PromptRegistry.open({ file, scope: 'ws' });
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
