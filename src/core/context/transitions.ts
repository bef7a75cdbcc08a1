import type { Identity } from '../modelIdentity';
import type { AnchorDriftEvent, DriftEvent, LossReason } from './driftEvents';
import { sameIdentity, withCurrentSlug, type Anchor, type AnchorChange, type GateState, type LossWindow, type MissingUsage } from './gateState';
import type { PayloadMark } from './ledger';

/**
 * The state machine of design §1 as pure functions: state in, state and
 * events out. ContextGate commits the state and hands the events to its sink.
 */

/** Why a projection is a bare estimate. */
export type UnanchoredReason = 'not-established' | 'after-compaction' | 'after-switch' | 'after-shrink' | 'no-usage' | 'suspect-usage';

/** What a new warning says: usage stopped, or this server never reports it in streams. */
export type WarningKind = 'no-usage' | 'usage-unsupported';

export interface Projection {
  readonly projected: number;
  readonly estNow: number;
  /** projected = anchor.real + (estNow - anchor.est), for either sign. */
  readonly anchored: boolean;
  /** The anchor the session holds, if any. */
  readonly anchor?: Anchor;
  /** Set when not anchored. */
  readonly unanchoredBecause?: UnanchoredReason;
  /** A loss window is open and warns. */
  readonly warning: boolean;
  /** This request emitted the `no-usage` warning (once per window). */
  readonly newWarning: boolean;
  readonly warningKind?: WarningKind;
  /** This request is the first under a new identity. */
  readonly switched: boolean;
  /** The payload shrank under the anchor: subtracted, or the anchor dropped. */
  readonly change?: AnchorChange;
}

/** The estimate of the payload to send, in the gate's units (calibrated or not). */
export interface RequestEstimate {
  readonly est: number;
  /** The estimate of what changed since the anchor's mark; absent when it cannot be told (then est − anchor.est). */
  readonly change?: number;
  readonly parts?: readonly ('system' | 'tools')[];
}

/** What a transition needs besides the state. */
export interface StepContext {
  readonly session: string;
  readonly identity: Identity;
  readonly newWindowId: () => string;
  /** ISO time of the request. */
  readonly at: string;
}

export interface Step {
  readonly state: GateState;
  readonly projection: Projection;
  readonly events: DriftEvent[];
}

export function beginRequest(before: GateState, ctx: StepContext, estimate: RequestEstimate): Step {
  const { session, identity } = ctx;
  const state = withCurrentSlug(before, identity);
  const events: DriftEvent[] = [];
  const est = estimate.est;
  let { anchor, window, afterSwitch, afterShrink } = state;
  let lastChange = state.change;
  const switched = state.previous !== null && !sameIdentity(state.previous, identity);
  // Before the session is established there is no anchor to lose, and the
  // missing anchor is legitimate anyway: a switch then changes nothing.
  if (switched && state.previous && state.established) {
    // The open window is dropped unmeasured: its numbers would mix providers.
    anchor = null;
    afterSwitch = true;
    lastChange = undefined;
    window = openWindow(ctx.newWindowId(), 'switch', state.previous, false);
    events.push(loss(session, window.id, 'switch', state.previous, est));
  }
  if (anchor && !sameIdentity(anchor.identity, identity)) anchor = null; // never project on another's base

  let unanchoredBecause: UnanchoredReason | undefined;
  let projected = est;
  let change: AnchorChange | undefined;
  if (anchor) {
    ({ anchor, projected, change } = projectOnAnchor(anchor, estimate, ctx.at));
    if (!anchor) {
      afterShrink = true;
      unanchoredBecause = 'after-shrink';
    }
  }

  let newWarning = false;
  if (!anchor && unanchoredBecause === undefined) {
    if (!state.established) unanchoredBecause = 'not-established';
    else if (afterSwitch) unanchoredBecause = 'after-switch';
    else if (state.afterCompaction) unanchoredBecause = 'after-compaction';
    else if (afterShrink) unanchoredBecause = 'after-shrink';
    else {
      const reason: LossReason = state.missing === 'suspect-usage' ? 'suspect-usage' : 'no-usage';
      unanchoredBecause = reason;
      if (!window?.reasons.includes(reason)) {
        const warns = reason === 'no-usage';
        window = window
          ? { ...window, reasons: [...window.reasons, reason], warned: window.warned || warns }
          : openWindow(ctx.newWindowId(), reason, identity, warns);
        newWarning = warns;
        events.push(loss(session, window.id, reason, identity, est));
      }
    }
  }
  if (window) window = { ...window, requests: window.requests + 1, maxEst: Math.max(window.maxEst, est) };
  const warningKind: WarningKind | undefined = window?.warned ? (state.missing === 'usage-unsupported' ? 'usage-unsupported' : 'no-usage') : undefined;

  if (change) lastChange = change;
  const projection: Projection = {
    projected: anchor ? projected : est,
    estNow: est,
    anchored: anchor !== null,
    ...(anchor ? { anchor } : {}),
    ...(unanchoredBecause ? { unanchoredBecause } : {}),
    warning: window?.warned ?? false,
    newWarning,
    ...(warningKind ? { warningKind } : {}),
    switched,
    ...(lastChange ? { change: lastChange } : {}),
  };
  const { change: _dropped, ...rest } = state;
  const next: GateState = { ...rest, anchor, window, afterSwitch, afterShrink, previous: identity, ...(lastChange ? { change: lastChange } : {}) };
  return { state: next, projection, events };
}

