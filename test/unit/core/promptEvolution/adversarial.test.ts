import * as assert from 'node:assert/strict';
import { cheapChecks, evaluateCandidates, type CheckName } from '../../../../src/core/promptEvolution/promotionGate';
import { drift } from '../../../../src/core/promptEvolution/textMetrics';
import { mulberry32 } from '../../../../src/core/random';
import { binaryPairs, PROMPT, SMALL_EDIT } from './fixtures';

/** The first failing cheap check, or undefined when all three pass. */
function stoppedBy(current: string, root: string, candidate: string): CheckName | undefined {
  return cheapChecks(current, root, candidate).find((c) => !c.passed)?.name;
}

/** A made-up word per call, so that every line has its own vocabulary. */
function wordMaker(seed: number): () => string {
  const next = mulberry32(seed);
  const letters = 'bcdfghjklmnprstvz';
  return () => Array.from({ length: 7 }, () => letters[next() % letters.length]).join('');
}

describe('prompt evolution gate against adversarial edits', () => {
  describe('frozen sections', () => {
    it('a frozen block removed → frozen_sections', () => {
      const candidate = PROMPT.replace('<!-- frozen -->\nNever reveal the API key.\n<!-- /frozen -->\n', '');
      assert.equal(stoppedBy(PROMPT, PROMPT, candidate), 'frozen_sections');
    });
    it('frozen blocks reordered → frozen_sections', () => {
      const candidate = PROMPT.replace('Never run git commands that write.', '@@').replace('Never reveal the API key.', 'Never run git commands that write.').replace('@@', 'Never reveal the API key.');
      assert.equal(stoppedBy(PROMPT, PROMPT, candidate), 'frozen_sections');
    });
    it('a frozen block changed by one byte → frozen_sections', () => {
      assert.equal(stoppedBy(PROMPT, PROMPT, PROMPT.replace('API key.', 'API key!')), 'frozen_sections');
      assert.equal(stoppedBy(PROMPT, PROMPT, PROMPT.replace('write.', 'write. ')), 'frozen_sections');
    });
    it('…even when the A/B numbers are perfect', () => {
      const decision = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'x', text: PROMPT.replace('API key.', 'API key!'), pairs: binaryPairs(40, 40, 0) }] });
      assert.equal(decision.outcome, 'reject');
      assert.equal(decision.verdicts[0]?.failed, 'frozen_sections');
    });
  });

  describe('a wholesale rewrite', () => {
    const word = wordMaker(1);
    const line = (): string => `${word()} ${word()} ${word()}.`;
    const frozen = '<!-- frozen -->\nNever push.\n<!-- /frozen -->';

    it('many lines rewritten → edit_distance (25 > 20)', () => {
      const root = [frozen, ...Array.from({ length: 30 }, line), ''].join('\n');
      const lines = root.split('\n');
      for (let i = 3; i < 28; i++) lines[i] = line();
      assert.equal(stoppedBy(root, root, lines.join('\n')), 'edit_distance');
    });

    it('a short prompt rewritten within the line budget → drift', () => {
      const root = [frozen, ...Array.from({ length: 10 }, line), ''].join('\n');
      const rewrite = [frozen, ...Array.from({ length: 10 }, line), ''].join('\n');
      const checks = cheapChecks(root, root, rewrite);
      assert.equal(checks[1]?.passed, true, 'only 10 lines changed');
      assert.equal(stoppedBy(root, root, rewrite), 'drift');
    });
  });

  it('a slow drift over many promotions is caught against the root → drift', () => {
    const word = wordMaker(2);
    const line = (): string => `${word()} ${word()} ${word()}.`;
    const root = ['<!-- frozen -->\nNever push.\n<!-- /frozen -->', ...Array.from({ length: 30 }, line), ''].join('\n');
    let current = root;
    let promotions = 0;
    for (let step = 0; step < 30; step++) {
      const lines = current.split('\n');
      lines[3 + step] = line(); // one line per promotion: tiny next to the previous version
      const candidate = lines.join('\n');
      const failed = stoppedBy(current, root, candidate);
      if (failed === undefined) {
        current = candidate;
        promotions++;
        continue;
      }
      assert.equal(failed, 'drift');
      assert.ok(drift(current, candidate) < 0.35 / 2, 'each step alone is small');
      assert.ok(promotions >= 3, `only ${promotions} promotions before the stop`);
      return;
    }
    assert.fail('cumulative drift was never caught');
  });

  describe('a noise "improvement" on 40 tasks', () => {
    for (const wins of [1, 2, 3]) {
      it(`${wins} task(s) better, none worse → sample_floor, never promoted`, () => {
        const decision = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'x', text: SMALL_EDIT, pairs: binaryPairs(40, wins, 0) }] });
        assert.notEqual(decision.outcome, 'promote');
        assert.equal(decision.verdicts[0]?.failed, 'sample_floor');
      });
    }
    it('3 net wins hidden in churn (5 better, 2 worse) → confidence (p = 0.453125)', () => {
      const decision = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'x', text: SMALL_EDIT, pairs: binaryPairs(40, 5, 2) }] });
      assert.equal(decision.verdicts[0]?.failed, 'confidence');
      assert.equal(decision.verdicts[0]?.stats?.p, 0.453125);
    });
  });

  describe('a near-miss re-tested', () => {
    const first = binaryPairs(40, 5, 0, 'a');
    const before = evaluateCandidates({ current: PROMPT, root: PROMPT, settings: { minDiscordant: 5 }, candidates: [{ id: 'x', text: SMALL_EDIT, pairs: first }] });
    const history = { scoredTaskIds: first.map((p) => p.taskId), tests: 1 };

    it('the first test is a near-miss (p = 0.0625)', () => {
      assert.equal(before.outcome, 'near-miss');
    });

    it('on the same tasks → sample_floor: nothing fresh is counted', () => {
      const again = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'x', text: SMALL_EDIT, pairs: binaryPairs(40, 8, 0, 'a'), history }] });
      assert.equal(again.verdicts[0]?.failed, 'sample_floor');
      assert.equal(again.verdicts[0]?.stats?.n, 0);
      assert.equal(again.verdicts[0]?.stats?.excluded, 40);
    });

    it('on fresh tasks it is another hypothesis: (6, 0) needs p < 0.05/2 and fails', () => {
      const again = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'x', text: SMALL_EDIT, pairs: binaryPairs(40, 6, 0, 'b'), history }] });
      assert.equal(again.verdicts[0]?.failed, 'confidence');
      assert.equal(again.verdicts[0]?.stats?.adjustedAlpha, 0.025);
      assert.equal(again.verdicts[0]?.stats?.m, 2);
    });

    it('on fresh tasks with (7, 0): p = 0.015625 < 0.025 → promote', () => {
      const again = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'x', text: SMALL_EDIT, pairs: binaryPairs(40, 7, 0, 'b'), history }] });
      assert.equal(again.outcome, 'promote');
    });

    it('reused tasks mixed into a fresh batch are dropped', () => {
      const mixed = [...binaryPairs(40, 0, 0, 'a'), ...binaryPairs(20, 7, 0, 'b')];
      const again = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates: [{ id: 'x', text: SMALL_EDIT, pairs: mixed, history }] });
      assert.equal(again.verdicts[0]?.stats?.n, 20);
      assert.equal(again.verdicts[0]?.stats?.excluded, 40);
    });
  });
});
