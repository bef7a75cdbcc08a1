import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import type { AnchorDriftRecord, AnchorLossOpenRecord } from '../../../../src/core/context/driftEvents';
import { isGateState, type GateState } from '../../../../src/core/context/gateState';
import { complete, est, gateRig, OPENAI, useTempDir, windowIds } from './helpers';

/** The state as the session file keeps it: through JSON. */
function saved(state: GateState): GateState {
  const value: unknown = JSON.parse(JSON.stringify(state));
  assert.ok(isGateState(value));
  return value;
}

describe('gate/loss windows keep their evidence', () => {
  const dir = useTempDir();

  // Earlier the window began with the request after the silent one; now the
  // silent request opens it as its stream ends, and its estimate is the first.
  it('a provider silent for 10 requests: the drift carries their 10 estimates, the first silent one included, and their maximum; the state keeps only the two numbers', () => {
    const { gate, events } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    const sent = [1100, 1150, 1900, 1300, 1700, 1250, 1800, 1400, 1350, 1500];
    for (const tokens of sent) complete(gate, OPENAI, tokens); // usage stops: the first of them opens the window
    const snapshot = JSON.stringify(gate.snapshot());
    for (const tokens of [1150, 1300, 1700, 1250]) assert.ok(!snapshot.includes(String(tokens)), 'no list of estimates in the session state');
    assert.equal(gate.snapshot().window?.maxEst, 1900);
    assert.equal(gate.snapshot().window?.requests, 10);
    complete(gate, OPENAI, 1600, 1700);
    const drift = events().find((e): e is AnchorDriftRecord => e.event === 'anchor_drift');
    assert.deepEqual(drift?.window_ests, [...sent, 1600]);
    assert.equal(drift?.window_ests?.[0], 1100, 'the request that lost the anchor is the window\'s first');
    assert.equal(drift?.window_max_est, Math.max(...sent, 1600));
    assert.equal(drift?.window_requests, 11);
    assert.equal(drift?.window, 'w1');
  });

  it('a reply with a count that is not an anchor opens its window with its own estimate first', () => {
    const { gate, events } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    complete(gate, OPENAI, 2000, 900); // below half the estimate: suspect
    complete(gate, OPENAI, 2100, 2300);
    const drift = events().find((e): e is AnchorDriftRecord => e.event === 'anchor_drift');
    assert.deepEqual(drift?.window_ests, [2000, 2100]);
    assert.equal(drift?.window_requests, 2);
  });

  it('keeps the newest 1,000 estimates of a long window, and their count', () => {
    const { gate, events } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    complete(gate, OPENAI, 1000);
    for (let i = 0; i < 1_200; i++) complete(gate, OPENAI, 1000 + i);
    complete(gate, OPENAI, 5000, 5100);
    const drift = events().find((e): e is AnchorDriftRecord => e.event === 'anchor_drift');
    assert.equal(drift?.window_ests?.length, 1_000);
    assert.equal(drift?.window_ests?.[0], 1000 + 201, 'the oldest 202 of 1,202 are gone');
    assert.equal(drift?.window_requests, 1_202);
  });

  it('closing with a window open writes anchor_loss_open; the next activation carries the window on and counts it once', () => {
    const first = gateRig(dir());
    complete(first.gate, OPENAI, 1000, 1200);
    complete(first.gate, OPENAI, 1100); // warns: window w1
    complete(first.gate, OPENAI, 1150);
    complete(first.gate, OPENAI, 1180);
    first.gate.close();
    first.gate.close(); // nothing new to say: written once
    const open = first.events().filter((e): e is AnchorLossOpenRecord => e.event === 'anchor_loss_open');
    assert.equal(open.length, 1);
    assert.deepEqual({ ...open[0], ts: 'x' }, {
      v: 1, event: 'anchor_loss_open', ts: 'x', session: 's1', window: 'w1', reason: 'no-usage', model: OPENAI.model, provider: OPENAI.provider,
      reasons: ['no-usage'], warned: true, est: 1180, window_max_est: 1180, window_requests: 3, window_ests: [1100, 1150, 1180],
    });
    assert.deepEqual(first.log.readDrift().totals, { windows: 1, warned: 1, drifts: 0, abs_delta_sum: 0 }, 'anchor_loss_open opens nothing');

    const second = gateRig(dir(), 's1', saved(first.gate.snapshot()), windowIds('x'));
    assert.equal(second.gate.beforeRequest(OPENAI, est(1190)).newWarning, false);
    second.gate.afterRequest({ completed: true, promptTokens: 1300 });
    const read = second.log.readDrift();
    assert.deepEqual(read.totals, { windows: 1, warned: 1, drifts: 1, abs_delta_sum: 110 });
    const drift = read.events.find((e): e is AnchorDriftRecord => e.event === 'anchor_drift');
    assert.equal(drift?.window, 'w1');
    assert.deepEqual(drift?.window_ests, [1100, 1150, 1180, 1190], 'the estimates written at the stop are taken back');
  });

  it('a session file that missed the window (stopped before its gate record) carries on the window the log shows open', () => {
    const first = gateRig(dir());
    complete(first.gate, OPENAI, 1000, 1200);
    const stale = saved(first.gate.snapshot()); // the last record the session file got
    complete(first.gate, OPENAI, 1100); // warns, writes anchor_loss; its gate record is lost
    complete(first.gate, OPENAI, 1150);
    first.gate.close();
    assert.equal(stale.window, null, 'the file never saw the window');

    const second = gateRig(dir(), 's1', stale, windowIds('x'));
    const p = second.gate.beforeRequest(OPENAI, est(1160));
    assert.equal(p.newWarning, false, 'the window already warned');
    assert.equal(p.warning, true);
    second.gate.afterRequest({ completed: true, promptTokens: 1200 });
    assert.deepEqual(second.log.readDrift().totals, { windows: 1, warned: 1, drifts: 1, abs_delta_sum: 40 });
    const drift = second.log.readDrift().events.find((e): e is AnchorDriftRecord => e.event === 'anchor_drift');
    assert.deepEqual(drift?.window_ests, [1100, 1150, 1160], 'the evidence written at the stop, and the request after');
  });

  it('a session file that missed the drift closing its window takes the anchor the log shows', () => {
    const first = gateRig(dir());
    complete(first.gate, OPENAI, 1000, 1200);
    complete(first.gate, OPENAI, 1100); // the window opens and warns
    complete(first.gate, OPENAI, 1150);
    const stale = saved(first.gate.snapshot()); // window open in the file
    complete(first.gate, OPENAI, 1160, 1300); // anchor_drift; its gate record is lost

    const second = gateRig(dir(), 's1', stale, windowIds('x'));
    assert.equal(second.gate.warning, false);
    const p = second.gate.beforeRequest(OPENAI, est(1200));
    assert.equal(p.anchored, true);
    assert.equal(p.projected, 1340);
    second.gate.afterRequest({ completed: true, promptTokens: 1350 });
    assert.equal(second.log.readDrift().totals.drifts, 1, 'the window is not closed twice');
  });

  it('a state written before windows had ids gets one, and keeps its window', () => {
    const legacy = {
      v: 1, anchor: null, established: true, afterCompaction: false, afterSwitch: false, previous: OPENAI,
      window: { openedBy: { reason: 'no-usage', ...OPENAI }, reasons: ['no-usage'], warned: true, maxEst: 900, requests: 3 },
    };
    assert.ok(isGateState(legacy));
    const { gate, events } = gateRig(dir(), 's1', legacy);
    assert.equal(gate.snapshot().window?.id, 'w1');
    complete(gate, OPENAI, 1000, 1100);
    const drift = events().find((e): e is AnchorDriftRecord => e.event === 'anchor_drift');
    assert.equal(drift?.window_requests, 4);
    assert.equal(drift?.window_max_est, 1000);
  });
});

