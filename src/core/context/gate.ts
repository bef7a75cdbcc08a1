import { newId } from '../ids';
import { Calibration } from './calibration';
import { FAMILY_NAMES, TEMPLATE_FAMILIES } from './chatFrames';
import type { Identity, TemplateFamily } from '../modelIdentity';
import type { DriftEvent, DriftSink } from './driftEvents';
import type { EstimatorKind } from './estimator';
import type { PayloadChange } from './payload';
import type { ServerCount } from './serverCounts';
import { initialGateState, sameIdentity, withCurrentSlug, withWindowId, type GateState } from './gateState';
import type { PayloadMeasure } from './ledger';
import { MESSAGES } from './heuristic';
import { reconcile } from './reconcile';
import {
  beginRequest,
  compacted,
  settleRequest,
  type Projection,
  type RequestEstimate,
  type RequestResult,
  type Settlement,
  type StepContext,
  type WarningKind,
} from './transitions';

export interface ContextGateOptions {
  readonly session: string;
  readonly sink: DriftSink;
  /** State from the session file; a fresh session starts without one. */
  readonly state?: GateState;
  readonly clock?: () => Date;
  readonly newWindowId?: () => string;
}

export interface AfterRequestOutcome {
  /** `ignored`: no request was in flight, or a compaction replaced its history. */
  readonly kind: Settlement | 'ignored';
  /** The events this request wrote: the loss it revealed, or the drift that closed a window. */
  readonly events: readonly DriftEvent[];
  /** A loss window is open and warns, now that this request ended: the gauge's warning state. */
  readonly warning: boolean;
  /** This request made its window warn: the chat says so, once per window. */
  readonly newWarning: boolean;
  readonly warningKind?: WarningKind;
}

/**
 * Where a projection's number comes from (docs/architecture.md, "Bands"):
 * the server's own count of this payload (`server`), the model's own
 * tokenizer and template (`tokenizer`), the provider's last usage plus the
 * estimate of what changed since (`anchored`), or an estimate (`estimate`).
 */
export type CountSource = 'server' | 'tokenizer' | 'anchored' | 'estimate';

/** A projection, the estimator that made it, where it comes from and how far off it may be. */
export type GateProjection = Projection & {
  readonly estimator: EstimatorKind;
  readonly counter: string;
  readonly pending: number;
  readonly source: CountSource;
  /** Half-width of the band around `projected`, in tokens: 0 for a count claimed exact. */
  readonly band: number;
  /** The family whose tokenizer counts (`tokenizer`): "Qwen3". */
  readonly family?: string;
};

/** A source of counts claimed exact, checked against every anchor. */
type Claim = 'server' | 'tokenizer';

/** Relative band of a count by a tokenizer whose exact count has not landed yet, or by OpenAI's recipe (its tool frames are documented, not exact). */
const PENDING_SPREAD = 0.05;
const RECIPE_SPREAD = 0.02;

/** Estimates kept per open window: the newest this many, with their count in the state. */
export const WINDOW_ESTS = 1_000;

interface InFlight {
  readonly identity: Identity;
  readonly measure: PayloadMeasure;
  readonly est: number;
  /** What was projected, its band, and the exact source it claims, if any; `estBand` the band around `est` alone. */
  readonly projected: number;
  readonly band: number;
  readonly estBand: number;
  readonly claim?: Claim;
  /** Characters added since the anchor, the tokens no text carries among them, and the anchor's count: one calibration pair if this request anchors. */
  readonly pair?: { readonly features: readonly number[]; readonly constants: number; readonly real: number };
}

/**
 * The anchored compaction gate of one session (design §1).
 *
 * Call `beforeRequest` right before a request goes out and `afterRequest`
 * when it ends, whatever the end. `project` answers the same question
 * without changing anything (the gauge, the compaction decision). `close`
 * when the session ends or the extension stops: an open window is written
 * as `anchor_loss_open`.
 *
 * State is committed before events reach the sink, so a sink that throws
 * (disk full) cannot leave the gate half-updated. The estimates of an open
 * window are kept here, in memory, not in the session file.
 */
export class ContextGate {
  readonly session: string;
  private readonly sink: DriftSink;
  private readonly clock: () => Date;
  private readonly newWindowId: () => string;
  private current: GateState;
  private inFlight: InFlight | null = null;
  private calibration: Calibration | undefined;
  private ests: { window: string; values: number[]; last: number } | undefined;
  private closedAt: string | undefined;
  private serverCount: ServerCount | undefined;
  /** Exact claims the provider's usage has contradicted, by identity and source: the size of the mismatch. */
  private readonly mismatches = new Map<string, number>();

