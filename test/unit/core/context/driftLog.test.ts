import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DriftLog } from '../../../../src/core/context/driftLog';
import type { AnchorDriftRecord, DriftRecord } from '../../../../src/core/context/driftEvents';
import { ContextGate } from '../../../../src/core/context/gate';
import { isGateState } from '../../../../src/core/context/gateState';

import { complete, gateRig, LOCAL, OPENAI, steppingClock, useTempDir, windowIds } from './helpers';
import { tallyDrift } from '../../../helpers/core';

/** Opens a no-usage window and closes it with usage: one window, one drift. */
function lossAndDrift(gate: ContextGate, est: number, real: number): void {
  complete(gate, OPENAI, est); // usage stops: the window opens and warns as this reply ends
  complete(gate, OPENAI, est + 10);
  complete(gate, OPENAI, est + 20, real); // usage back: anchor_drift
}

function drifts(records: DriftRecord[]): AnchorDriftRecord[] {
  return records.filter((r): r is AnchorDriftRecord => r.event === 'anchor_drift');
}

describe('gate/DriftLog (drift.jsonl)', () => {
  const dir = useTempDir();

  it('writes v 1, an ISO-8601 UTC ts, and both identities on anchor_drift', () => {
    const { gate, file } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    complete(gate, LOCAL, 1100); // switch, no usage: warns as the reply ends
    complete(gate, LOCAL, 1300);
    complete(gate, LOCAL, 1250, 1400); // re-anchors
    const lines = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(lines.length, 3);
    for (const line of lines) {
      assert.equal(line.v, 1);
      assert.match(String(line.ts), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    const { ts: _ts, ...drift } = lines[2] ?? {};
    assert.deepEqual(drift, {
      v: 1, event: 'anchor_drift', session: 's1', window: 'w1',
      model: LOCAL.model, provider: LOCAL.provider,
      loss_model: OPENAI.model, loss_provider: OPENAI.provider,
      real: 1400, est: 1250, delta: 150,
      window_max_est: 1300, window_requests: 3, window_ests: [1100, 1300, 1250],
      // OpenAI's recipe counted it: a band of 2%, which the real count left.
      band: 25, held: false,
      totals: { windows: 1, warned: 1, drifts: 1, abs_delta_sum: 150 },
    });
  });

  it('continues the totals after a restart (new log, gate restored from its snapshot)', () => {
    const first = gateRig(dir());
    complete(first.gate, OPENAI, 1000, 1200);
    lossAndDrift(first.gate, 1100, 1000); // delta 1000 - 1120 = -120
    const saved: unknown = JSON.parse(JSON.stringify(first.gate.snapshot()));
    assert.ok(isGateState(saved));

    const restarted = gateRig(dir(), 's1', saved, windowIds('r'));
    lossAndDrift(restarted.gate, 1300, 1400); // delta 1400 - 1320 = 80
    const last = drifts(restarted.events()).at(-1);
    assert.deepEqual(last?.totals, { windows: 2, warned: 2, drifts: 2, abs_delta_sum: 200 });
    assert.deepEqual(restarted.log.readDrift().totals, last?.totals);
  });

  it('skips a corrupt line and a cut-off line, counts them, and keeps counting', () => {
    const { gate, file, log } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    lossAndDrift(gate, 1100, 1150); // delta 30
    fs.appendFileSync(file, 'not json at all\n{"v":1,"event":"anchor_loss","ts":"2026-01-01T00:00:00.000Z"}\n{"v":1,"event":"anch');
    const read = log.readDrift();
    assert.equal(read.skipped, 3, 'garbage, a record missing fields, a truncated tail');
    assert.equal(read.events.length, 2);
    lossAndDrift(gate, 1200, 1190); // delta -30
    const after = log.readDrift();
    assert.deepEqual(after.totals, { windows: 2, warned: 2, drifts: 2, abs_delta_sum: 60 });
    assert.deepEqual(drifts(after.events).at(-1)?.totals, after.totals);
    assert.equal(after.skipped, 3);
  });

  it('keeps totals consistent when two windows (two DriftLogs) append to one file interleaved', () => {
    const file = path.join(dir(), 'drift.jsonl');
    const left = new ContextGate({ session: 'left', sink: new DriftLog(file, steppingClock()), newWindowId: windowIds('l') });
    const right = new ContextGate({ session: 'right', sink: new DriftLog(file, steppingClock()), newWindowId: windowIds('r') });
    complete(left, OPENAI, 1000, 1100);
    complete(right, LOCAL, 2000, 2100);
    complete(left, OPENAI, 1050); // both lose usage, and each warns as its reply ends
    complete(right, LOCAL, 2050);
    complete(left, OPENAI, 1060);
    complete(right, LOCAL, 2060);
    complete(left, OPENAI, 1070, 1100); // left: delta 30
    complete(right, LOCAL, 2070, 2000); // right: delta -70
    const { events } = new DriftLog(file).readDrift();
    assert.deepEqual(events.map((e) => `${e.session}:${e.event}`), [
      'left:anchor_loss', 'right:anchor_loss', 'left:anchor_drift', 'right:anchor_drift',
    ]);
    // Every drift line's totals equal a replay of the file up to and including it.
    events.forEach((event, index) => {
      if (event.event === 'anchor_drift') assert.deepEqual(event.totals, tallyDrift(events.slice(0, index + 1)).totals);
    });
    assert.deepEqual(drifts(events).at(-1)?.totals, { windows: 2, warned: 2, drifts: 2, abs_delta_sum: 100 });
  });

  it('shows an open window: the last loss of a session not followed by its drift', () => {
    const { gate, log } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    lossAndDrift(gate, 1100, 1150);
    complete(gate, OPENAI, 1200); // a second window, still open: opened by this reply without usage
    complete(gate, OPENAI, 1210);
    const read = log.readDrift();
    assert.equal(read.open.length, 1);
    assert.equal(read.open[0]?.session, 's1');
    assert.equal(read.open[0]?.warned, true);
    assert.equal(read.open[0]?.losses[0]?.est, 1200);
  });

  it('after the first read, closing a window reads only the lines appended since, never the whole file again', () => {
    const { gate, file, log } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    lossAndDrift(gate, 1100, 1150); // delta 30
    assert.deepEqual(log.readDrift().totals, { windows: 1, warned: 1, drifts: 1, abs_delta_sum: 30 });
    // Damage the first line in place (same size, same file): only a reader that goes back to the start can see it.
    const first = fs.readFileSync(file, 'utf8').indexOf('\n');
    const fd = fs.openSync(file, 'r+');
    fs.writeSync(fd, 'x'.repeat(first), 0);
    fs.closeSync(fd);
    // The trap: a replay of the whole file now counts one window fewer.
    assert.deepEqual(new DriftLog(file).readDrift().totals, { windows: 0, warned: 0, drifts: 1, abs_delta_sum: 30 });
    lossAndDrift(gate, 1200, 1190); // delta -30
    assert.deepEqual(drifts(new DriftLog(file).readDrift().events).at(-1)?.totals, { windows: 2, warned: 2, drifts: 2, abs_delta_sum: 60 }, 'counted from memory plus the new lines');
    assert.deepEqual(log.readDrift().totals, { windows: 2, warned: 2, drifts: 2, abs_delta_sum: 60 });
  });

  it('a line another window is still writing is counted once it is whole, and only once', () => {
    const { gate, file, log } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    lossAndDrift(gate, 1100, 1150);
    const other = JSON.stringify({ v: 1, event: 'anchor_loss', ts: '2026-01-01T00:00:00.000Z', session: 'other', reason: 'no-usage', model: 'm', provider: 'p', est: 5 });
    fs.appendFileSync(file, other.slice(0, 30));
    const during = log.readDrift();
    assert.equal(during.events.length, 2);
    assert.equal(during.skipped, 1, 'an incomplete line counts as skipped while it is incomplete');
    fs.appendFileSync(file, `${other.slice(30)}\n`);
    const after = log.readDrift();
    assert.deepEqual(after.events.map((e) => e.session), ['s1', 's1', 'other']);
    assert.equal(after.skipped, 0);
    assert.deepEqual(log.readDrift().totals, { windows: 2, warned: 2, drifts: 1, abs_delta_sum: 30 });
    assert.deepEqual(log.readDrift().totals, new DriftLog(file).readDrift().totals);
  });

  it('a file removed or cut shorter is read again from the start', () => {
    const { gate, file, log } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    lossAndDrift(gate, 1100, 1150);
    assert.equal(log.readDrift().totals.drifts, 1);
    fs.rmSync(file);
    assert.deepEqual(log.readDrift().totals, { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0 });
    lossAndDrift(gate, 1200, 1190);
    assert.deepEqual(drifts(new DriftLog(file).readDrift().events).at(-1)?.totals, { windows: 1, warned: 1, drifts: 1, abs_delta_sum: 30 });
    fs.writeFileSync(file, '');
    assert.deepEqual(log.readDrift(), { events: [], totals: { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0 }, summary: { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0, switches: 0, losses: 0 }, open: [], skipped: 0 });
  });

  it('reads a missing file as empty', () => {
    const read = new DriftLog(path.join(dir(), 'none.jsonl')).readDrift();
    assert.deepEqual(read, { events: [], totals: { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0 }, summary: { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0, switches: 0, losses: 0 }, open: [], skipped: 0 });
  });

  it('still counts lines written before windows had ids, and a window whose later losses carry an id joins it', () => {
    const file = path.join(dir(), 'drift.jsonl');
    const line = (fields: Record<string, unknown>): string => JSON.stringify({ v: 1, ts: '2026-01-01T00:00:00.000Z', session: 's1', model: 'm', provider: 'p', est: 5, ...fields });
    fs.writeFileSync(file, [
      line({ event: 'anchor_loss', reason: 'switch' }),
      line({ event: 'anchor_loss', reason: 'no-usage' }), // joins the legacy switch window
      line({ event: 'anchor_drift', loss_model: 'm', loss_provider: 'p', real: 10, delta: 5, window_max_est: 5, window_requests: 2, totals: { windows: 1, warned: 1, drifts: 1, abs_delta_sum: 5 } }),
      line({ event: 'anchor_loss', reason: 'switch' }), // a legacy window left open by an earlier version
      line({ event: 'anchor_loss', reason: 'no-usage', window: 'n1' }), // the new version carries it on under an id
      line({ event: 'anchor_loss_open', window: 'n1', reason: 'switch', reasons: ['switch', 'no-usage'], warned: true, window_max_est: 5, window_requests: 1, window_ests: [5] }),
      '',
    ].join('\n'));
    const read = new DriftLog(file).readDrift();
    assert.equal(read.skipped, 0);
    assert.deepEqual(read.totals, { windows: 2, warned: 2, drifts: 1, abs_delta_sum: 5 });
    assert.equal(read.open[0]?.losses.length, 2);
    assert.equal(read.open[0]?.lastOpen?.window_requests, 1);
  });
});
