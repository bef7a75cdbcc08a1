import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { heuristicEstimator } from '../../../src/core/context/estimator';
import { isGateState } from '../../../src/core/context/gateState';
import { IncrementalEstimate } from '../../../src/core/context/incremental';
import type { ChatMessage } from '../../../src/core/messages';
import { complete, gateRig, LOCAL, OPENAI, useTempDir } from './helpers';

describe('gate/ContextGate', () => {
  const dir = useTempDir();

  describe('projection', () => {
    it('projects real + (estNow - est) from the anchor', () => {
      const { gate } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const p = gate.beforeRequest(OPENAI, 1100);
      assert.equal(p.projected, 1300);
      assert.equal(p.anchored, true);
      assert.deepEqual(p.anchor, { real: 1200, est: 1000, identity: OPENAI });
    });

    it('falls back to the estimate when the estimate shrank below the anchor\'s', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const p = gate.beforeRequest(OPENAI, 900);
      assert.equal(p.projected, 900);
      assert.equal(p.anchored, false);
      assert.equal(p.unanchoredBecause, 'shrunk');
      assert.equal(p.warning, false);
      assert.equal(gate.snapshot().anchor?.real, 1200, 'the anchor is kept');
      assert.deepEqual(events(), []);
    });

    it('a byte-stable system prefix rebuilt for each request does not shift the estimate', () => {
      const estimate = new IncrementalEstimate(heuristicEstimator());
      const systemPrompt = (memory: string): ChatMessage => ({ role: 'system', content: `You are Candor.\n\n# Memory\n${memory}` });
      const history: ChatMessage[] = [{ role: 'user', content: '请解释这个函数的作用。' }];
      const { gate } = gateRig(dir());
      const firstEst = estimate.total([systemPrompt('uses tabs'), ...history]);
      complete(gate, OPENAI, firstEst, 5000);

      const added: ChatMessage[] = [
        { role: 'assistant', content: 'It parses the config.' },
        { role: 'user', content: 'And the JSON {"port": 8080}?' },
      ];
      history.push(...added);
      const p = gate.beforeRequest(OPENAI, estimate.total([systemPrompt('uses tabs'), ...history]));
      const addedEst = added.reduce((sum, m) => sum + heuristicEstimator().countMessage(m), 0);
      assert.equal(p.projected, 5000 + addedEst, 'only the new messages move the projection');
    });
  });

  describe('legitimate missing anchors', () => {
    it('is silent before the session is established, even after a failed request', () => {
      const { gate, file } = gateRig(dir());
      const first = gate.beforeRequest(OPENAI, 500);
      gate.afterRequest({ completed: false, estSent: 500 });
      const second = gate.beforeRequest(OPENAI, 500);
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
      const { projection } = complete(gate, OPENAI, 300);
      assert.equal(projection.unanchoredBecause, 'after-compaction');
      assert.equal(projection.warning, false);
      assert.deepEqual(events(), []);
      assert.equal(gate.snapshot().afterCompaction, false, 'consumed');
      assert.equal(gate.beforeRequest(OPENAI, 320).newWarning, true, 'the next anchor-less request warns');
    });

    it('is silent on the first request after a switch, writes anchor_loss "switch" with the identity left, and consumes the marker', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      const { projection } = complete(gate, LOCAL, 1100);
      assert.equal(projection.switched, true);
      assert.equal(projection.unanchoredBecause, 'after-switch');
      assert.equal(projection.warning, false);
      const [loss, ...rest] = events();
      assert.deepEqual(rest, []);
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
      gate.beforeRequest(LOCAL, 1100);
      gate.afterRequest({ completed: false, estSent: 1100 });
      const retry = gate.beforeRequest(LOCAL, 1100);
      assert.equal(retry.unanchoredBecause, 'after-switch');
      assert.equal(retry.newWarning, false);
      assert.equal(events().length, 1, 'only the switch');
    });
  });

  describe('loss windows', () => {
    it('warns once when a completed request reported no usage: anchor_loss "no-usage" with the current identity', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      complete(gate, OPENAI, 1100); // usage stops
      const p = gate.beforeRequest(OPENAI, 1150);
      assert.equal(p.unanchoredBecause, 'no-usage');
      assert.equal(p.projected, 1150);
      assert.equal(p.warning, true);
      assert.equal(p.newWarning, true);
      assert.equal(gate.warning, true);
      const [loss] = events();
      assert.deepEqual(loss && { ...loss, ts: 'x' }, {
        v: 1, event: 'anchor_loss', session: 's1', reason: 'no-usage', model: 'gpt-4o', provider: 'api-openai-com', est: 1150, ts: 'x',
      });
    });

    it('does not warn again for later anchor-less requests of the same window', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      complete(gate, OPENAI, 1100);
      gate.beforeRequest(OPENAI, 1150);
      gate.afterRequest({ completed: true, estSent: 1150 });
      for (const est of [1200, 1300]) {
        const p = gate.beforeRequest(OPENAI, est);
        gate.afterRequest({ completed: true, estSent: est });
        assert.equal(p.newWarning, false);
        assert.equal(p.warning, true, 'the window still warns');
      }
      assert.equal(events().length, 1);
    });

    it('after a switch whose first request had no usage, the same window gets one "no-usage" loss with the new identity', () => {
      const { gate, log } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      complete(gate, LOCAL, 1100); // first after switch: silent, no usage
      const p = gate.beforeRequest(LOCAL, 1200);
      gate.afterRequest({ completed: true, estSent: 1200 });
      gate.beforeRequest(LOCAL, 1300);
      assert.equal(p.newWarning, true);
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
        gate.beforeRequest(OPENAI, 1100 + i);
        assert.equal(gate.afterRequest({ completed: false, estSent: 1100 + i }).kind, 'not-completed');
      }
      assert.equal(JSON.stringify(gate.snapshot()), before);
      const p = gate.beforeRequest(OPENAI, 1100);
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
      const preview = gate.project(LOCAL, 41_000);
      const onLocal = gate.beforeRequest(LOCAL, 41_000);
      for (const p of [preview, onLocal]) {
        assert.equal(p.projected, 41_000, 'not 50K + 1K from the other provider');
        assert.equal(p.anchored, false);
      }
      gate.afterRequest({ completed: true, estSent: 41_000, promptTokens: 30_000 });
      assert.equal(gate.beforeRequest(LOCAL, 41_500).projected, 30_500, 'the local base');
      gate.afterRequest({ completed: false, estSent: 41_500 });
      const back = gate.beforeRequest(OPENAI, 42_000);
      assert.equal(back.projected, 42_000, 'OpenAI\'s old anchor is gone too');
      assert.equal(back.anchored, false);
    });

    it('drops an open window unmeasured and opens a "switch" window that does not warn', () => {
      const { gate, events } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      complete(gate, OPENAI, 1100);
      gate.beforeRequest(OPENAI, 1500); // warns
      gate.afterRequest({ completed: true, estSent: 1500 });
      const p = gate.beforeRequest(LOCAL, 1600);
      assert.equal(p.warning, false);
      assert.equal(gate.warning, false);
      const outcome = gate.afterRequest({ completed: true, estSent: 1600, promptTokens: 1700 });
      assert.deepEqual(outcome.drift, {
        event: 'anchor_drift', session: 's1',
        model: LOCAL.model, provider: LOCAL.provider,
        loss_model: OPENAI.model, loss_provider: OPENAI.provider,
        real: 1700, est: 1600, delta: 100,
        window_max_est: 1600, window_requests: 1,
      });
      assert.deepEqual(events().map((e) => e.event === 'anchor_loss' ? e.reason : e.event), ['no-usage', 'switch', 'anchor_drift']);
    });

    it('is not a switch before the session is established', () => {
      const { gate, file } = gateRig(dir());
      gate.beforeRequest(OPENAI, 100);
      gate.afterRequest({ completed: false, estSent: 100 });
      const p = gate.beforeRequest(LOCAL, 100);
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
      assert.equal(gate.project(OPENAI, 400).anchored, false);
    });

    it('ignores the result of a request that was in flight when the history was compacted', () => {
      const { gate } = gateRig(dir());
      complete(gate, OPENAI, 1000, 1200);
      gate.beforeRequest(OPENAI, 1100);
      gate.afterCompaction();
      assert.equal(gate.afterRequest({ completed: true, estSent: 1100, promptTokens: 1300 }).kind, 'ignored');
      assert.equal(gate.snapshot().anchor, null);
      assert.equal(gate.snapshot().afterCompaction, true);
    });

    it('keeps anchor, markers and window through a reload (snapshot as JSON)', () => {
      const first = gateRig(dir());
      complete(first.gate, OPENAI, 1000, 1200);
      complete(first.gate, OPENAI, 1100);
      first.gate.beforeRequest(OPENAI, 1150);
      const saved: unknown = JSON.parse(JSON.stringify(first.gate.snapshot()));
      assert.ok(isGateState(saved));
      const second = gateRig(dir(), 's1', saved);
      assert.equal(second.gate.warning, true);
      const p = second.gate.beforeRequest(OPENAI, 1200);
      assert.equal(p.newWarning, false, 'the reloaded window does not warn twice');
      second.gate.afterRequest({ completed: true, estSent: 1200, promptTokens: 1400 });
      assert.equal(second.gate.beforeRequest(OPENAI, 1250).projected, 1450);
    });

    it('rejects a malformed saved state', () => {
      assert.equal(isGateState({ v: 1, anchor: { real: 'x' } }), false);
      assert.equal(isGateState(null), false);
    });
  });
});