  constructor(options: ContextGateOptions) {
    this.session = options.session;
    this.sink = options.sink;
    this.clock = options.clock ?? (() => new Date());
    this.newWindowId = options.newWindowId ?? newId;
    const loaded = withWindowId(options.state ?? initialGateState(), this.newWindowId);
    const reconciled = reconcile(loaded, options.sink.windowOf?.(this.session));
    this.current = reconciled.state;
    if (reconciled.ests && this.current.window) this.ests = { window: this.current.window.id, values: [...reconciled.ests], last: reconciled.ests.at(-1) ?? 0 };
    if (this.current.calibration) this.calibration = Calibration.restore(this.current.calibration);
  }

  /** Plain JSON for the session file. */
  snapshot(): GateState {
    const calibration = this.calibration && this.calibration.observed > 0 ? this.calibration.snapshot() : undefined;
    const { calibration: _old, ...rest } = this.current;
    return calibration ? { ...rest, calibration } : rest;
  }

  /** The gauge's warning state: a window is open and has warned. */
  get warning(): boolean {
    return this.current.window?.warned ?? false;
  }

  /** What beforeRequest would answer now, with no event and no change. */
  project(identity: Identity, measure: PayloadMeasure): GateProjection {
    const estimate = this.estimate(identity, measure, false);
    const step = beginRequest(this.current, this.context(identity), estimate.request);
    return this.sourced(identity, measure, step.projection, estimate).projection;
  }

  /** The server counted a payload (off the send path): projections of it, or of what follows it, start from that count. */
  serverCounted(count: ServerCount): void {
    this.serverCount = count;
  }

  beforeRequest(identity: Identity, measure: PayloadMeasure): GateProjection {
    const previous = withCurrentSlug(this.current, identity).previous;
    // A fit belongs to one tokenizer and chat template: a switch starts it over.
    if (previous && this.current.established && !sameIdentity(previous, identity)) this.calibration = undefined;
    const estimate = this.estimate(identity, measure, true);
    const step = beginRequest(this.current, this.context(identity), estimate.request);
    this.current = step.state;
    this.trackWindow(estimate.request.est);
    const anchor = step.projection.anchor;
    const pair = estimate.pair && anchor ? { ...estimate.pair, real: anchor.real } : undefined;
    const { projection, claim } = this.sourced(identity, measure, step.projection, estimate);
    this.inFlight = { identity, measure, est: estimate.request.est, projected: projection.projected, band: projection.band, estBand: estimate.totalBand, ...(claim ? { claim } : {}), ...(pair ? { pair } : {}) };
    for (const event of step.events) this.sink.record(event);
    return projection;
  }

  /**
   * The request in flight ended. A completed one without usage, or with a
   * count that is not an anchor, opens its loss window now, as its stream
   * ends (design §1, "Anchor loss"), with its own estimate as the window's
   * first.
   */
  afterRequest(result: RequestResult): AfterRequestOutcome {
    const sent = this.inFlight;
    if (!sent) return { kind: 'ignored', events: [], warning: this.warning, newWarning: false };
    this.inFlight = null;
    const windowEsts = this.ests && this.current.window?.id === this.ests.window ? this.ests.values : [];
    const sentEstimate = { est: sent.est, toolsEst: sent.measure.mark.tools.tokens, mark: sent.measure.mark, windowEsts, band: sent.estBand };
    const settled = settleRequest(this.current, this.context(sent.identity), result, sentEstimate);
    const checked = settled.outcome === 'anchored' && result.promptTokens !== undefined ? this.checkClaim(sent, result.promptTokens) : undefined;
    if (settled.outcome === 'anchored' && result.promptTokens !== undefined) this.learn(sent, result.promptTokens);
    this.current = settled.state;
    if (settled.outcome === 'anchored') this.ests = undefined;
    if (settled.opened) this.ests = { window: settled.opened.id, values: [sent.est], last: sent.est };
    for (const event of [...settled.events, ...(checked ? [checked] : [])]) this.sink.record(event);
    const warningKind = this.warningKind();
    return { kind: settled.outcome, events: settled.events, warning: this.warning, newWarning: settled.newWarning, ...(warningKind ? { warningKind } : {}) };
  }

  /**
   * The history was summarized: drop the anchor, set the one-shot marker. A
   * request still in flight measured the old history; its result is ignored.
   * A compaction that replaced nothing changes nothing.
   */
  afterCompaction(replaced = 1): void {
    if (replaced <= 0) return;
    this.current = compacted(this.current);
    this.inFlight = null;
  }

