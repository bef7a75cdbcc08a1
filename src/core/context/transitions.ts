import type { AnchorDriftEvent, DriftEvent, Identity, LossReason } from './driftEvents';
import { sameIdentity, type Anchor, type GateState, type LossWindow } from './gateState';

/**
 * The state machine of design §1 as pure functions: state in, state and
 * events out. ContextGate commits the state and hands the events to its sink.
 */

/** Why a projection is a bare estimate. */
export type UnanchoredReason = 'not-established' | 'after-compaction' | 'after-switch' | 'no-usage' | 'shrunk';

export interface Projection {
  readonly projected: number;
  readonly estNow: number;
  /** projected = anchor.real + (estNow - anchor.est). */
  readonly anchored: boolean;
  /** The anchor the session holds, if any (also in the shrink case). */
  readonly anchor?: Anchor;
  /** Set when not anchored. */
  readonly unanchoredBecause?: UnanchoredReason;
  /** A loss window is open and warns. */
  readonly warning: boolean;
  /** This request emitted the `no-usage` warning (once per window). */
  readonly newWarning: boolean;
  /** This request is the first under a new identity. */
  readonly switched: boolean;
}

export interface Step {
  readonly state: GateState;
  readonly projection: Projection;
  readonly events: DriftEvent[];
}

export function beginRequest(state: GateState, session: string, identity: Identity, estNow: number): Step {
  const events: DriftEvent[] = [];
  let { anchor, window, afterSwitch } = state;
  const switched = state.previous !== null && !sameIdentity(state.previous, identity);
  // Before the session is established there is no anchor to lose, and the
  // missing anchor is legitimate anyway: a switch then changes nothing.
  if (switched && state.previous && state.established) {
    // The open window is dropped unmeasured: its numbers would mix providers.
    anchor = null;
    afterSwitch = true;
    window = openWindow('switch', state.previous, false);
    events.push(loss(session, 'switch', state.previous, estNow));
  }
  if (anchor && !sameIdentity(anchor.identity, identity)) anchor = null; // never project on another's base

  let unanchoredBecause: UnanchoredReason | undefined;
  let newWarning = false;
  if (anchor) {
    if (estNow < anchor.est) unanchoredBecause = 'shrunk';
  } else if (!state.established) {
    unanchoredBecause = 'not-established';
  } else if (afterSwitch) {
    unanchoredBecause = 'after-switch';
  } else if (state.afterCompaction) {
    unanchoredBecause = 'after-compaction';
  } else {
    unanchoredBecause = 'no-usage';
    if (!window?.reasons.includes('no-usage')) {
      window = window
        ? { ...window, reasons: [...window.reasons, 'no-usage'], warned: true }
        : openWindow('no-usage', identity, true);
      newWarning = true;
      events.push(loss(session, 'no-usage', identity, estNow));
    }
  }
  if (window) window = { ...window, requests: window.requests + 1, maxEst: Math.max(window.maxEst, estNow) };

  const anchored = anchor !== null && unanchoredBecause === undefined;
  const projection: Projection = {
    projected: anchored && anchor ? anchor.real + (estNow - anchor.est) : estNow,
    estNow,
    anchored,
    ...(anchor ? { anchor } : {}),
    ...(unanchoredBecause ? { unanchoredBecause } : {}),
    warning: window?.warned ?? false,
    newWarning,
    switched,
  };
  return { state: { ...state, anchor, window, afterSwitch, previous: identity }, projection, events };
}

export interface RequestResult {
  /** finish_reason seen; failed, stopped and cut requests are not completed. */
  readonly completed: boolean;
  /** usage.prompt_tokens, when the provider reported it. */
  readonly promptTokens?: number;
  /** The local estimate of exactly the messages sent. */
  readonly estSent: number;
}

export type Settlement = 'not-completed' | 'anchored' | 'unanchored';

export interface Settled {
  readonly state: GateState;
  readonly outcome: Settlement;
  readonly events: AnchorDriftEvent[];
}

export function settleRequest(state: GateState, session: string, identity: Identity, result: RequestResult): Settled {
  // A request that did not complete leaves everything as it was, markers
  // included: a retry after a failure is still the first request after.
  if (!result.completed) return { state, outcome: 'not-completed', events: [] };
  const base = { ...state, established: true, afterCompaction: false, afterSwitch: false };
  const real = result.promptTokens;
  // Zero prompt tokens is what some servers send when they do not count.
  if (real === undefined || !Number.isFinite(real) || real <= 0) {
    return { state: { ...base, anchor: null }, outcome: 'unanchored', events: [] };
  }
  const anchor: Anchor = { real, est: result.estSent, identity };
  const events = state.window ? [drift(session, state.window, identity, real, result.estSent)] : [];
  return { state: { ...base, anchor, window: null }, outcome: 'anchored', events };
}

/** Compaction replaced the history: the anchor no longer describes it. */
export function compacted(state: GateState): GateState {
  return { ...state, anchor: null, afterCompaction: true };
}

function openWindow(reason: LossReason, identity: Identity, warned: boolean): LossWindow {
  return {
    openedBy: { reason, provider: identity.provider, model: identity.model },
    reasons: [reason],
    warned,
    maxEst: 0,
    requests: 0,
  };
}

function loss(session: string, reason: LossReason, identity: Identity, est: number): DriftEvent {
  return { event: 'anchor_loss', session, reason, model: identity.model, provider: identity.provider, est };
}

function drift(session: string, window: LossWindow, identity: Identity, real: number, est: number): AnchorDriftEvent {
  return {
    event: 'anchor_drift',
    session,
    model: identity.model,
    provider: identity.provider,
    loss_model: window.openedBy.model,
    loss_provider: window.openedBy.provider,
    real,
    est,
    delta: real - est,
    window_max_est: window.maxEst,
    window_requests: window.requests,
  };
}
