import * as assert from 'node:assert/strict';
import { evaluateCandidates, type GateCandidate } from '../../../../src/core/promptEvolution/promotionGate';
import type { PairedScore } from '../../../../src/core/promptEvolution/paired';
import type { PromptEvolutionSettings } from '../../../../src/core/promptEvolution/settings';
import { mulberry32 } from '../../../../src/core/random';
import { PROMPT, SMALL_EDIT } from './fixtures';
import { uniform } from '../../../helpers/core';

/**
 * A/A rounds: baseline and candidates draw every task's score from the same
 * per-task distribution, so any promotion is a false one.
 */
interface NullRun {
  readonly rounds: number;
  readonly candidates: number;
  readonly tasks: number;
  /** Score of one prompt on a task whose difficulty is `q` (the same law for both prompts). */
  readonly score: (q: number, rand: () => number) => number;
  readonly settings?: Partial<PromptEvolutionSettings>;
  readonly seed: number;
}

function falsePromotions(run: NullRun): number {
  const rand = uniform(mulberry32(run.seed));
  let promoted = 0;
  for (let round = 0; round < run.rounds; round++) {
    const difficulty = Array.from({ length: run.tasks }, () => 0.15 + 0.7 * rand());
    const baseline = difficulty.map((q) => run.score(q, rand));
    const candidates: GateCandidate[] = Array.from({ length: run.candidates }, (_, k) => ({
      id: `c${k}`,
      text: SMALL_EDIT + `Note ${k}.\n`,
      pairs: difficulty.map((q, i): PairedScore => ({ taskId: `t${i}`, baseline: baseline[i] as number, candidate: run.score(q, rand) })),
    }));
    const decision = evaluateCandidates({ current: PROMPT, root: PROMPT, candidates, settings: run.settings });
    if (decision.outcome === 'promote') promoted++;
  }
  return promoted;
}

const pass = (q: number, rand: () => number): number => (rand() < q ? 1 : 0);
/** A judge-like score on a five-point scale around q. */
const graded = (q: number, rand: () => number): number => Math.min(1, Math.max(0, Math.round((q + (rand() - 0.5) * 0.8) * 4) / 4));
/** Every floor off: only the significance test stands between noise and a promotion. */
const confidenceOnly = { minTasks: 0, minDiscordant: 0, minEffect: 0 };

function report(label: string, promoted: number, rounds: number): number {
  const rate = promoted / rounds;
  console.log(`      null runs, ${label}: ${promoted}/${rounds} false promotions = ${(rate * 100).toFixed(1)}% (alpha 5%)`);
  return rate;
}

describe('prompt evolution null runs (1,000 seeded A/A rounds each; the measured rate is printed)', function () {
  this.timeout(60_000);

  it('binary scores, 40 tasks × 4 candidates, default gate: false-promotion rate ≤ alpha', () => {
    const promoted = falsePromotions({ rounds: 1000, candidates: 4, tasks: 40, score: pass, seed: 11 });
    assert.ok(report('binary 40×4, default gate', promoted, 1000) <= 0.05);
  });

  it('binary scores, 40 tasks × 1 candidate, confidence check only: rate ≤ alpha', () => {
    const promoted = falsePromotions({ rounds: 1000, candidates: 1, tasks: 40, score: pass, seed: 12, settings: confidenceOnly });
    assert.ok(report('binary 40×1, McNemar alone', promoted, 1000) <= 0.05);
  });

  it('binary scores, 40 tasks × 4 candidates, confidence check only (Holm): rate ≤ alpha', () => {
    const promoted = falsePromotions({ rounds: 1000, candidates: 4, tasks: 40, score: pass, seed: 13, settings: confidenceOnly });
    assert.ok(report('binary 40×4, McNemar + Holm alone', promoted, 1000) <= 0.05);
  });

  it('graded scores, 20 tasks × 1 candidate, sign-flip test only: rate ≤ alpha', () => {
    const promoted = falsePromotions({ rounds: 1000, candidates: 1, tasks: 20, score: graded, seed: 14, settings: confidenceOnly });
    assert.ok(report('graded 20×1, sign-flip alone', promoted, 1000) <= 0.05);
  });

  it('graded scores, 20 tasks × 4 candidates, default gate: rate ≤ alpha', () => {
    const promoted = falsePromotions({ rounds: 1000, candidates: 4, tasks: 20, score: graded, seed: 15 });
    assert.ok(report('graded 20×4, default gate', promoted, 1000) <= 0.05);
  });
});
