import assert from 'node:assert/strict';
import { gaugeOf, gaugeTooltip, type GaugeState } from '../../../../src/core/context/gauge';
import { complete, est, gateRig, OPENAI, useTempDir } from './helpers';

const settings = { contextWindow: 10_000, thresholdPercent: 80 };
const totals = { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0 };

describe('gate/gauge tooltip', () => {
  const dir = useTempDir();

  it('names the estimator: the tokenizer, the calibrated heuristic, or the heuristic, and the parts still estimated until their exact count lands', () => {
    const base: GaugeState = { projected: 1000, window: 10_000, thresholdPercent: 80, anchored: true, warning: false, estimate: 1000 };
    assert.match(gaugeTooltip({ ...base, estimator: { kind: 'tokenizer', name: 'o200k_base', pending: 0 } }), /^Estimator: tokenizer \(o200k_base\)$/m);
    assert.match(gaugeTooltip({ ...base, estimator: { kind: 'tokenizer', name: 'o200k_base', pending: 3 } }), /3 part\(s\) estimated from fitted rates until their exact count lands/);
    assert.match(gaugeTooltip({ ...base, estimator: { kind: 'calibrated heuristic', name: 'heuristic', pending: 0 } }), /^Estimator: calibrated heuristic/m);
    assert.match(gaugeTooltip({ ...base, estimator: { kind: 'heuristic', name: 'heuristic', pending: 0 } }), /^Estimator: heuristic \(no known tokenizer/m);
  });

  it('says when and why the projection shrank, and when and why the anchor was dropped', () => {
    const { gate } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    const shrunk = gaugeOf(gate.beforeRequest(OPENAI, est(800)), settings, totals);
    assert.match(gaugeTooltip(shrunk), /^Shrunk at \d\d:\d\d:\d\d UTC: the payload changed; the estimate of what was removed \(200 tokens\) is subtracted from the anchor\.$/m);
    gate.afterRequest({ completed: true, promptTokens: 1000 });
    const dropped = gaugeOf(gate.beforeRequest(OPENAI, est(300)), settings, totals);
    assert.match(gaugeTooltip(dropped), /^Anchor dropped at \d\d:\d\d:\d\d UTC: the payload changed and more than half of the anchored estimate \(500 tokens\) was removed\.$/m);
    assert.match(gaugeTooltip(dropped), /^Estimated: more than half of what the anchor measured was removed/m);
    // Between requests, until re-anchored, the tooltip keeps saying so.
    assert.equal(gate.project(OPENAI, est(310)).change?.kind, 'dropped');
    gate.afterRequest({ completed: true, promptTokens: 400 });
    assert.equal(gate.project(OPENAI, est(320)).change, undefined, 'a new anchor ends the story');
  });

  it('names the part that changed: the system prompt (memory or prompt version) or the tool list', () => {
    const tooltip = gaugeTooltip({
      projected: 900, window: 10_000, thresholdPercent: 80, anchored: true, warning: false, estimate: 900,
      change: { kind: 'shrunk', removed: 120, parts: ['system', 'tools'], at: '2026-01-02T03:04:05.000Z' },
    });
    assert.match(tooltip, /^Shrunk at 03:04:05 UTC: the system prompt \(memory or prompt version\) and the tool list changed;/m);
  });

  it('says plainly when a server never reports usage in streams', () => {
    const base: GaugeState = { projected: 1000, window: 10_000, thresholdPercent: 80, anchored: false, warning: true, estimate: 1000 };
    assert.match(gaugeTooltip({ ...base, warningKind: 'usage-unsupported' }), /this server never reports usage in streams/);
    assert.match(gaugeTooltip(base), /the provider stopped reporting usage/);
  });
});