describe('gate/counts that are not anchors', () => {
  const dir = useTempDir();

  it('a prompt_tokens below half the estimate is not an anchor: one suspect-usage loss per window, closed by a count that holds', () => {
    const { gate, events } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    const first = complete(gate, OPENAI, 2000, 900);
    assert.equal(first.outcome.kind, 'suspect');
    assert.equal(gate.snapshot().anchor, null);
    assert.equal(complete(gate, OPENAI, 2100, 800).outcome.events.length, 0, 'said once per window');
    const p = gate.beforeRequest(OPENAI, est(2200));
    assert.equal(p.unanchoredBecause, 'suspect-usage');
    assert.equal(p.newWarning, false, 'not the no-usage warning');
    gate.afterRequest({ completed: true, promptTokens: 2300 });
    assert.deepEqual(events().map((e) => (e.event === 'anchor_loss' ? `loss:${e.reason}:${e.est}` : e.event)), ['loss:suspect-usage:2000', 'anchor_drift']);
    assert.equal(gate.beforeRequest(OPENAI, est(2250)).projected, 2350);
  });

  it('a prompt_tokens equal to the server\'s window is a truncated prompt, not an anchor', () => {
    const { gate } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    gate.beforeRequest(OPENAI, est(5000));
    assert.equal(gate.afterRequest({ completed: true, promptTokens: 4096, contextWindow: 4096 }).kind, 'suspect');
    gate.beforeRequest(OPENAI, est(5000));
    assert.equal(gate.afterRequest({ completed: true, promptTokens: 4000, contextWindow: 4096 }).kind, 'anchored', 'a count below the window is one');
  });

  it('a server known to report no usage in streams warns once, as its first reply ends, saying so, however many requests follow', () => {
    const { gate, events } = gateRig(dir());
    const warnings = [];
    for (let i = 0; i <= 6; i++) {
      const p = gate.beforeRequest(OPENAI, est(1000 + i * 100));
      const outcome = gate.afterRequest({ completed: true, usageUnsupported: true });
      for (const said of [p, outcome]) if (said.newWarning) warnings.push(`${i}:${said.warningKind}`);
      assert.equal(outcome.warning, true);
      assert.equal(p.warning, i > 0);
    }
    assert.deepEqual(warnings, ['0:usage-unsupported']);
    assert.equal(events().length, 1, 'one loss window');
  });
});

describe('gate/slug upgrade', () => {
  const dir = useTempDir();

  it('an identity stored with the default port written out is the same provider: no switch, the anchor holds', () => {
    const { gate: old } = gateRig(dir());
    const before = { ...OPENAI, provider: 'api-openai-com-443' };
    complete(old, before, 1000, 1200);
    const { gate, file } = gateRig(dir(), 's1', saved(old.snapshot()));
    const p = gate.beforeRequest(OPENAI, est(1100));
    assert.equal(p.switched, false);
    assert.equal(p.projected, 1300);
    assert.equal(fs.existsSync(file), false, 'no switch loss written');
    assert.equal(gate.snapshot().anchor?.identity.provider, 'api-openai-com');
  });
});
