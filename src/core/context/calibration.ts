import { changeBand, emptySpread, observeSpread, totalBand, type Spread } from './band';
import type { Identity } from '../modelIdentity';
import { solveAugmented } from './linearSolve';
import { CLASS_OFFSET, CONTENT_CLASSES, FEATURE_COUNT, MESSAGES, PRIOR_RATES, SCRIPT_FEATURES, UNMEASURED, VOCABULARY_FEATURES } from './heuristic';

/**
 * Calibration for models whose tokenizer Candor does not have (Gemma,
 * Mistral, Llama 2…, and any model whose server does not say its family;
 * Qwen3, Llama 3 and DeepSeek V3 are counted with their own tokenizers,
 * tokenizer/familyTokenizer.ts), learnt from the provider's own counts
 * (docs/architecture.md, "Context gate").
 *
 * It starts from a prior fitted offline to real tokenizers (heuristic.ts,
 * bench/fitRates.ts), so the first estimate is already a tokenizer's, not
 * 4 characters per token. Between two consecutive anchors the provider
 * counted `real₂ − real₁` tokens for what was added in between: one equation
 * per anchor pair. The fit is a Bayesian ridge regression on those pairs,
 * each weighed by its relative error, around the prior:
 *
 * - scales move fast: one for everything that is not CJK, one for each CJK
 *   script (tokenizers differ most there, and not in the same direction),
 *   so a few pairs of code teach how this tokenizer counts a listing it has
 *   not seen yet;
 * - a correction per content class (code, JSON, prose, shell listing) moves
 *   slower, once that class has been seen;
 * - the rates of the vocabulary tiers (ideographs and syllables that one
 *   tokenizer has whole and another spells in bytes) move as soon as they
 *   are seen;
 * - the rates of the other features and the tokens per message (the chat
 *   template) move slowest.
 *
 * Old pairs fade (a forgetting factor, so memory is bounded: one small
 * matrix), and a pair far off the fit (a server that truncated) counts less
 * (Huber weights). An offset learnt from the whole counts covers what the
 * provider adds on its own (template, hidden tool definitions), for
 * estimates without an anchor. Calibration never replaces the anchor: it
 * scales what changed since it.
 */

/** Pairs needed before the gauge calls the heuristic calibrated. */
export const MIN_PAIRS = 3;
/** Changes when the features or what the parameters mean change: a state of another layout starts over. */
const LAYOUT = 2;
/** Parameters: a rate per feature, then a scale per CJK script (Han, kana, hangul) and the non-CJK scale (corrections around 1). */
const SCRIPT_SCALE = FEATURE_COUNT;
const TEXT_SCALE = FEATURE_COUNT + SCRIPT_FEATURES.length;
const PARAMS = TEXT_SCALE + 1;
/** Typical relative error of one pair: its weight is 1 / ((this × its size)² + SMALL × its size). */
const NOISE = 0.04;
/** A pair smaller than this many tokens weighs as if it were this large. */
const MIN_SIZE = 40;
/** Variance per token of a pair, on top of the relative error: a short message is relatively noisier. */
const SMALL = 4;
/** Prior standard deviations. */
const SD_TEXT_SCALE = 0.1;
const SD_SCRIPT_SCALE = 0.15;
const SD_CLASS = 0.04;
const SD_MESSAGE = 3;
/** Of a feature's rate, relative to it. */
const SD_RATE = 0.05;
/** And in tokens per unit, so a rate the prior put at 0 (spaces, for one) can still be learnt for a tokenizer that charges for it. */
const SD_RATE_FLOOR = 0.01;
/** Of the rates of the vocabulary tiers, in tokens: what tokenizers disagree on most. */
const SD_VOCABULARY = 0.5;
/** A restored fit counts as this many times the prior's weight. */
const RESTORED = 5;
/** Weight kept by the older pairs at each new one. */
const FORGET = 0.99;
/** Relative residuals past this many typical ones are down-weighted. */
const HUBER = 3;
/** How fast the offset follows a new whole-payload residual. */
const OFFSET_RATE = 0.3;

/** What the session file keeps: a few numbers, not the pairs. */
export interface CalibrationState {
  readonly provider: string;
  readonly model: string;
  /** Which features and parameters `rates` holds (absent: an earlier layout). */
  readonly layout?: number;
  /** Anchor pairs observed. */
  readonly pairs: number;
  readonly rates: readonly number[];
  readonly offset: number;
  /** Typical relative |residual| of a pair, and typical |residual| of the offset. */
  readonly scale: number;
  readonly offsetScale: number;
  /** The residuals per content class the band is built from (band.ts); absent in states written before bands. */
  readonly spread?: Spread;
}

