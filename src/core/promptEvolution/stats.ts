import { mulberry32 } from '../random';

/**
 * Exact paired statistics for the gate. Every function is deterministic: the
 * same scores (and seed) always give the same p-value.
 */

/**
 * Exact two-sided McNemar test on the discordant pairs: b tasks where only the
 * candidate passed, c where only the baseline passed.
 * p = min(1, 2·Σ_{i≤min(b,c)} C(b+c, i) / 2^(b+c)), summed in BigInt so that
 * it stays exact for any n (no factorial overflow, no log-space rounding).
 */
export function mcnemarExact(b: number, c: number): number {
  if (!isCount(b) || !isCount(c)) throw new RangeError(`McNemar needs two counts, got b=${b}, c=${c}`);
  const n = b + c;
  if (n === 0) return 1;
  const k = Math.min(b, c);
  let term = 1n;
  let tail = 1n;
  for (let i = 0; i < k; i++) {
    term = (term * BigInt(n - i)) / BigInt(i + 1);
    tail += term;
  }
  return Math.min(1, divideByPowerOfTwo(2n * tail, n));
}

/** numerator / 2^exponent as a double, without overflowing on the way. */
function divideByPowerOfTwo(numerator: bigint, exponent: number): number {
  const bits = numerator.toString(2).length;
  const shift = Math.max(0, bits - 64);
  // The top (at most) 64 bits as a fraction in [0.5, 1), then the scale.
  const fraction = Number(numerator >> BigInt(shift)) / 2 ** (bits - shift);
  return fraction * 2 ** (bits - exponent);
}

function isCount(x: number): boolean {
  return Number.isInteger(x) && x >= 0;
}

export interface SignFlipOptions {
  /** Random flips when there are more than `exactUpTo` nonzero differences. Default 99,999. */
  readonly flips?: number;
  /** Seed of the mulberry32 generator used for the random flips. */
  readonly seed?: number;
  /** Largest count of nonzero differences enumerated exactly. Default 20. */
  readonly exactUpTo?: number;
}

export interface SignFlipResult {
  readonly p: number;
  readonly method: 'exact' | 'monte-carlo';
  /** Nonzero per-task differences the test ran on. */
  readonly nonzero: number;
  /** Sign assignments counted: 2^nonzero (exact) or the random flips. */
  readonly permutations: number;
}

export const DEFAULT_FLIPS = 99_999;
export const DEFAULT_SEED = 0x5eed_c0de;
const EXACT_UP_TO = 20;

/**
 * Two-sided sign-flip permutation test of "mean difference = 0" on the
 * nonzero per-task differences (zeros carry no sign information). The
 * statistic is |Σ d| (the same ordering as |mean|). Exact over all 2^n sign
 * assignments when n ≤ 20, else `flips` random assignments with
 * p = (k+1)/(R+1). Ties within float noise count as extreme (conservative).
 */
export function signFlipTest(differences: readonly number[], options: SignFlipOptions = {}): SignFlipResult {
  if (differences.some((d) => !Number.isFinite(d))) throw new RangeError('sign-flip test needs finite differences');
  const nonzero = differences.filter((d) => d !== 0);
  const n = nonzero.length;
  if (n === 0) return { p: 1, method: 'exact', nonzero: 0, permutations: 1 };
  const total = nonzero.reduce((s, d) => s + d, 0);
  const scale = nonzero.reduce((s, d) => s + Math.abs(d), 0);
  const bound = Math.abs(total) - 1e-9 * Math.max(1, scale);
  if (n <= (options.exactUpTo ?? EXACT_UP_TO)) {
    const count = bound <= 0 ? 2 ** n : countExtremeExact(nonzero, total, bound);
    return { p: count / 2 ** n, method: 'exact', nonzero: n, permutations: 2 ** n };
  }
  const flips = options.flips ?? DEFAULT_FLIPS;
  if (!Number.isInteger(flips) || flips < 1) throw new RangeError(`flips must be a positive integer, got ${flips}`);
  const next = mulberry32(options.seed ?? DEFAULT_SEED);
  let extreme = 0;
  for (let r = 0; r < flips; r++) {
    let sum = 0;
    let bits = 0;
    for (let i = 0; i < n; i++) {
      if (i % 32 === 0) bits = next();
      const d = nonzero[i] as number;
      sum += (bits >>> (i % 32)) & 1 ? d : -d;
    }
    if (Math.abs(sum) >= bound) extreme++;
  }
  return { p: (extreme + 1) / (flips + 1), method: 'monte-carlo', nonzero: n, permutations: flips };
}

/**
 * Counts the sign assignments whose |Σ s·d| reaches `bound`. With P the set of
 * positive signs and S its sum, Σ s·d = 2S − total; the subset sums are split
 * in two halves (meet in the middle: 2·2^(n/2) sums and binary searches
 * instead of 2^n·n additions).
 */
function countExtremeExact(values: readonly number[], total: number, bound: number): number {
  const half = Math.floor(values.length / 2);
  const left = subsetSums(values.slice(0, half));
  const right = subsetSums(values.slice(half)).sort((x, y) => x - y);
  const high = (total + bound) / 2; // 2S − total ≥ bound
  const low = (total - bound) / 2; //  2S − total ≤ −bound
  let count = 0;
  for (const l of left) {
    count += right.length - lowerBound(right, high - l);
    count += upperBound(right, low - l);
  }
  return count;
}

function subsetSums(values: readonly number[]): Float64Array {
  const sums = new Float64Array(2 ** values.length);
  for (let mask = 1; mask < sums.length; mask++) {
    const bit = 31 - Math.clz32(mask & -mask);
    sums[mask] = (sums[mask & (mask - 1)] as number) + (values[bit] as number);
  }
  return sums;
}

/** First index with sorted[i] ≥ x. */
function lowerBound(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** First index with sorted[i] > x (= how many are ≤ x). */
function upperBound(sorted: Float64Array, x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((sorted[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface HolmEntry {
  readonly p: number;
  /** 1 = smallest p; ties keep input order. */
  readonly rank: number;
  /** alpha / (m − rank + 1). */
  readonly adjustedAlpha: number;
  /** p < adjustedAlpha and every smaller-ranked hypothesis passed too. */
  readonly passed: boolean;
}

/**
 * Holm's step-down correction. `extraHypotheses` counts hypotheses tested
 * before (a near-miss re-test is another hypothesis): they join m and rank
 * last, as if their p were 1, so they only make every threshold stricter.
 * Entries come back in input order.
 */
export function holm(pValues: readonly number[], alpha: number, extraHypotheses = 0): HolmEntry[] {
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`alpha must be in (0, 1), got ${alpha}`);
  if (!isCount(extraHypotheses)) throw new RangeError('extraHypotheses must be a count');
  const m = pValues.length + extraHypotheses;
  const safe = pValues.map((p) => (Number.isFinite(p) ? p : 1));
  const order = safe.map((p, index) => ({ p, index })).sort((x, y) => x.p - y.p || x.index - y.index);
  const entries: HolmEntry[] = new Array<HolmEntry>(pValues.length);
  let stopped = false;
  order.forEach(({ p, index }, i) => {
    const rank = i + 1;
    const adjustedAlpha = alpha / (m - rank + 1);
    const passed = !stopped && p < adjustedAlpha;
    if (!passed) stopped = true;
    entries[index] = { p, rank, adjustedAlpha, passed };
  });
  return entries;
}