/**
 * The projection on the anchor: the provider's count plus what the estimate
 * says changed since. A payload that lost more than half of what the anchor
 * measured is no longer that payload: the anchor is dropped.
 */
function projectOnAnchor(anchor: Anchor, estimate: RequestEstimate, at: string): { readonly anchor: Anchor | null; readonly projected: number; readonly change?: AnchorChange } {
  const est = estimate.est;
  const delta = estimate.change ?? est - anchor.est;
  const parts = estimate.parts ?? [];
  if (delta < 0 && -delta > anchor.est / 2) {
    return { anchor: null, projected: est, change: { kind: 'dropped', removed: Math.round(-delta), parts, at } };
  }
  let projected = anchor.real + delta;
  let change: AnchorChange | undefined;
  if (delta < 0) {
    change = { kind: 'shrunk', removed: Math.round(-delta), parts, at };
    // Never below the provider's count scaled to the share of the estimate still there.
    projected = Math.max(projected, anchor.est > 0 ? (anchor.real * est) / anchor.est : 0);
  }
  return { anchor, projected: Math.max(0, Math.round(projected)), change };
}

export interface RequestResult {
  /** finish_reason seen; failed, stopped and cut requests are not completed. */
  readonly completed: boolean;
  /** usage.prompt_tokens, when the provider reported it. */
  readonly promptTokens?: number;
  /** The provider is known to report no usage in streams at all. */
  readonly usageUnsupported?: boolean;
  /** The window the server runs with: a count equal to it is a truncated prompt. */
  readonly contextWindow?: number;
}

/** What the request carried, as beforeRequest estimated it. */
export interface SentEstimate {
  readonly est: number;
  /** The part of `est` that is tool definitions, which servers render in their own way, some not at all. */
  readonly toolsEst?: number;
  readonly mark?: PayloadMark;
  /** Estimates of the requests sent while the window was open (kept in memory only). */
  readonly windowEsts: readonly number[];
  /** The half-width of the band around `est` (band.ts); 0 for a count claimed exact. */
  readonly band?: number;
}

/** `suspect`: a count that is not an anchor (below half the estimate, or the window itself). */
export type Settlement = 'not-completed' | 'anchored' | 'unanchored' | 'suspect';

export interface Settled {
  readonly state: GateState;
  readonly outcome: Settlement;
  readonly events: DriftEvent[];
  /** This request made its window warn (the `no-usage` loss, once per window). */
  readonly newWarning: boolean;
  /** The window this request opened; it was sent before the window existed, and is its first request. */
  readonly opened?: LossWindow;
}

/**
 * A request ended. A completed one without usage, or with a count that is
 * not an anchor, is an anchor loss known the moment its stream ends: the
 * loss window opens (or the open one gets that reason) now, whatever anchor
 * state the request was sent with, and a `no-usage` loss warns. A request
 * sent before the window opened is its first request, so its estimate is
 * the window's first.
 */