  /** The session ends or the extension stops: a window still open is written as `anchor_loss_open`, once per state of it. */
  close(): void {
    const window = this.current.window;
    if (!window) return;
    const key = `${window.id}:${window.requests}`;
    if (this.closedAt === key) return;
    this.closedAt = key;
    const ests = this.ests?.window === window.id ? this.ests : undefined;
    this.sink.record({
      event: 'anchor_loss_open',
      session: this.session,
      window: window.id,
      reason: window.openedBy.reason,
      model: window.openedBy.model,
      provider: window.openedBy.provider,
      reasons: window.reasons,
      warned: window.warned,
      est: ests?.last ?? 0,
      window_max_est: window.maxEst,
      window_requests: window.requests,
      window_ests: ests ? [...ests.values] : [],
    });
  }

  /**
   * Exact is a claim that is checked: a request sent with a count claimed
   * exact whose usage differs by even one token downgrades that source to a
   * band for this identity, and the drift log says so.
   */
  private checkClaim(sent: InFlight, real: number): DriftEvent | undefined {
    if (!sent.claim || sent.band > 0 || real === sent.projected) return undefined;
    this.mismatches.set(claimKey(sent.identity, sent.claim), Math.abs(real - sent.projected));
    const counter = sent.claim === 'server' ? 'server' : sent.measure.counter;
    return { event: 'count_mismatch', session: this.session, model: sent.identity.model, provider: sent.identity.provider, source: sent.claim, counter, real, projected: sent.projected, est: sent.est };
  }

  /**
   * Where the projection comes from, and its band: the server's count of
   * this payload (or of the one before it, plus what changed since), else
   * the anchor plus what changed since, else the estimate of the whole.
   */
  private sourced(identity: Identity, measure: PayloadMeasure, projection: Projection, estimate: Estimate): { projection: GateProjection; claim?: Claim } {
    const base = { ...projection, ...estimate.label };
    const server = this.fromServer(identity, measure, projection, estimate);
    if (server) return { projection: { ...base, projected: server.projected, source: 'server', band: server.band }, claim: server.band === 0 ? 'server' : undefined };
    if (projection.anchored) {
      const band = estimate.since ? this.changeBand(identity, measure, estimate.since, estimate.calibration) : estimate.totalBand;
      return { projection: { ...base, source: 'anchored', band }, ...(band === 0 && estimate.exact ? { claim: 'tokenizer' as const } : {}) };
    }
    const exact = estimate.exact && estimate.totalBand === 0;
    const family = exact ? FAMILY_NAMES[measure.counter as TemplateFamily] : undefined;
    return { projection: { ...base, source: exact ? 'tokenizer' : 'estimate', band: estimate.totalBand, ...(family ? { family } : {}) }, ...(exact ? { claim: 'tokenizer' as const } : {}) };
  }

  /** The server's newest count, when it is of this payload or of one this payload continues, and no anchor is newer. */
  private fromServer(identity: Identity, measure: PayloadMeasure, projection: Projection, estimate: Estimate): { projected: number; band: number } | undefined {
    const count = this.serverCount;
    if (!count || !sameIdentity(count.identity, identity)) return undefined;
    const since = measure.since(count.mark);
    if (!since) return undefined;
    const anchorMark = projection.anchor?.mark;
    if (anchorMark && anchorMark.epoch === count.mark.epoch && anchorMark.messages > count.mark.messages) return undefined;
    const delta = estimate.calibration ? estimate.calibration.delta(since.features) + (since.constants ?? 0) : since.tokens;
    const unchanged = since.tokens === 0 && since.parts.length === 0 && measure.mark.messages === count.mark.messages;
    const mismatch = this.mismatches.get(claimKey(identity, 'server'));
    const band = (unchanged ? 0 : this.changeBand(identity, measure, since, estimate.calibration)) + (mismatch === undefined ? 0 : 2 * mismatch);
    return { projected: Math.max(0, Math.round(count.real + delta)), band: Math.ceil(band) };
  }

  /** The band of the estimate of a change: 0 when the model's own tokenizer counted it and its claim holds. */
  private changeBand(identity: Identity, measure: PayloadMeasure, since: PayloadChange, calibration: Calibration | undefined): number {
    if (calibration) return Math.ceil(calibration.bandOfChange(since.features));
    const size = Math.abs(since.tokens);
    if (!isFamily(measure.counter)) return Math.ceil(RECIPE_SPREAD * size + (since.features[MESSAGES] ?? 0));
    const mismatch = this.mismatches.get(claimKey(identity, 'tokenizer'));
    return Math.ceil((measure.pending > 0 ? PENDING_SPREAD * size : 0) + (mismatch === undefined ? 0 : 2 * mismatch));
  }

