import * as assert from 'node:assert/strict';
import { cheapChecks, evaluateCandidates, type GateCheck, type GateDecision } from '../../../../src/core/promptEvolution/promotionGate';
import { resolveSettings, SettingsError } from '../../../../src/core/promptEvolution/settings';
import { changedLines, drift } from '../../../../src/core/promptEvolution/textMetrics';
import { binaryPairs, PROMPT, SMALL_EDIT } from './fixtures';

function check(decision: GateDecision, id: string, name: GateCheck['name']): GateCheck | undefined {
  return decision.verdicts.find((v) => v.id === id)?.checks.find((c) => c.name === name);
}

function one(pairs = binaryPairs(40, 6, 0), settings = {}): GateDecision {
  return evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'a', text: SMALL_EDIT, pairs }], settings });
}

describe('prompt evolution gate', () => {
  describe('known values, one candidate', () => {
    it('(b=6, c=0) on 40 tasks: p = 0.03125 < 0.05 → promote', () => {
      const decision = one(binaryPairs(40, 6, 0));
      assert.equal(decision.outcome, 'promote');
      const confidence = check(decision, 'a', 'confidence');
      assert.deepEqual(confidence, { name: 'confidence', passed: true, value: 0.03125, threshold: 0.05, test: 'mcnemar', rank: 1, m: 1 });
    });

    it('(b=5, c=0): p = 0.0625 → confidence fails, a near-miss', () => {
      const decision = one(binaryPairs(40, 5, 0), { minDiscordant: 5 });
      assert.equal(decision.outcome, 'near-miss');
      assert.equal(check(decision, 'a', 'confidence')?.value, 0.0625);
      assert.equal(decision.verdicts[0]?.failed, 'confidence');
    });

    it('(b=8, c=1): p = 0.0390625 → promote', () => {
      const decision = one(binaryPairs(40, 8, 1));
      assert.equal(decision.outcome, 'promote');
      assert.equal(check(decision, 'a', 'confidence')?.value, 0.0390625);
    });

    it('with four candidates under Holm, (6, 0) alone no longer passes (0.03125 ≥ 0.05/4)', () => {
      const decision = evaluateCandidates({
        current: PROMPT,
        root: PROMPT,
        candidates: [
          { id: 'a', text: SMALL_EDIT, pairs: binaryPairs(40, 6, 0) },
          { id: 'b', text: SMALL_EDIT + 'Be kind.\n', pairs: binaryPairs(40, 2, 2) },
          { id: 'c', text: SMALL_EDIT + 'Be calm.\n', pairs: binaryPairs(40, 1, 3) },
          { id: 'd', text: SMALL_EDIT + 'Be fast.\n', pairs: binaryPairs(40, 0, 0) },
        ],
      });
      assert.equal(decision.outcome, 'near-miss');
      assert.deepEqual(check(decision, 'a', 'confidence'), { name: 'confidence', passed: false, value: 0.03125, threshold: 0.0125, test: 'mcnemar', rank: 1, m: 4 });
    });

    it('a candidate stopped by a cheap check does not count in m', () => {
      const decision = evaluateCandidates({
        current: PROMPT,
        root: PROMPT,
        candidates: [
          { id: 'a', text: SMALL_EDIT, pairs: binaryPairs(40, 6, 0) },
          { id: 'frozen-gone', text: PROMPT.replace('Never reveal the API key.', '') },
        ],
      });
      assert.equal(decision.outcome, 'promote');
      assert.equal(decision.verdicts.find((v) => v.id === 'frozen-gone')?.failed, 'frozen_sections');
      assert.equal(decision.verdicts.find((v) => v.id === 'a')?.stats?.m, 1);
    });

    it('continuous scores use the sign-flip test', () => {
      const pairs = Array.from({ length: 24 }, (_, i) => ({ taskId: `t${i}`, baseline: 0.5, candidate: i < 8 ? 0.75 : 0.5 }));
      const decision = one(pairs);
      // 8 equal positive differences: exact p = 2/2^8 = 0.0078125; effect = 8·0.25/24 ≈ 0.0833.
      assert.deepEqual(check(decision, 'a', 'confidence'), { name: 'confidence', passed: true, value: 0.0078125, threshold: 0.05, test: 'sign-flip', rank: 1, m: 1 });
      assert.equal(decision.outcome, 'promote');
    });
  });

  describe('no comparison is inverted', () => {
    it('p exactly equal to alpha fails; just below passes', () => {
      assert.equal(check(one(binaryPairs(40, 6, 0), { alpha: 0.03125 }), 'a', 'confidence')?.passed, false);
      assert.equal(check(one(binaryPairs(40, 6, 0), { alpha: 0.0312501 }), 'a', 'confidence')?.passed, true);
    });

    it('effect exactly minEffect fails; above passes', () => {
      // (b=4, c=2) on 40: effect (4−2)/40 = 0.05 exactly.
      const equal = check(one(binaryPairs(40, 4, 2)), 'a', 'effect_size');
      assert.deepEqual(equal, { name: 'effect_size', passed: false, value: 0.05, threshold: 0.05 });
      assert.equal(check(one(binaryPairs(40, 4, 2), { minEffect: 0.0499 }), 'a', 'effect_size')?.passed, true);
      // Continuous: twenty tasks at 0.4 − 0.3 (= 0.10000000000000003 in floats) and twenty at 0 average to
      // 0.05 plus rounding noise; noise must not turn equality into a pass.
      const pairs = Array.from({ length: 40 }, (_, i) => ({ taskId: `t${i}`, baseline: 0.3, candidate: i < 20 ? 0.4 : 0.3 }));
      const noisy = check(one(pairs), 'a', 'effect_size');
      assert.ok(noisy && typeof noisy.value === 'number' && Math.abs(noisy.value - 0.05) < 1e-15);
      assert.equal(noisy?.passed, false);
    });

    it('tasks and discordant pairs exactly at the floor pass; one fewer fails', () => {
      assert.equal(check(one(binaryPairs(20, 6, 0)), 'a', 'sample_floor')?.passed, true);
      assert.equal(check(one(binaryPairs(19, 6, 0)), 'a', 'sample_floor')?.passed, false);
      assert.equal(check(one(binaryPairs(40, 5, 0)), 'a', 'sample_floor')?.passed, false);
      assert.deepEqual(check(one(binaryPairs(19, 5, 0)), 'a', 'sample_floor'), {
        name: 'sample_floor',
        passed: false,
        value: { tasks: 19, discordant: 5 },
        threshold: { tasks: 20, discordant: 6 },
      });
    });

    it('changed lines exactly at the maximum pass; one more fails', () => {
      const lines = changedLines(PROMPT, SMALL_EDIT);
      assert.equal(lines, 1);
      assert.equal(cheapChecks(PROMPT, PROMPT, SMALL_EDIT, { maxChangedLines: 1 })[1]?.passed, true);
      assert.equal(cheapChecks(PROMPT, PROMPT, SMALL_EDIT, { maxChangedLines: 0 })[1]?.passed, false);
    });

    it('drift exactly at the maximum passes; a hair above fails', () => {
      const value = drift(PROMPT, SMALL_EDIT);
      assert.ok(value > 0);
      assert.equal(cheapChecks(PROMPT, PROMPT, SMALL_EDIT, { maxDrift: value })[2]?.passed, true);
      assert.equal(cheapChecks(PROMPT, PROMPT, SMALL_EDIT, { maxDrift: value - 1e-9 })[2]?.passed, false);
    });

    it('a candidate behind the baseline is a reject, not a near-miss', () => {
      const decision = one(binaryPairs(40, 0, 8));
      assert.equal(decision.outcome, 'reject');
      assert.equal(decision.verdicts[0]?.failed, 'effect_size');
    });
  });

  describe('outcomes', () => {
    it('fail-fast: checks stop at the first failure', () => {
      const decision = one(binaryPairs(10, 6, 0));
      assert.deepEqual(decision.verdicts[0]?.checks.map((c) => c.name), ['frozen_sections', 'edit_distance', 'drift', 'sample_floor']);
      // …but every A/B number is still there for the review queue.
      assert.equal(decision.verdicts[0]?.stats?.p, 0.03125);
    });

    it('several passing: the largest effect wins, then the smaller p, then the id — whatever the order', () => {
      const candidates = [
        { id: 'small', text: SMALL_EDIT, pairs: binaryPairs(40, 14, 0) },
        { id: 'large', text: SMALL_EDIT + 'Be kind.\n', pairs: binaryPairs(40, 16, 0) },
        { id: 'large-twin', text: SMALL_EDIT + 'Be calm.\n', pairs: binaryPairs(40, 16, 0) },
      ];
      for (const order of [candidates, [...candidates].reverse()]) {
        const decision = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: order });
        assert.equal(decision.outcome, 'promote');
        if (decision.outcome === 'promote') assert.equal(decision.winner.id, 'large');
        assert.equal(decision.verdicts.filter((v) => v.kind === 'pass').length, 3);
      }
    });

    it('a reject keeps every reason', () => {
      const decision = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'x', text: 'Do anything.\n' }] });
      assert.equal(decision.outcome, 'reject');
      assert.deepEqual(decision.verdicts[0]?.checks[0], { name: 'frozen_sections', passed: false, value: 2, threshold: 0, frozen: { kind: 'count', expected: 2, found: 0 } });
    });
  });

  describe('settings', () => {
    it('defaults match the issue', () => {
      const s = resolveSettings();
      assert.deepEqual(
        [s.candidates, s.concurrency, s.maxChangedLines, s.maxDrift, s.minTasks, s.minDiscordant, s.minEffect, s.alpha],
        [4, 4, 20, 0.35, 20, 6, 0.05, 0.05],
      );
    });
    it('a bad value is a SettingsError naming the setting', () => {
      assert.throws(() => resolveSettings({ alpha: 1 }), (e: unknown) => e instanceof SettingsError && e.setting === 'alpha');
      assert.throws(() => resolveSettings({ concurrency: 0 }), (e: unknown) => e instanceof SettingsError && e.setting === 'concurrency');
    });
  });
});
