import { CLASS_OFFSET, CONTENT_CLASSES, MESSAGES, PRIOR_RATES, SCRIPT_FEATURES, UNMEASURED } from './heuristic';

/**
 * How far an estimate may be from the provider's count (docs/architecture.md,
 * "Bands"): the half-width of a band that should hold the real count.
 *
 * For a model whose tokenizer Candor does not have, the error of an estimate
 * is mostly one new document's own spread about the rate of its kind of text
 * (code, JSON, prose, a shell listing, CJK). So the band is built per
 * content class: each class's share of the estimate, times that class's
 * typical relative error, as the calibration has measured it on this
 * provider's anchor pairs. A class seen little keeps most of the prior's
 * wide spread; one seen often narrows to what was measured. The shares are
 * added, not pooled: a change of one document has nothing to average with.
 *
 * A whole payload without an anchor adds what the provider's template and
 * tool rendering may add on their own: unknown before the first count, then
 * the spread of the offset the calibration follows.
 */

/** Half-width in typical errors: wide enough that the tail of a heavy-tailed spread stays inside. */
const Z = 2.8;
/** Relative spread assumed for a class never seen; and how many pairs that assumption weighs. */
const PRIOR_SPREAD = 0.09;
const PRIOR_PAIRS = 4;
/** Of a text not measured yet (a reload in progress), counted by its length. */
const UNMEASURED_SPREAD = 0.35;
/** Tokens a chat template may add per message beyond the 3 of OpenAI's frame (ChatML adds 2, Gemma 3 3). */
const FRAME_SPREAD = 4;
/** Before any count of the whole payload: how far a template and a tool rendering may be from OpenAI's. */
const FIRST_TOOLS_SPREAD = 0.35;
const FIRST_CONSTANT = 40;

/** The components a band is built from: the four content classes, then CJK text. */
export const BAND_COMPONENTS = CONTENT_CLASSES.length + 1;

/** Each component's share of an estimate, in the prior's tokens. */
export function componentEstimates(features: readonly number[]): number[] {
  const parts = CONTENT_CLASSES.map((_, k) => Math.abs(features[CLASS_OFFSET + k] ?? 0));
  let cjk = 0;
  for (const script of SCRIPT_FEATURES) for (const i of script) cjk += (PRIOR_RATES[i] ?? 0) * Math.abs(features[i] ?? 0);
  parts.push(cjk);
  return parts;
}

/** What the calibration keeps of its residuals: per component, the weighted sum of squared relative errors and its weight. */
export interface Spread {
  readonly squares: readonly number[];
  readonly weights: readonly number[];
}

export function emptySpread(): Spread {
  return { squares: new Array<number>(BAND_COMPONENTS).fill(0), weights: new Array<number>(BAND_COMPONENTS).fill(0) };
}

/** One anchor pair's relative error, filed under the components of what it added, by their shares; older pairs fade by `forget`. */
export function observeSpread(spread: Spread, features: readonly number[], relative: number, forget: number): Spread {
  const parts = componentEstimates(features);
  const total = parts.reduce((a, b) => a + b, 0);
  if (total <= 0) return spread;
  const squares = spread.squares.map((s, k) => s * forget + ((parts[k] ?? 0) / total) * relative * relative);
  const weights = spread.weights.map((w, k) => w * forget + (parts[k] ?? 0) / total);
  return { squares, weights };
}

/** A component's typical relative error: the prior's, moved toward what was measured as pairs of it accumulate. */
function typical(spread: Spread, k: number): number {
  const weight = spread.weights[k] ?? 0;
  return Math.sqrt(((spread.squares[k] ?? 0) + PRIOR_PAIRS * PRIOR_SPREAD * PRIOR_SPREAD) / (weight + PRIOR_PAIRS));
}

/** The half-width of the estimate of a change since an anchor: each component's share times its typical error. */
export function changeBand(spread: Spread, features: readonly number[], scale = 1): number {
  const parts = componentEstimates(features);
  let width = 0;
  parts.forEach((part, k) => {
    width += typical(spread, k) * part * scale;
  });
  width += UNMEASURED_SPREAD * (Math.abs(features[UNMEASURED] ?? 0) / 4);
  return Z * width + Math.abs(features[MESSAGES] ?? 0);
}

/**
 * The half-width of a whole payload's estimate with no anchor. `offset`:
 * the typical error of the calibration's offset once a whole payload was
 * counted, undefined before (then the template and the tool definitions are
 * the provider's own, and `tools` tokens of them may be rendered otherwise).
 */
export function totalBand(spread: Spread, features: readonly number[], tools: number, offset: number | undefined, scale = 1): number {
  const messages = Math.abs(features[MESSAGES] ?? 0);
  const own = offset === undefined ? FIRST_TOOLS_SPREAD * tools + FRAME_SPREAD * messages + FIRST_CONSTANT : Z * offset;
  return changeBand(spread, features, scale) + own;
}
