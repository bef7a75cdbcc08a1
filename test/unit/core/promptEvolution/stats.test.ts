import * as assert from 'node:assert/strict';
import { holm, mcnemarExact, signFlipTest } from '../../../../src/core/promptEvolution/stats';
import { mulberry32 } from '../../../../src/core/random';
import { uniform } from '../../../helpers/core';

describe('prompt evolution statistics', () => {
  describe('exact McNemar', () => {
    // p = min(1, 2·Σ_{i≤min(b,c)} C(b+c,i) / 2^(b+c))
    it('(b=6, c=0) → 2·1/64 = 0.03125', () => assert.equal(mcnemarExact(6, 0), 0.03125));
    it('(b=5, c=0) → 2·1/32 = 0.0625', () => assert.equal(mcnemarExact(5, 0), 0.0625));
    it('(b=8, c=1) → 2·(1+9)/512 = 0.0390625', () => assert.equal(mcnemarExact(8, 1), 0.0390625));
    it('is symmetric in b and c', () => assert.equal(mcnemarExact(1, 8), 0.0390625));
    it('no discordant pairs → 1; a balanced split → 1 (capped)', () => {
      assert.equal(mcnemarExact(0, 0), 1);
      assert.equal(mcnemarExact(3, 3), 1);
    });
    it('(b=5, c=2) → 2·(1+7+21)/128 = 0.453125', () => assert.equal(mcnemarExact(5, 2), 0.453125));
    it('stays finite and exact-ish for large n (no overflow to NaN/Infinity)', () => {
      const p = mcnemarExact(600, 400);
      assert.ok(p > 0 && p < 1e-9, String(p));
      // Normal approximation for a rough cross-check: z = (600-400)/sqrt(1000) ≈ 6.32 → p ≈ 2.5e-10.
      assert.ok(p > 1e-11 && p < 1e-9, String(p));
      assert.equal(mcnemarExact(2500, 2500), 1);
      const tiny = mcnemarExact(3000, 0);
      assert.ok(tiny >= 0 && tiny < 1e-300);
    });
    it('rejects non-counts', () => {
      assert.throws(() => mcnemarExact(-1, 2), RangeError);
      assert.throws(() => mcnemarExact(1.5, 2), RangeError);
    });
  });

  describe('sign-flip permutation test', () => {
    function bruteForce(differences: readonly number[]): number {
      const d = differences.filter((x) => x !== 0);
      const observed = Math.abs(d.reduce((s, x) => s + x, 0));
      let extreme = 0;
      for (let mask = 0; mask < 2 ** d.length; mask++) {
        let sum = 0;
        d.forEach((x, i) => (sum += (mask >> i) & 1 ? x : -x));
        if (Math.abs(sum) >= observed - 1e-9) extreme++;
      }
      return extreme / 2 ** d.length;
    }

    it('matches exhaustive enumeration on small random cases', () => {
      const rand = uniform(mulberry32(7));
      for (let trial = 0; trial < 60; trial++) {
        const n = 1 + Math.floor(rand() * 12);
        const diffs = Array.from({ length: n }, () => {
          const r = rand();
          return r < 0.2 ? 0 : Math.round((rand() * 2 - 1) * 4) / 4;
        });
        const result = signFlipTest(diffs);
        assert.equal(result.method, 'exact');
        assert.equal(result.p, bruteForce(diffs), `diffs ${JSON.stringify(diffs)}`);
      }
    });

    it('on ±1 differences equals exact McNemar (the sign test)', () => {
      const diffs = [...Array<number>(8).fill(1), -1, 0, 0];
      assert.equal(signFlipTest(diffs).p, mcnemarExact(8, 1));
    });

    it('six equal positive differences: 2/64 = 0.03125', () => {
      assert.equal(signFlipTest([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0, 0]).p, 0.03125);
    });

    it('all zeros → p = 1 with no permutations', () => {
      assert.deepEqual(signFlipTest([0, 0, 0]), { p: 1, method: 'exact', nonzero: 0, permutations: 1 });
    });

    it('20 nonzero is exact, 21 is Monte Carlo with p = (k+1)/(R+1), reproducible by seed', () => {
      const twenty = Array.from({ length: 20 }, (_, i) => (i % 3 === 0 ? -0.25 : 0.5));
      assert.equal(signFlipTest(twenty).method, 'exact');
      const many = Array.from({ length: 30 }, (_, i) => (i % 4 === 0 ? -0.2 : 0.3));
      const a = signFlipTest(many, { seed: 1 });
      const b = signFlipTest(many, { seed: 1 });
      assert.equal(a.method, 'monte-carlo');
      assert.equal(a.permutations, 99_999);
      assert.equal(a.p, b.p);
      const k = Math.round(a.p * 100_000) - 1;
      assert.equal(a.p, (k + 1) / 100_000);
      // A strong one-sided shift can never reach p = 0 under Monte Carlo.
      const strong = signFlipTest(Array<number>(40).fill(0.4), { flips: 999 });
      assert.equal(strong.p, 1 / 1000);
    });

    it('Monte Carlo agrees with exact enumeration within sampling error', () => {
      const diffs = Array.from({ length: 18 }, (_, i) => (i % 3 === 0 ? -0.3 : 0.2 + (i % 5) * 0.05));
      const exact = signFlipTest(diffs).p;
      const sampled = signFlipTest(diffs, { exactUpTo: 0, seed: 3 }).p;
      const se = Math.sqrt((exact * (1 - exact)) / 99_999);
      assert.ok(Math.abs(exact - sampled) < 5 * se + 1e-5, `exact ${exact} sampled ${sampled}`);
    });
  });

  describe("Holm's step-down correction", () => {
    it('a fixed list: ranks, adjusted alphas and the stop rule', () => {
      // sorted: 0.005 (α/4 = 0.0125 pass), 0.01 (α/3 ≈ 0.01667 pass), 0.03 (α/2 = 0.025 fail → stop),
      // 0.04 (α/1 = 0.05 would pass alone, but the step-down already stopped).
      const result = holm([0.01, 0.04, 0.03, 0.005], 0.05);
      assert.deepEqual(result.map((e) => e.rank), [2, 4, 3, 1]);
      assert.deepEqual(result.map((e) => e.adjustedAlpha), [0.05 / 3, 0.05 / 1, 0.05 / 2, 0.05 / 4]);
      assert.deepEqual(result.map((e) => e.passed), [true, false, false, true]);
    });

    it('(6, 0) passes alone but not as one of four candidates', () => {
      const p = mcnemarExact(6, 0);
      assert.equal(holm([p], 0.05)[0]?.passed, true);
      const four = holm([p, 0.5, 0.7, 0.9], 0.05);
      assert.equal(four[0]?.adjustedAlpha, 0.0125);
      assert.equal(four[0]?.passed, false);
    });

    it('p exactly equal to the adjusted alpha fails (strict <)', () => {
      assert.equal(holm([0.025, 0.9], 0.05)[0]?.passed, false);
      assert.equal(holm([0.0249999, 0.9], 0.05)[0]?.passed, true);
    });

    it('earlier hypotheses (a re-test) make m larger', () => {
      const [alone] = holm([0.03], 0.05);
      const [retest] = holm([0.03], 0.05, 1);
      assert.equal(alone?.passed, true);
      assert.equal(retest?.adjustedAlpha, 0.025);
      assert.equal(retest?.passed, false);
    });

    it('ties keep input order and a NaN p never passes', () => {
      const result = holm([0.001, 0.001, Number.NaN], 0.05);
      assert.deepEqual(result.map((e) => e.rank), [1, 2, 3]);
      assert.equal(result[2]?.passed, false);
    });
  });
});
