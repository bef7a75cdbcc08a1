import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { DriftLog } from '../../../../src/core/context/driftLog';
import { complete, gateRig, LOCAL, OPENAI, useTempDir } from './helpers';

const OFFLINE = { provider: 'offline', model: 'candor-offline' };
const LLAMA = { provider: '127-0-0-1-18200', model: '/models/tiny-qwen3tok-toolcall.gguf' };

/**
 * A switch is the user's choice, a loss the provider's silence: the drift
 * log counts them apart, from the reasons of each window's `anchor_loss`
 * lines (tally.ts), and drift.jsonl's `totals` keep their four fields.
 */
describe('gate/drift totals: switches counted apart from losses', () => {
  const dir = useTempDir();

  it('a switch from the offline demo to llama.cpp that re-anchors at once is one switch and no loss', () => {
    const { gate, log, file } = gateRig(dir());
    complete(gate, OFFLINE, 900, 929);
    complete(gate, LLAMA, 1400, 1456); // the switch: the first llama.cpp request reports usage
    const reasons = fs.readFileSync(file, 'utf8').trim().split('\n').map((l) => (JSON.parse(l) as { event: string; reason?: string }))
      .map((e) => `${e.event}${e.reason ? `:${e.reason}` : ''}`);
    assert.deepEqual(reasons, ['anchor_loss:switch', 'anchor_drift'], 'the log says it was a switch');
    assert.deepEqual(log.readDrift().summary, { windows: 1, warned: 0, drifts: 1, abs_delta_sum: 56, switches: 1, losses: 0 });
    assert.deepEqual(log.readDrift().totals, { windows: 1, warned: 0, drifts: 1, abs_delta_sum: 56 }, 'the file\'s totals keep their four fields');
    const line = JSON.parse(fs.readFileSync(file, 'utf8').trim().split('\n')[1] ?? '{}') as { totals?: object };
    assert.deepEqual(Object.keys(line.totals ?? {}).sort(), ['abs_delta_sum', 'drifts', 'warned', 'windows']);
  });

  it('a reply without usage is a loss with a warning; a switch whose first reply brings none is a switch and a loss', () => {
    const { gate, log } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    complete(gate, OPENAI, 1100); // no usage: a loss, warned
    complete(gate, OPENAI, 1150, 1300); // re-anchored
    assert.deepEqual(pick(log), { switches: 0, losses: 1, warned: 1, windows: 1 });
    complete(gate, LOCAL, 1200); // a switch, and its first reply brings no usage
    complete(gate, LOCAL, 1250, 1400);
    assert.deepEqual(pick(log), { switches: 1, losses: 2, warned: 2, windows: 2 });
  });

  it('a count too low to trust is a loss without a warning', () => {
    const { gate, log } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    complete(gate, OPENAI, 4000, 100); // suspect usage
    complete(gate, OPENAI, 4100, 4300);
    assert.deepEqual(pick(log), { switches: 0, losses: 1, warned: 0, windows: 1 });
  });

  it('the counts are the file\'s: a second reader, and lines written before windows had ids, count the same', () => {
    const { gate, file } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    complete(gate, LOCAL, 1100, 1150);
    const legacy = [
      { v: 1, event: 'anchor_loss', ts: '2025-01-01T00:00:00.000Z', session: 'old', reason: 'switch', model: 'a', provider: 'p', est: 10 },
      { v: 1, event: 'anchor_loss', ts: '2025-01-01T00:00:01.000Z', session: 'old', reason: 'no-usage', model: 'b', provider: 'p', est: 12 },
    ];
    fs.appendFileSync(file, legacy.map((l) => `${JSON.stringify(l)}\n`).join(''));
    assert.deepEqual(pick(new DriftLog(file)), { switches: 2, losses: 1, warned: 1, windows: 2 });
  });
});

function pick(log: DriftLog): Record<string, number> {
  const { switches, losses, warned, windows } = log.readDrift().summary;
  return { switches, losses, warned, windows };
}