  /** The band of a whole payload's estimate without an anchor. */
  private totalBand(identity: Identity, measure: PayloadMeasure, est: number, calibration: Calibration | undefined): number {
    if (calibration) return Math.ceil(calibration.bandOfTotal(measure.features, measure.mark.tools.tokens));
    if (!isFamily(measure.counter)) return Math.ceil(RECIPE_SPREAD * est + 0.1 * measure.mark.tools.tokens);
    const mismatch = this.mismatches.get(claimKey(identity, 'tokenizer'));
    return Math.ceil((measure.pending > 0 ? PENDING_SPREAD * est : 0) + (mismatch === undefined ? 0 : 2 * mismatch));
  }

  /** What the warning says, while there is one: usage stopped, or this server never reports it. */
  private warningKind(): WarningKind | undefined {
    if (!this.warning) return undefined;
    return this.current.missing === 'usage-unsupported' ? 'usage-unsupported' : 'no-usage';
  }

  private context(identity: Identity): StepContext {
    return { session: this.session, identity, newWindowId: this.newWindowId, at: this.clock().toISOString() };
  }

  /**
   * The payload in the gate's units. For a model with no known tokenizer:
   * the calibration's rates (the prior fitted to real tokenizers until this
   * provider's counts refine it), on the change since the anchor and on the
   * whole payload; otherwise the measure's own counts.
   */
  private estimate(identity: Identity, measure: PayloadMeasure, committing: boolean): Estimate {
    const calibration = measure.counter === 'heuristic' ? this.calibrationFor(identity, committing) : undefined;
    // What no text carries (the reply's priming, names, the tool definitions' frames) is added as it is: the rates scale texts.
    const est = calibration ? calibration.total(measure.features) + (measure.constants ?? 0) : measure.tokens;
    const anchor = withCurrentSlug(this.current, identity).anchor;
    const since = anchor?.mark && sameIdentity(anchor.identity, identity) ? measure.since(anchor.mark) : undefined;
    const request: RequestEstimate = since
      ? { est, change: calibration ? calibration.delta(since.features) + (since.constants ?? 0) : since.tokens, parts: since.parts }
      : { est };
    const estimator: EstimatorKind = !calibration ? 'tokenizer' : calibration.calibrated ? 'calibrated heuristic' : 'heuristic';
    const pair = calibration && since ? { features: since.features, constants: since.constants ?? 0 } : undefined;
    const exact = isFamily(measure.counter) && !this.mismatches.has(claimKey(identity, 'tokenizer'));
    return {
      request,
      pair,
      label: { estimator, counter: measure.counter, pending: measure.pending },
      calibration,
      ...(since ? { since } : {}),
      exact,
      totalBand: this.totalBand(identity, measure, est, calibration),
    };
  }

  private calibrationFor(identity: Identity, committing: boolean): Calibration {
    if (this.calibration && sameIdentity(this.calibration.identity, identity)) return this.calibration;
    const fresh = Calibration.fresh(identity);
    if (committing) this.calibration = fresh;
    return fresh;
  }

  /** Consecutive anchors of a model with no known tokenizer: one more pair for its fit. */
  private learn(sent: InFlight, real: number): void {
    if (sent.measure.counter !== 'heuristic') return;
    const calibration = this.calibrationFor(sent.identity, true);
    if (sent.pair) calibration.observePair(sent.pair.features, real - sent.pair.real - sent.pair.constants);
    // A reload still being measured knows the whole payload's characters only roughly.
    if (sent.measure.rough === 0) calibration.observeTotal(sent.measure.features, real - (sent.measure.constants ?? 0));
  }

  private trackWindow(est: number): void {
    const window = this.current.window;
    if (!window) return;
    if (this.ests?.window !== window.id) this.ests = { window: window.id, values: [], last: est };
    this.ests.values.push(est);
    this.ests.last = est;
    if (this.ests.values.length > WINDOW_ESTS) this.ests.values.splice(0, this.ests.values.length - WINDOW_ESTS);
  }
}

/** The payload in the gate's units, and what its band is built from. */
interface Estimate {
  readonly request: RequestEstimate;
  readonly pair?: { readonly features: readonly number[]; readonly constants: number };
  readonly label: { readonly estimator: EstimatorKind; readonly counter: string; readonly pending: number };
  readonly calibration: Calibration | undefined;
  readonly since?: PayloadChange;
  /** The model's own tokenizer counts, and no usage has contradicted it. */
  readonly exact: boolean;
  readonly totalBand: number;
}

function isFamily(counter: string): boolean {
  return TEMPLATE_FAMILIES.includes(counter as TemplateFamily);
}

function claimKey(identity: Identity, claim: Claim): string {
  return `${identity.provider}\0${identity.model}\0${claim}`;
}
