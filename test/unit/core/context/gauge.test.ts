import assert from 'node:assert/strict';
import { countSentence, gaugeHeadline, gaugeOf, gaugeText, gaugeTooltip, halfWidthText, type GaugeState } from '../../../../src/core/context/gauge';
import { complete, est, gateRig, LOCAL, OPENAI, useTempDir } from './helpers';

const settings = { contextWindow: 10_000, thresholdPercent: 80 };
const totals = { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0, switches: 0, losses: 0 };

describe('gate/gauge tooltip', () => {
  const dir = useTempDir();

  it('names the estimator: the tokenizer, the calibrated heuristic, or the heuristic, and the parts still estimated until their exact count lands', () => {
    const base: GaugeState = { projected: 1000, window: 10_000, thresholdPercent: 80, anchored: true, warning: false, estimate: 1000 };
    assert.match(gaugeTooltip({ ...base, estimator: { kind: 'tokenizer', name: 'o200k_base', pending: 0 } }), /^Estimator: tokenizer \(o200k_base\)$/m);
    assert.match(gaugeTooltip({ ...base, estimator: { kind: 'tokenizer', name: 'o200k_base', pending: 3 } }), /3 parts estimated from fitted rates until their exact count lands/);
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
    assert.match(gaugeTooltip(dropped), /^Estimated because more than half of what the anchor measured was removed/m);
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

describe('gate/gauge tooltip: the first sentence says what the headline counts', () => {
  const dir = useTempDir();
  const anchored = (real: number, projected: number): GaugeState => ({
    projected, window: 8192, thresholdPercent: 80, anchored: true, warning: false, estimate: projected + 6,
    anchor: { real, est: real - 7, model: '/work/models/tiny-qwen3tok-toolcall.gguf', provider: '127-0-0-1-18200' },
  });

  it('anchored: the provider\'s count plus Candor\'s estimate since, and their sum, which is the headline', () => {
    assert.equal(countSentence(anchored(1407, 1417)), '1,407 counted by the provider + 10 estimated since = 1,417');
    assert.equal(countSentence(anchored(1407, 1407)), '1,407 counted by the provider, nothing added since');
    assert.equal(countSentence(anchored(1407, 1287)), '1,407 counted by the provider − 120 estimated as removed since = 1,287');
    const tooltip = gaugeTooltip(anchored(1407, 1417)).split('\n');
    assert.equal(tooltip[0], '1,407 counted by the provider + 10 estimated since = 1,417', 'the tooltip starts with it');
    assert.match(tooltip.join('\n'), /^Candor's own estimate of the whole payload: 1,423 \(the sum above uses the provider's count instead\)$/m);
    assert.match(tooltip.join('\n'), /tiny-qwen3tok-toolcall\.gguf @/, 'the model by its short name');
    assert.doesNotMatch(tooltip.join('\n'), /\/work\/models/);
  });

  it('from a real gate: the sentence\'s numbers are the anchor and the projection', () => {
    const { gate } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    const state = gaugeOf(gate.beforeRequest(OPENAI, est(1040)), settings, totals);
    assert.equal(state.projected, 1240);
    assert.ok(state.band !== undefined && state.band > 0, 'the 40 added since is an estimate, with a band');
    assert.equal(countSentence(state), `1,200 counted by the provider + 40 ±${Math.ceil(state.band)} estimated since = 1,240`);
  });

  it('the chat header says what the status bar says: its percentage, ≈ while a band is open, the band\'s words, and the sum as its title', () => {
    const { gate } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    const banded = gaugeOf(gate.beforeRequest(OPENAI, est(1040)), settings, totals);
    const band = Math.ceil(banded.band ?? 0);
    const percent = /\$\(pulse\) (\d+)% ≈/.exec(gaugeText(banded))?.[1] ?? assert.fail(gaugeText(banded));
    assert.deepEqual(gaugeHeadline(banded), {
      text: `Context ${percent}% · ≈1,240 / 10,000 · anchored, plus or minus ${halfWidthText(banded.band ?? 0, 1240)}`,
      title: `1,200 counted by the provider + 40 ±${band} estimated since = 1,240`,
      warning: false,
    });
    const server: GaugeState = { projected: 1463, window: 8192, thresholdPercent: 80, anchored: true, warning: false, estimate: 1362, source: 'server', band: 0 };
    assert.equal(gaugeHeadline(server).text, 'Context 18% · 1,463 / 8,192 · counted by the server', 'an exact count: no ≈, and where it comes from');
    assert.equal(gaugeText(server), '$(pulse) 18% 1.5K/8.2K');
    assert.match(gaugeTooltip(server), /^Candor's own estimate of the whole payload: 1,362 \(the number above is the server's own count instead\)$/m, 'no "sum" where the server counted');
  });

  it('without an anchor, the estimate alone; after a switch, the switch in its own words, never a provider that stopped reporting', () => {
    const { gate } = gateRig(dir());
    complete(gate, OPENAI, 1000, 1200);
    const afterSwitch = gaugeOf(gate.beforeRequest(LOCAL, est(1100)), settings, { ...totals, windows: 1, switches: 1 });
    const tooltip = gaugeTooltip(afterSwitch);
    assert.ok(afterSwitch.band !== undefined && afterSwitch.band > 0);
    assert.equal(tooltip.split('\n')[0], `≈1,100 ±${Math.ceil(afterSwitch.band)} estimated by Candor (no count from the provider to add to)`);
    assert.match(tooltip, /^Estimated because the model changed: the next reply re-anchors\.$/m);
    assert.match(tooltip, /^Drift: 1 model switch, 0 lost counts \(0 warned\), 0 re-anchored/m);
    assert.doesNotMatch(tooltip, /stopped reporting usage/);
    assert.doesNotMatch(tooltip, /\(s\)/, 'no "time(s)" or "part(s)"');
  });
});
