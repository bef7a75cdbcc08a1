import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Calibration } from '../../../../src/core/context/calibration';
import { isGateState } from '../../../../src/core/context/gateState';

import { PayloadLedger } from '../../../../src/core/context/ledger';
import type { ChatMessage } from '../../../../src/core/messages';
import { complete, est, gateRig, LOCAL, OPENAI, useTempDir } from './helpers';
import { measureMessage } from '../../../helpers/core';

describe('gate/ContextGate', () => {
  const dir = useTempDir();

  describe('projection', () => {
    it('projects real + (estNow - est) from the anchor', () => {
      const { gate } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const p = gate.beforeRequest(OPENAI, est(1100));
      assert.equal(p.projected, 1300);
      assert.equal(p.anchored, true);
      assert.deepEqual(p.anchor && { ...p.anchor, mark: undefined }, { real: 1200, est: 1000, identity: OPENAI, mark: undefined });
    });

    it('subtracts what was removed when the estimate shrinks, and says so', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const p = gate.beforeRequest(OPENAI, est(900));
      assert.equal(p.projected, 1100, '1200 + (900 - 1000)');
      assert.equal(p.anchored, true);
      assert.equal(p.change?.kind, 'shrunk');
      assert.equal(p.change?.removed, 100);
      assert.equal(p.warning, false);
      assert.equal(gate.snapshot().anchor?.real, 1200, 'the anchor is kept');
      assert.deepEqual(events(), []);
    });

    it('never projects below the provider\'s count scaled to the share of the estimate that is left', () => {
      const { gate } = gateRig(dir());
      complete(gate, OPENAI, 1000, 800); // the provider counts 20% less than we do
      const p = gate.beforeRequest(OPENAI, est(600));
      assert.equal(p.projected, 480, 'not 800 - 400 = 400: 800 × 600/1000');
    });

    it('drops the anchor when more than half of the anchored estimate was removed; the next request is legitimately anchor-less', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const p = gate.beforeRequest(OPENAI, est(400));
      assert.equal(p.anchored, false);
      assert.equal(p.projected, 400);
      assert.equal(p.unanchoredBecause, 'after-shrink');
      assert.equal(p.change?.kind, 'dropped');
      assert.equal(p.change?.removed, 600);
      assert.equal(gate.snapshot().anchor, null);
      // A retry after a failure is still the first request after the drop.
      gate.afterRequest({ completed: false });
      assert.equal(gate.beforeRequest(OPENAI, est(400)).newWarning, false);
      gate.afterRequest({ completed: true, promptTokens: 500 });
      assert.deepEqual(events(), [], 'no loss window');
      assert.equal(gate.beforeRequest(OPENAI, est(450)).projected, 550, 're-anchored on what is left');
    });

    it('a system prefix rebuilt byte for byte for each request does not shift the projection', () => {
      const ledger = new PayloadLedger();
      const system = (memory: string): string => `You are Candor.\n\n# Memory\n${memory}`;
      ledger.reset([{ role: 'user', content: '请解释这个函数的作用。' }], '');
      const { gate } = gateRig(dir());
      gate.beforeRequest(OPENAI, ledger.measure(system('uses tabs'), ''));
      gate.afterRequest({ completed: true, promptTokens: 5000 });

      const added: ChatMessage[] = [
        { role: 'assistant', content: 'It parses the config.' },
        { role: 'user', content: 'And the JSON {"port": 8080}?' },
      ];
      for (const message of added) ledger.append(message);
      // A new string with the same text, as each request builds it.
      const p = gate.beforeRequest(OPENAI, ledger.measure(system(['uses', 'tabs'].join(' ')), ''));
      // No tokenizer here: the heuristic's features, at the calibration's rates.
      const addedEst = Calibration.fresh(OPENAI).delta(added.map((m) => measureMessage(m).features).reduce((sum, f) => sum.map((v, i) => v + (f[i] ?? 0))));
      assert.equal(p.projected, Math.round(5000 + addedEst), 'only the new messages move the projection');
    });
  });

  describe('legitimate missing anchors', () => {
    it('is silent before the session is established, even after a failed request', () => {
      const { gate, file } = gateRig(dir());
      const first = gate.beforeRequest(OPENAI, est(500));
      gate.afterRequest({ completed: false });
      const second = gate.beforeRequest(OPENAI, est(500));
      for (const p of [first, second]) {
        assert.equal(p.unanchoredBecause, 'not-established');
        assert.equal(p.warning, false);
        assert.equal(p.newWarning, false);
      }
      assert.equal(fs.existsSync(file), false, 'nothing written');
    });

    it('is silent on the first request after a compaction, and the marker is consumed by it', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      gate.afterCompaction();
      const { projection } = complete(gate, OPENAI, 300, 350);
      assert.equal(projection.unanchoredBecause, 'after-compaction');
      assert.equal(projection.warning, false);
      assert.deepEqual(events(), [], 'no loss window');
      assert.equal(gate.snapshot().afterCompaction, false, 'consumed');
      assert.equal(gate.beforeRequest(OPENAI, est(320)).anchored, true);
    });

    // Earlier the marker also hid the loss of the request it marked until the
    // next request was projected; now it exempts only that request's projection.
    it('exempts only the projection: the first request after a compaction ending without usage warns as its stream ends', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      gate.afterCompaction();
      const { projection, outcome } = complete(gate, OPENAI, 300);
      assert.equal(projection.unanchoredBecause, 'after-compaction');
      assert.equal(projection.warning, false, 'its own projection is exempt');
      assert.equal(outcome.newWarning, true, 'its stream ended without usage: the warning, now');
      assert.equal(gate.warning, true);
      assert.deepEqual(events().map((e) => e.event === 'anchor_loss' && [e.reason, e.est]), [['no-usage', 300]]);
    });

    it('is silent on the first request after a switch, writes anchor_loss "switch" with the identity left, and consumes the marker', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const { projection, outcome } = complete(gate, LOCAL, 1100, 1300);
      assert.equal(outcome.warning, false);
      assert.equal(projection.switched, true);
      assert.equal(projection.unanchoredBecause, 'after-switch');
      assert.equal(projection.warning, false);
      const [loss, ...rest] = events();
      assert.deepEqual(rest.map((e) => e.event), ['anchor_drift'], 'closed by the switched request\'s own count');
      assert.equal(loss?.event, 'anchor_loss');
      assert.equal(loss?.event === 'anchor_loss' && loss.reason, 'switch');
      assert.equal(loss?.model, OPENAI.model);
      assert.equal(loss?.provider, OPENAI.provider);
      assert.equal(loss?.est, 1100);
      assert.equal(gate.snapshot().afterSwitch, false, 'consumed');
    });

    it('keeps a one-shot marker through a request that did not complete (a retry is still the first)', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      gate.beforeRequest(LOCAL, est(1100));
      gate.afterRequest({ completed: false });
      const retry = gate.beforeRequest(LOCAL, est(1100));
      assert.equal(retry.unanchoredBecause, 'after-switch');
      assert.equal(retry.newWarning, false);
      assert.equal(events().length, 1, 'only the switch');
    });
  });

  describe('loss windows', () => {
    // Earlier the warning waited for the next request's projection; now the
    // stream's end without usage is the warning, before anything else is sent.
    it('warns the moment a completed reply brings no usage: gauge state, anchor_loss "no-usage" with the current identity, before any next request', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      assert.equal(gate.warning, false);
      const { outcome } = complete(gate, OPENAI, 1100); // usage stops
      assert.equal(outcome.kind, 'unanchored');
      assert.equal(outcome.newWarning, true, 'the chat says so now');
      assert.equal(outcome.warning, true);
      assert.equal(outcome.warningKind, 'no-usage');
      assert.equal(gate.warning, true, 'the gauge warns now');
      const between = gate.project(OPENAI, est(1100));
      assert.equal(between.warning, true, 'the gauge between requests');
      assert.equal(between.unanchoredBecause, 'no-usage');
      const [loss, ...rest] = events();
      assert.deepEqual(rest, []);
      assert.deepEqual(loss && { ...loss, ts: 'x' }, {
        v: 1, event: 'anchor_loss', session: 's1', window: 'w1', reason: 'no-usage', model: 'gpt-4o', provider: 'api-openai-com', est: 1100, ts: 'x',
      });
      const next = gate.beforeRequest(OPENAI, est(1150));
      assert.equal(next.projected, 1150);
      assert.equal(next.warning, true);
      assert.equal(next.newWarning, false, 'said once, at the stream\'s end');
      assert.equal(events().length, 1);
    });

    it('warns on the first reply of a session that brings no usage, whatever anchor state it was sent with', () => {
      const { gate, events } = gateRig(dir());
      const { projection, outcome } = complete(gate, OPENAI, 500);
      assert.equal(projection.unanchoredBecause, 'not-established', 'its projection was legitimately anchor-less');
      assert.equal(outcome.newWarning, true);
      assert.equal(gate.warning, true);
      assert.deepEqual(events().map((e) => e.event === 'anchor_loss' && e.reason), ['no-usage']);
    });

    it('does not warn again for later replies without usage of the same window', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      assert.equal(complete(gate, OPENAI, 1100).outcome.newWarning, true);
      for (const tokens of [1150, 1200, 1300]) {
        const { projection, outcome } = complete(gate, OPENAI, tokens);
        assert.equal(projection.newWarning, false);
        assert.equal(outcome.newWarning, false, 'once per window');
        assert.equal(projection.warning && outcome.warning, true, 'the window still warns');
      }
      assert.equal(events().length, 1);
    });

    // Earlier the "no-usage" loss of a switched request waited for the next
    // request; now it comes with the end of that request's stream.
    it('after a switch whose first request had no usage, the same window gets one "no-usage" loss with the new identity, as its stream ends', () => {
      const { gate, log } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const first = gate.beforeRequest(LOCAL, est(1100));
      assert.equal(first.warning, false, 'the switch itself does not warn');
      assert.equal(gate.warning, false);
      const outcome = gate.afterRequest({ completed: true }); // first after switch: no usage
      assert.equal(outcome.newWarning, true);
      assert.equal(gate.warning, true, 'the switch window warns now');
      assert.deepEqual(outcome.events.map((e) => e.event === 'anchor_loss' && [e.reason, e.window, e.model, e.est]), [['no-usage', 'w1', LOCAL.model, 1100]]);
      const p = gate.beforeRequest(LOCAL, est(1200));
      gate.afterRequest({ completed: true });
      gate.beforeRequest(LOCAL, est(1300));
      assert.equal(p.newWarning, false, 'once per window');
      const read = log.readDrift();
      assert.deepEqual(read.events.map((e) => e.event === 'anchor_loss' && [e.reason, e.model]), [
        ['switch', OPENAI.model],
        ['no-usage', LOCAL.model],
      ]);
      assert.equal(read.open.length, 1, 'one window holding both losses');
      assert.equal(read.open[0]?.losses.length, 2);
      assert.deepEqual(read.totals, { windows: 1, warned: 1, drifts: 0, abs_delta_sum: 0 });
    });

    it('leaves the anchor and opens no window when a request fails, is stopped or is cut', () => {
      const { gate, file } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const before = JSON.stringify(gate.snapshot());
      for (let i = 0; i < 3; i++) {
        gate.beforeRequest(OPENAI, est(1100 + i));
        assert.equal(gate.afterRequest({ completed: false }).kind, 'not-completed');
      }
      assert.equal(JSON.stringify(gate.snapshot()), before);
      const p = gate.beforeRequest(OPENAI, est(1100));
      assert.equal(p.anchored, true);
      assert.equal(p.projected, 1300);
      assert.equal(fs.existsSync(file), false);
    });

    it('treats prompt_tokens of 0 as no usage', () => {
      const { gate } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      assert.equal(complete(gate, OPENAI, 1100, 0).outcome.kind, 'unanchored');
      assert.equal(gate.snapshot().anchor, null);
    });
  });

  describe('switch', () => {
    it('drops the anchor: a projection never mixes two providers\' bases', () => {
      const { gate } = gateRig(dir());
      // OpenAI counts this history at 50K where our estimate says 40K.
      complete(gate, OPENAI, 40_000, 50_000);
      const preview = gate.project(LOCAL, est(41_000));
      const onLocal = gate.beforeRequest(LOCAL, est(41_000));
      for (const p of [preview, onLocal]) {
        assert.equal(p.projected, 41_000, 'not 50K + 1K from the other provider');
        assert.equal(p.anchored, false);
      }
      gate.afterRequest({ completed: true, promptTokens: 30_000 });
      assert.equal(gate.beforeRequest(LOCAL, est(41_500)).projected, 30_500, 'the local base');
      gate.afterRequest({ completed: false });
      const back = gate.beforeRequest(OPENAI, est(42_000));
      assert.equal(back.projected, 42_000, 'OpenAI\'s old anchor is gone too');
      assert.equal(back.anchored, false);
    });

    it('drops an open window unmeasured and opens a "switch" window that does not warn', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      complete(gate, OPENAI, 1100);
      gate.beforeRequest(OPENAI, est(1500)); // warns
      gate.afterRequest({ completed: true });
      const p = gate.beforeRequest(LOCAL, est(1600));
      assert.equal(p.warning, false);
      assert.equal(gate.warning, false);
      const outcome = gate.afterRequest({ completed: true, promptTokens: 1700 });
      assert.deepEqual(outcome.events, [{
        event: 'anchor_drift', session: 's1', window: 'w2',
        model: LOCAL.model, provider: LOCAL.provider,
        loss_model: OPENAI.model, loss_provider: OPENAI.provider,
        real: 1700, est: 1600, delta: 100,
        window_max_est: 1600, window_requests: 1, window_ests: [1600],
        band: 32, held: false,
      }]);
      assert.deepEqual(events().map((e) => e.event === 'anchor_loss' ? e.reason : e.event), ['no-usage', 'switch', 'anchor_drift']);
    });

    it('is not a switch before the session is established', () => {
      const { gate, file } = gateRig(dir());
      gate.beforeRequest(OPENAI, est(100));
      gate.afterRequest({ completed: false });
      const p = gate.beforeRequest(LOCAL, est(100));
      assert.equal(p.switched, true);
      assert.equal(p.unanchoredBecause, 'not-established');
      assert.equal(fs.existsSync(file), false);
    });
  });

  describe('compaction and persistence', () => {
    it('manual compaction drops the anchor', () => {
      const { gate } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      gate.afterCompaction();
      assert.equal(gate.snapshot().anchor, null);
      assert.equal(gate.project(OPENAI, est(400)).anchored, false);
    });

    it('a compaction that replaced nothing changes nothing: the anchor stays and no marker is set', () => {
      const { gate } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      gate.afterCompaction(0);
      assert.equal(gate.snapshot().afterCompaction, false);
      const p = gate.beforeRequest(OPENAI, est(1150));
      assert.equal(p.anchored, true);
      assert.equal(p.projected, 1350);
    });

    it('ignores the result of a request that was in flight when the history was compacted', () => {
      const { gate } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      gate.beforeRequest(OPENAI, est(1100));
      gate.afterCompaction();
      assert.equal(gate.afterRequest({ completed: true, promptTokens: 1300 }).kind, 'ignored');
      assert.equal(gate.snapshot().anchor, null);
      assert.equal(gate.snapshot().afterCompaction, true);
    });

    it('keeps anchor, markers and window through a reload (snapshot as JSON)', () => {
      const first = gateRig(dir());
      complete(first.gate, OPENAI, 1000, 1200);
      complete(first.gate, OPENAI, 1100);
      first.gate.beforeRequest(OPENAI, est(1150));
      const saved: unknown = JSON.parse(JSON.stringify(first.gate.snapshot()));
      assert.ok(isGateState(saved));
      const second = gateRig(dir(), 's1', saved);
      assert.equal(second.gate.warning, true);
      const p = second.gate.beforeRequest(OPENAI, est(1200));
      assert.equal(p.newWarning, false, 'the reloaded window does not warn twice');
      second.gate.afterRequest({ completed: true, promptTokens: 1400 });
      assert.equal(second.gate.beforeRequest(OPENAI, est(1250)).projected, 1450);
    });

    it('rejects a malformed saved state', () => {
      assert.equal(isGateState({ v: 1, anchor: { real: 'x' } }), false);
      assert.equal(isGateState(null), false);
    });
  });
});
