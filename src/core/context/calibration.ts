import type { Identity } from './driftEvents';
import { FEATURE_COUNT, HEURISTIC_RATES } from './heuristic';

/**
 * Calibration for models whose tokenizer Candor does not have (Llama, Qwen,
 * DeepSeek, Gemma, Mistral…): tokens per character of each script class,
 * learnt from the provider's own counts (docs/architecture.md, "Context
 * gate").
 *
 * Between two consecutive anchors the provider counted `real₂ − real₁`
 * tokens for the characters added in between: one equation per anchor pair.
 * The fit is a ridge regression on those pairs, pulled toward the
 * heuristic's own rates so that a few pairs cannot swing it far, with a
 * forgetting factor (old pairs fade, so memory is bounded: a 9×9 matrix) and
 * Huber weights (a pair far off the fit, such as a server that truncated,
 * counts less). An offset learnt from the whole counts covers what the
 * provider adds on its own (template, hidden tool definitions), for
 * estimates without an anchor.
 *
 * Calibration never replaces the anchor: it scales what changed since it.
 */

/** Pairs needed before the gauge calls the heuristic calibrated. */
export const MIN_PAIRS = 3;
/** Pull toward the prior, in the units of Σ(characters²). */
const RIDGE = 1_000;
/** A restored fit counts as this many times the prior's weight. */
const RESTORED = 5;
/** Weight kept by the older pairs at each new one. */
const FORGET = 0.98;
/** Residuals past this many scales are down-weighted. */
const HUBER = 3;
/** How fast the offset follows a new whole-payload residual. */
const OFFSET_RATE = 0.3;

/** What the session file keeps: a few numbers, not the pairs. */
export interface CalibrationState {
  readonly provider: string;
  readonly model: string;
  /** Anchor pairs observed. */
  readonly pairs: number;
  readonly rates: readonly number[];
  readonly offset: number;
  /** Typical |residual| of a pair, and of the offset. */
  readonly scale: number;
  readonly offsetScale: number;
}

export class Calibration {
  private readonly gram: number[][];
  private readonly moment: number[];
  private rates: number[];
  private pairs: number;
  private offset: number;
  private scale: number;
  private offsetScale: number;
  private offsets = 0;

  private constructor(
    readonly identity: Identity,
    private readonly prior: readonly number[],
    private readonly ridge: number,
    state?: CalibrationState,
  ) {
    this.gram = Array.from({ length: FEATURE_COUNT }, () => new Array<number>(FEATURE_COUNT).fill(0));
    this.moment = new Array<number>(FEATURE_COUNT).fill(0);
    this.rates = [...prior];
    this.pairs = state?.pairs ?? 0;
    this.offset = state?.offset ?? 0;
    this.scale = state?.scale ?? 0;
    this.offsetScale = state?.offsetScale ?? 0;
    if (state) this.offsets = 1;
  }

  static fresh(identity: Identity): Calibration {
    return new Calibration(identity, HEURISTIC_RATES, RIDGE);
  }

  /** From the session file: the saved rates become the prior the next pairs refine. */
  static restore(state: CalibrationState): Calibration {
    return new Calibration({ provider: state.provider, model: state.model }, state.rates, RIDGE * RESTORED, state);
  }

  get calibrated(): boolean {
    return this.pairs >= MIN_PAIRS;
  }

  get observed(): number {
    return this.pairs;
  }

  /** Tokens of a change, from its characters per class. */
  delta(features: readonly number[]): number {
    return dot(this.rates, features);
  }

  /** Tokens of a whole payload: the rates plus what the provider adds on its own. */
  total(features: readonly number[]): number {
    return Math.max(0, Math.round(dot(this.rates, features) + this.offset));
  }

  /** Two consecutive anchors: `tokens` counted by the provider for the characters `features` added between them. */
  observePair(features: readonly number[], tokens: number): void {
    if (!features.some((value) => value !== 0)) return;
    const residual = tokens - dot(this.rates, features);
    const size = Math.abs(residual);
    const weight = this.pairs >= 5 && this.scale > 0 && size > HUBER * this.scale ? (HUBER * this.scale) / size : 1;
    for (let i = 0; i < FEATURE_COUNT; i++) {
      const xi = features[i] ?? 0;
      this.moment[i] = (this.moment[i] ?? 0) * FORGET + weight * xi * tokens;
      const row = this.gram[i] as number[];
      for (let j = 0; j < FEATURE_COUNT; j++) row[j] = (row[j] ?? 0) * FORGET + weight * xi * (features[j] ?? 0);
    }
    this.scale = this.pairs === 0 ? size : 0.9 * this.scale + 0.1 * Math.min(size, 5 * this.scale || size);
    this.pairs++;
    this.rates = this.solve();
  }

  /** A whole payload the provider counted: what the rates miss is the provider's own overhead. */
  observeTotal(features: readonly number[], tokens: number): void {
    const residual = tokens - dot(this.rates, features);
    if (this.offsets === 0) this.offset = residual;
    else {
      const limit = Math.max(50, HUBER * this.offsetScale);
      const step = Math.max(-limit, Math.min(limit, residual - this.offset));
      this.offsetScale = 0.9 * this.offsetScale + 0.1 * Math.abs(residual - this.offset);
      this.offset += OFFSET_RATE * step;
    }
    this.offsets++;
  }

  snapshot(): CalibrationState {
    return {
      provider: this.identity.provider,
      model: this.identity.model,
      pairs: this.pairs,
      rates: this.rates.map((rate) => Number(rate.toPrecision(6))),
      offset: Math.round(this.offset),
      scale: Math.round(this.scale * 10) / 10,
      offsetScale: Math.round(this.offsetScale * 10) / 10,
    };
  }

  /** (G + λI) w = m + λ·prior: Gaussian elimination with partial pivoting on a 9×9 system. */
  private solve(): number[] {
    const n = FEATURE_COUNT;
    const rows = this.gram.map((row, i) => {
      const copy = [...row];
      copy[i] = (copy[i] ?? 0) + this.ridge;
      copy.push((this.moment[i] ?? 0) + this.ridge * (this.prior[i] ?? 0));
      return copy;
    });
    for (let col = 0; col < n; col++) {
      let pivot = col;
      for (let r = col + 1; r < n; r++) if (Math.abs(rows[r]?.[col] ?? 0) > Math.abs(rows[pivot]?.[col] ?? 0)) pivot = r;
      [rows[col], rows[pivot]] = [rows[pivot] as number[], rows[col] as number[]];
      const lead = rows[col] as number[];
      const d = lead[col] ?? 0;
      if (Math.abs(d) < 1e-12) return [...this.rates];
      for (let r = 0; r < n; r++) {
        if (r === col) continue;
        const row = rows[r] as number[];
        const f = (row[col] ?? 0) / d;
        if (f === 0) continue;
        for (let c = col; c <= n; c++) row[c] = (row[c] ?? 0) - f * (lead[c] ?? 0);
      }
    }
    const solved = rows.map((row, i) => (row[n] ?? 0) / (row[i] ?? 1));
    return solved.every(Number.isFinite) ? solved : [...this.rates];
  }
}

export function isCalibrationState(value: unknown): value is CalibrationState {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.provider === 'string' &&
    typeof v.model === 'string' &&
    isFiniteNumber(v.pairs) &&
    Array.isArray(v.rates) &&
    v.rates.length === FEATURE_COUNT &&
    v.rates.every(isFiniteNumber) &&
    isFiniteNumber(v.offset) &&
    isFiniteNumber(v.scale) &&
    isFiniteNumber(v.offsetScale)
  );
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function dot(a: readonly number[], b: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}