/** The prior: the fitted rates, no correction of any scale. */
const PRIOR: readonly number[] = Array.from({ length: PARAMS }, (_, i) => (i < FEATURE_COUNT ? (PRIOR_RATES[i] ?? 0) : 0));

/** 1 / sd² per parameter. */
const PRECISION: readonly number[] = Array.from({ length: PARAMS }, (_, i) => {
  let sd: number;
  if (i === TEXT_SCALE) sd = SD_TEXT_SCALE;
  else if (i >= SCRIPT_SCALE) sd = SD_SCRIPT_SCALE;
  else if (i >= CLASS_OFFSET) sd = SD_CLASS;
  else if (i === MESSAGES) sd = SD_MESSAGE;
  else if (i === UNMEASURED) sd = 0.01;
  else if (VOCABULARY_FEATURES.includes(i)) sd = SD_VOCABULARY;
  else sd = SD_RATE * Math.abs(PRIOR_RATES[i] ?? 0) + SD_RATE_FLOOR;
  return 1 / (sd * sd);
});

export class Calibration {
  private readonly gram: number[][];
  private readonly moment: number[];
  private rates: number[];
  private pairs: number;
  private offset: number;
  private scale: number;
  private offsetScale: number;
  private offsets = 0;
  private spread: Spread;

  private constructor(
    readonly identity: Identity,
    private readonly prior: readonly number[],
    private readonly strength: number,
    state?: CalibrationState,
  ) {
    this.gram = Array.from({ length: PARAMS }, () => new Array<number>(PARAMS).fill(0));
    this.moment = new Array<number>(PARAMS).fill(0);
    this.rates = [...prior];
    this.pairs = state?.pairs ?? 0;
    this.offset = state?.offset ?? 0;
    this.scale = state?.scale ?? NOISE;
    this.offsetScale = state?.offsetScale ?? 0;
    if (state) this.offsets = 1;
    this.spread = state?.spread && isSpread(state.spread) ? state.spread : emptySpread();
  }

  static fresh(identity: Identity): Calibration {
    return new Calibration(identity, PRIOR, 1);
  }

  /** From the session file: the saved rates become the prior the next pairs refine. A state of another layout starts over. */
  static restore(state: CalibrationState): Calibration {
    const identity = { provider: state.provider, model: state.model };
    if (state.layout !== LAYOUT || state.rates.length !== PARAMS) return Calibration.fresh(identity);
    return new Calibration(identity, state.rates, RESTORED, state);
  }

  get calibrated(): boolean {
    return this.pairs >= MIN_PAIRS;
  }

  get observed(): number {
    return this.pairs;
  }

  /** Tokens of a change, from its features. */
  delta(features: readonly number[]): number {
    return dot(this.rates, expand(features));
  }

  /** Tokens of a whole payload: the rates plus what the provider adds on its own. */
  total(features: readonly number[]): number {
    return Math.max(0, Math.round(this.delta(features) + this.offset));
  }

  /** The half-width of the estimate of a change since an anchor (band.ts). */
  bandOfChange(features: readonly number[]): number {
    return changeBand(this.spread, features, this.textScale());
  }

  /** The half-width of a whole payload's estimate; `tools`: the tokens of the tool definitions in it. */
  bandOfTotal(features: readonly number[], tools: number): number {
    return totalBand(this.spread, features, tools, this.offsets > 1 ? Math.max(this.offsetScale, 20) : undefined, this.textScale());
  }