export function settleRequest(state: GateState, ctx: StepContext, result: RequestResult, sent: SentEstimate): Settled {
  // A request that did not complete leaves everything as it was, markers
  // included: a retry after a failure is still the first request after.
  if (!result.completed) return { state, outcome: 'not-completed', events: [], newWarning: false };
  const { missing: _missing, change: _change, ...rest } = state;
  const base: GateState = { ...rest, established: true, afterCompaction: false, afterSwitch: false, afterShrink: false };
  const real = result.promptTokens;
  // Zero prompt tokens is what some servers send when they do not count.
  const silent = real === undefined || !Number.isFinite(real) || real <= 0;
  if (silent || isSuspect(real, sent.est - (sent.toolsEst ?? 0), result.contextWindow)) {
    const reason: LossReason = silent ? 'no-usage' : 'suspect-usage';
    const missing: MissingUsage = silent ? (result.usageUnsupported ? 'usage-unsupported' : 'no-usage') : 'suspect-usage';
    const joined = joinWindow(state.window, reason, ctx, sent.est);
    return {
      state: { ...base, anchor: null, window: joined.window, missing },
      outcome: silent ? 'unanchored' : 'suspect',
      events: joined.events,
      newWarning: joined.newWarning,
      ...(state.window ? {} : { opened: joined.window }),
    };
  }
  const anchor: Anchor = { real, est: sent.est, identity: ctx.identity, ...(sent.mark ? { mark: sent.mark } : {}) };
  const events = state.window ? [drift(ctx.session, state.window, ctx.identity, real, sent)] : [];
  return { state: { ...base, anchor, window: null }, outcome: 'anchored', events, newWarning: false };
}

/**
 * One loss of `reason` for the window: a new window when none is open (the
 * request that lost the anchor is its first), the open one otherwise, at
 * most one loss of each reason per window. Only `no-usage` warns.
 */
function joinWindow(window: LossWindow | null, reason: LossReason, ctx: StepContext, est: number): { window: LossWindow; events: DriftEvent[]; newWarning: boolean } {
  if (window?.reasons.includes(reason)) return { window, events: [], newWarning: false };
  const warns = reason === 'no-usage';
  const joined: LossWindow = window
    ? { ...window, reasons: [...window.reasons, reason], warned: window.warned || warns }
    : { ...openWindow(ctx.newWindowId(), reason, ctx.identity, warns), requests: 1, maxEst: est };
  return { window: joined, events: [loss(ctx.session, joined.id, reason, ctx.identity, est)], newWarning: warns && !window?.warned };
}

/**
 * A count below half of the local estimate, or exactly the server's window:
 * the server truncated the prompt or counted only part of it (Ollama reported
 * only newly processed tokens for a time). The estimate compared is that of
 * the messages: tool definitions are left out, since a server that does not
 * count them has not truncated anything.
 */
export function isSuspect(real: number, est: number, contextWindow?: number): boolean {
  return real < est / 2 || (contextWindow !== undefined && contextWindow > 0 && real === contextWindow);
}

/** Compaction replaced the history: the anchor no longer describes it. */
export function compacted(state: GateState): GateState {
  const { change: _change, ...rest } = state;
  return { ...rest, anchor: null, afterCompaction: true };
}

function openWindow(id: string, reason: LossReason, identity: Identity, warned: boolean): LossWindow {
  return {
    id,
    openedBy: { reason, provider: identity.provider, model: identity.model },
    reasons: [reason],
    warned,
    maxEst: 0,
    requests: 0,
  };
}

function loss(session: string, window: string, reason: LossReason, identity: Identity, est: number): DriftEvent {
  return { event: 'anchor_loss', session, window, reason, model: identity.model, provider: identity.provider, est };
}

function drift(session: string, window: LossWindow, identity: Identity, real: number, sent: SentEstimate): AnchorDriftEvent {
  return {
    event: 'anchor_drift',
    session,
    window: window.id,
    model: identity.model,
    provider: identity.provider,
    loss_model: window.openedBy.model,
    loss_provider: window.openedBy.provider,
    real,
    est: sent.est,
    delta: real - sent.est,
    window_max_est: window.maxEst,
    window_requests: window.requests,
    window_ests: [...sent.windowEsts],
    band: sent.band ?? 0,
    held: Math.abs(real - sent.est) <= (sent.band ?? 0),
  };
}
