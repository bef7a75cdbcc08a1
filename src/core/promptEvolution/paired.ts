import { mcnemarExact, signFlipTest } from './stats';

/** One task scored under both prompts, each score on the 0..1 scale. */
export interface PairedScore {
  readonly taskId: string;
  readonly baseline: number;
  readonly candidate: number;
}

export type PairedTestName = 'mcnemar' | 'sign-flip';

export interface PairedSummary {
  /** Paired tasks counted (fresh, distinct task ids). */
  readonly n: number;
  /** Tasks where the candidate scored higher. */
  readonly b: number;
  /** Tasks where the baseline scored higher. */
  readonly c: number;
  /** Mean of candidate − baseline over the n tasks, 0..1 scale. */
  readonly effect: number;
  /** Every score is exactly 0 or 1. */
  readonly binary: boolean;
  readonly test: PairedTestName;
  /** Two-sided p of "no difference". */
  readonly p: number;
  /** Pairs left out: on a task the candidate was already scored on, or a repeated task id. */
  readonly excluded: number;
}

export interface PairedOptions {
  /** Tasks this candidate was scored on before: a re-test never reuses them. */
  readonly alreadyScored?: ReadonlySet<string>;
  readonly flips?: number;
  readonly seed?: number;
}

/**
 * Summarizes paired scores: binary scores go to exact McNemar on the
 * discordant pairs, anything else to the sign-flip permutation test.
 */
export function summarizePairs(pairs: readonly PairedScore[], options: PairedOptions = {}): PairedSummary {
  const seen = new Set<string>();
  const fresh: PairedScore[] = [];
  for (const pair of pairs) {
    if (!isScore(pair.baseline) || !isScore(pair.candidate)) throw new RangeError(`task ${pair.taskId}: scores must be in 0..1`);
    if (seen.has(pair.taskId) || options.alreadyScored?.has(pair.taskId)) continue;
    seen.add(pair.taskId);
    fresh.push(pair);
  }
  const differences = fresh.map((pair) => pair.candidate - pair.baseline);
  const b = differences.filter((d) => d > 0).length;
  const c = differences.filter((d) => d < 0).length;
  const binary = fresh.every((pair) => isBinary(pair.baseline) && isBinary(pair.candidate));
  const n = fresh.length;
  // Binary: (b − c)/n is one correctly rounded division, so 2/40 equals 0.05 exactly.
  const effect = n === 0 ? 0 : binary ? (b - c) / n : exactSum(differences) / n;
  const p = binary ? mcnemarExact(b, c) : signFlipTest(differences, { flips: options.flips, seed: options.seed }).p;
  return { n, b, c, effect, binary, test: binary ? 'mcnemar' : 'sign-flip', p, excluded: pairs.length - n };
}

function isScore(x: number): boolean {
  return Number.isFinite(x) && x >= 0 && x <= 1;
}

function isBinary(x: number): boolean {
  return x === 0 || x === 1;
}

/** Neumaier's compensated sum: the mean of many fractions without drift from rounding. */
function exactSum(values: readonly number[]): number {
  let sum = 0;
  let compensation = 0;
  for (const v of values) {
    const t = sum + v;
    compensation += Math.abs(sum) >= Math.abs(v) ? sum - t + v : v - t + sum;
    sum = t;
  }
  return sum + compensation;
}