  /** Two consecutive anchors: `tokens` counted by the provider for what `features` added between them. */
  observePair(features: readonly number[], tokens: number): void {
    if (!features.some((value) => value !== 0)) return;
    const z = expand(features);
    const size = Math.max(Math.abs(tokens), MIN_SIZE);
    const predicted = dot(this.rates, z);
    // Measured before the fit takes this pair in: what the band must hold is the error of an estimate made without it.
    if (Math.abs(predicted) >= MIN_SIZE) this.spread = observeSpread(this.spread, features, (tokens - predicted) / Math.abs(predicted), FORGET);
    const residual = Math.abs(tokens - predicted) / size;
    const huber = this.pairs >= 3 && residual > HUBER * this.scale ? (HUBER * this.scale) / residual : 1;
    const weight = huber / (NOISE * NOISE * size * size + SMALL * size);
    for (let i = 0; i < PARAMS; i++) {
      const zi = z[i] ?? 0;
      this.moment[i] = (this.moment[i] ?? 0) * FORGET + weight * zi * tokens;
      const row = this.gram[i] as number[];
      for (let j = 0; j < PARAMS; j++) row[j] = (row[j] ?? 0) * FORGET + weight * zi * (z[j] ?? 0);
    }
    this.scale = 0.9 * this.scale + 0.1 * Math.min(residual, 5 * this.scale);
    this.pairs++;
    this.rates = this.solve();
  }

  /** A whole payload the provider counted: what the rates miss is the provider's own overhead. */
  observeTotal(features: readonly number[], tokens: number): void {
    const residual = tokens - this.delta(features);
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
      layout: LAYOUT,
      pairs: this.pairs,
      rates: this.rates.map((rate) => Number(rate.toPrecision(6))),
      offset: Math.round(this.offset),
      scale: Math.round(this.scale * 1e4) / 1e4,
      offsetScale: Math.round(this.offsetScale * 10) / 10,
      spread: { squares: this.spread.squares.map((v) => Number(v.toPrecision(6))), weights: this.spread.weights.map((v) => Number(v.toPrecision(6))) },
    };
  }

  /** The fitted scale of non-CJK text: the band's shares are of the calibrated estimate. */
  private textScale(): number {
    return Math.max(0.5, 1 + (this.rates[TEXT_SCALE] ?? 0));
  }

  /** (G + P) w = m + P·prior, P the prior's precisions (a restored fit's, stronger). */
  private solve(): number[] {
    const precision = PRECISION.map((base) => this.strength * base);
    return solveLinear(this.gram, this.moment, precision, this.prior) ?? [...this.rates];
  }
}

/** (G + diag(precision)) w = moment + precision·prior (linearSolve.ts); undefined when singular. */
function solveLinear(gram: readonly (readonly number[])[], moment: readonly number[], precision: readonly number[], prior: readonly number[]): number[] | undefined {
  const rows = gram.map((row, i) => {
    const copy = [...row];
    copy[i] = (copy[i] ?? 0) + (precision[i] ?? 0);
    copy.push((moment[i] ?? 0) + (precision[i] ?? 0) * (prior[i] ?? 0));
    return copy;
  });
  return solveAugmented(rows, 'fail');
}

/**
 * The features with the scales' own inputs appended: the prior's estimate
 * of each CJK script's features, and the estimates the content classes hold
 * (everything else). A feature vector of an earlier, shorter layout reads
 * its missing features as zero.
 */
function expand(features: readonly number[]): number[] {
  const z = new Array<number>(PARAMS).fill(0);
  for (let i = 0; i < FEATURE_COUNT; i++) z[i] = features[i] ?? 0;
  SCRIPT_FEATURES.forEach((script, k) => {
    let estimate = 0;
    for (const i of script) estimate += (PRIOR_RATES[i] ?? 0) * (features[i] ?? 0);
    z[SCRIPT_SCALE + k] = estimate;
  });
  let text = 0;
  for (let k = 0; k < CONTENT_CLASSES.length; k++) text += features[CLASS_OFFSET + k] ?? 0;
  z[TEXT_SCALE] = text;
  return z;
}

export function isCalibrationState(value: unknown): value is CalibrationState {
  if (value === null || typeof value !== 'object') return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.provider === 'string' &&
    typeof v.model === 'string' &&
    (v.layout === undefined || isFiniteNumber(v.layout)) &&
    isFiniteNumber(v.pairs) &&
    Array.isArray(v.rates) &&
    v.rates.every(isFiniteNumber) &&
    isFiniteNumber(v.offset) &&
    isFiniteNumber(v.scale) &&
    isFiniteNumber(v.offsetScale)
  );
}

function isSpread(value: unknown): value is Spread {
  const v = value as Partial<Spread>;
  return Array.isArray(v.squares) && Array.isArray(v.weights) && v.squares.every(isFiniteNumber) && v.weights.every(isFiniteNumber);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function dot(a: readonly number[], b: readonly number[]): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += (a[i] ?? 0) * (b[i] ?? 0);
  return sum;
}
