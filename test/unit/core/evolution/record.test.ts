import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { appendRun, appendRunUpdate, readRuns, type EvolutionRecord, type EvolutionUpdate } from '../../../../src/core/evolution/record';

/** evolution.jsonl's run lines and update lines, as every reader merges them (docs/architecture.md, "Data files"). */

function shipped(run: string, extra: Partial<EvolutionRecord> = {}): EvolutionRecord {
  return {
    v: 1, run, ts: '2025-03-01T10:00:00.000Z', ended: '2025-03-01T10:05:00.000Z', rants: ['01rant'], outcome: 'shipped', reason: 'addressed',
    repository: '/agent', base: 'main', branch: `candor/rant-${run}`, commit: 'c'.repeat(40), diffstat: ' 1 file changed', gate: { passed: true, ms: 10, tail: 'ok' }, sandbox: 'bubblewrap', ...extra,
  };
}

const pr = (run: string, ts: string, number: number): EvolutionUpdate => ({ v: 1, ts, run, update: 'pr', pr: { url: `https://github.com/alice/agent/pull/${number}`, number } });
const ci = (run: string, ts: string, state: 'pending' | 'passed' | 'failed'): EvolutionUpdate => ({
  v: 1, ts, run, update: 'ci', ci: { state, url: 'https://github.com/alice/agent/runs/1', checks: state === 'pending' ? [] : [{ name: 'test', status: 'completed', conclusion: state === 'passed' ? 'success' : 'failure', url: 'https://github.com/alice/agent/runs/1' }] },
});

describe('evolution.jsonl: runs and their update lines', () => {
  let dataDir: string;
  const file = (): string => path.join(dataDir, 'evolution.jsonl');
  const lines = (...raw: string[]): void => fs.appendFileSync(file(), raw.map((line) => `${line}\n`).join(''));
  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-record-'));
  });
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('merges update lines into their run by `run`, the newest update winning, each of pr and ci on its own', () => {
    appendRun(dataDir, shipped('r1'));
    appendRun(dataDir, shipped('r2'));
    appendRunUpdate(dataDir, pr('r1', '2025-03-01T11:00:00.000Z', 7));
    appendRunUpdate(dataDir, ci('r1', '2025-03-01T11:00:01.000Z', 'pending'));
    appendRunUpdate(dataDir, ci('r2', '2025-03-01T11:30:00.000Z', 'passed'));
    appendRunUpdate(dataDir, ci('r1', '2025-03-01T12:00:00.000Z', 'failed'));

    const [r1, r2] = readRuns(dataDir);
    assert.equal(readRuns(dataDir).length, 2, 'update lines are not runs');
    assert.deepEqual(r1?.pr, { url: 'https://github.com/alice/agent/pull/7', number: 7 });
    assert.equal(r1?.ci?.state, 'failed');
    assert.equal(r1?.ci?.checks[0]?.conclusion, 'failure');
    assert.equal(r2?.pr, undefined);
    assert.equal(r2?.ci?.state, 'passed');
    assert.equal(r1?.outcome, 'shipped', 'the run line itself is kept');
    assert.ok(fs.readFileSync(file(), 'utf8').trim().split('\n').every((line) => !/"update"/.test(line) || !/"outcome"/.test(line)), 'an update line has no outcome');
  });

  it('the newest by its ts wins, even when a slow reader appended an older state after it; a tie goes to the later line', () => {
    appendRun(dataDir, shipped('r1'));
    appendRunUpdate(dataDir, ci('r1', '2025-03-01T12:00:00.000Z', 'failed'));
    appendRunUpdate(dataDir, ci('r1', '2025-03-01T11:00:00.000Z', 'pending'));
    assert.equal(readRuns(dataDir)[0]?.ci?.state, 'failed');
    appendRunUpdate(dataDir, ci('r1', '2025-03-01T12:00:00.000Z', 'passed'));
    assert.equal(readRuns(dataDir)[0]?.ci?.state, 'passed');
  });

  it('ignores an update for a run the file does not hold', () => {
    appendRun(dataDir, shipped('r1'));
    appendRunUpdate(dataDir, pr('elsewhere', '2025-03-01T11:00:00.000Z', 3));
    const runs = readRuns(dataDir);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0], shipped('r1'), 'r1 is untouched');
  });

  it('an update that arrives before its run line (two writers) still merges', () => {
    appendRunUpdate(dataDir, pr('r1', '2025-03-01T11:00:00.000Z', 5));
    appendRun(dataDir, shipped('r1'));
    assert.equal(readRuns(dataDir)[0]?.pr?.number, 5);
  });

  it('reads a run without updates exactly as it was written, and an older run without base as base: null', () => {
    appendRun(dataDir, shipped('r1'));
    const { base: _base, ...old } = shipped('r0');
    lines(JSON.stringify(old));
    const [r1, r0] = readRuns(dataDir);
    assert.deepEqual(r1, shipped('r1'));
    assert.equal(r0?.base, null);
    assert.deepEqual(r0, { ...old, base: null });
    appendRun(dataDir, shipped('r2', { base: null }));
    assert.equal(readRuns(dataDir)[2]?.base, null, 'a detached HEAD');
  });

  it('skips a corrupt or unknown line, never failing: not JSON, cut short, an unknown update, a malformed pr or ci, no ts', () => {
    appendRun(dataDir, shipped('r1'));
    lines(
      '{"v":1,"run":"r1","update":"pr",',
      'not json at all',
      JSON.stringify({ v: 1, ts: '2025-03-01T11:00:00.000Z', run: 'r1', update: 'merge', pr: { url: 'https://x', number: 1 } }),
      JSON.stringify({ v: 1, ts: '2025-03-01T11:00:00.000Z', run: 'r1', update: 'pr', pr: { url: 'https://x' } }),
      JSON.stringify({ v: 1, ts: '2025-03-01T11:00:00.000Z', run: 'r1', update: 'pr' }),
      JSON.stringify({ v: 1, ts: '2025-03-01T11:00:00.000Z', run: 'r1', update: 'ci', ci: { state: 'green', url: '', checks: [] } }),
      JSON.stringify({ v: 1, ts: '2025-03-01T11:00:00.000Z', run: 'r1', update: 'ci', ci: { state: 'failed', url: '', checks: [{ name: 1 }] } }),
      JSON.stringify({ v: 1, ts: 'yesterday', run: 'r1', update: 'ci', ci: { state: 'failed', url: '', checks: [] } }),
      JSON.stringify({ v: 2, ts: '2025-03-01T11:00:00.000Z', run: 'r1', update: 'ci', ci: { state: 'failed', url: '', checks: [] } }),
      JSON.stringify({ v: 1, ts: '2025-03-01T11:00:00.000Z', update: 'ci', ci: { state: 'failed', url: '', checks: [] } }),
      '[1,2,3]',
      JSON.stringify({ v: 1, ts: '2025-03-01T11:00:00.000Z', run: 'r1', outcome: null, update: 'ci', ci: { state: 'failed', url: '', checks: [] } }),
    );
    appendRunUpdate(dataDir, ci('r1', '2025-03-01T10:30:00.000Z', 'pending'));
    const runs = readRuns(dataDir);
    assert.equal(runs.length, 1);
    assert.equal(runs[0]?.pr, undefined);
    assert.equal(runs[0]?.ci?.state, 'pending', 'only the one well-formed update counts');
  });

  it('refuses to append a line that is not an update of the contract', () => {
    assert.throws(() => appendRunUpdate(dataDir, { v: 1, ts: '2025-03-01T11:00:00.000Z', run: 'r1', update: 'pr' }), /without its pr/);
    assert.throws(() => appendRunUpdate(dataDir, { ...ci('r1', '2025-03-01T11:00:00.000Z', 'failed'), ci: { state: 'red' as 'failed', url: '', checks: [] } }), /ci is not/);
    assert.equal(fs.existsSync(file()), false, 'nothing was written');
  });
});
