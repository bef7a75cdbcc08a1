import { isCalibrationState, type CalibrationState } from './calibration';
import type { Identity } from '../modelIdentity';
import { LOSS_REASONS, type LossReason } from './driftEvents';
import type { PartMark, PayloadMark } from './ledger';
import { normalizeSlug } from '../providerSlug';
import { isRecord } from '../text';

/** A real count and the local estimate of exactly the messages it measured. */
export interface Anchor {
  readonly real: number;
  readonly est: number;
  readonly identity: Identity;
  /** Where the payload stood when it was sent (absent in states written before marks). */
  readonly mark?: PayloadMark;
}

/** Open from an anchor loss until the next completed request with usage. */
export interface LossWindow {
  /** Names the window in drift.jsonl, across restarts. */
  readonly id: string;
  /** The loss that opened it: for a switch, the identity that was left. */
  readonly openedBy: { readonly reason: LossReason } & Identity;
  /** Reasons already logged: at most one `anchor_loss` of each. */
  readonly reasons: readonly LossReason[];
  /** Whether it warns (a `no-usage` loss was logged). */
  readonly warned: boolean;
  /** Largest estimate of a payload sent while open. */
  readonly maxEst: number;
  /** Requests sent while open. (Their estimates are kept in memory only, see gate.ts.) */
  readonly requests: number;
}

/** Why the last completed request left the session without an anchor. */
export type MissingUsage = 'no-usage' | 'suspect-usage' | 'usage-unsupported';

/** The last time the payload shrank under the anchor: what the gauge's tooltip explains. */
export interface AnchorChange {
  /** `shrunk`: the projection subtracted it; `dropped`: more than half went, the anchor with it. */
  readonly kind: 'shrunk' | 'dropped';
  readonly removed: number;
  /** Which texts beside the history changed. */
  readonly parts: readonly ('system' | 'tools')[];
  readonly at: string;
}

/**
 * The gate's state for one session: plain JSON, so the host can keep it in
 * the session file and a reload keeps the anchor, the markers and the window.
 */
export interface GateState {
  readonly v: 1;
  readonly anchor: Anchor | null;
  /** At least one completed request. */
  readonly established: boolean;
  /** One-shot: the next completed request follows a compaction that replaced messages. */
  readonly afterCompaction: boolean;
  /** One-shot: the next completed request follows a switch. */
  readonly afterSwitch: boolean;
  /** One-shot: the next completed request follows a shrink that dropped the anchor. */
  readonly afterShrink?: boolean;
  readonly window: LossWindow | null;
  /** Identity of the session's previous request; a different one is a switch. */
  readonly previous: Identity | null;
  readonly missing?: MissingUsage;
  readonly change?: AnchorChange;
  /** The fit of a model with no known tokenizer (calibration.ts). */
  readonly calibration?: CalibrationState;
}

export function initialGateState(): GateState {
  return { v: 1, anchor: null, established: false, afterCompaction: false, afterSwitch: false, window: null, previous: null };
}

export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.provider === b.provider && a.model === b.model;
}

/** A state as read from a session file: a window written before windows had ids gets one. */
export function withWindowId(state: GateState, newWindowId: () => string): GateState {
  return state.window && !state.window.id ? { ...state, window: { ...state.window, id: newWindowId() } } : state;
}

/**
 * The stored identities as today's slug gives them (a default port written
 * out no longer counts), read against the identity of the request being
 * made, so that upgrading Candor is not a switch.
 */
export function withCurrentSlug(state: GateState, current: Identity): GateState {
  const fix = <T extends Identity>(value: T): T => {
    const provider = normalizeSlug(value.provider, current.provider);
    return provider === value.provider ? value : { ...value, provider };
  };
  const previous = state.previous ? fix(state.previous) : null;
  if (previous === state.previous && (!state.anchor || fix(state.anchor.identity) === state.anchor.identity)) return state;
  return {
    ...state,
    anchor: state.anchor ? { ...state.anchor, identity: fix(state.anchor.identity) } : null,
    previous,
    window: state.window ? { ...state.window, openedBy: fix(state.window.openedBy) } : null,
    ...(state.calibration ? { calibration: fix(state.calibration) } : {}),
  };
}

/** Validates state read back from a session file (untrusted JSON). */
export function isGateState(value: unknown): value is GateState {
  if (!isRecord(value) || value.v !== 1) return false;
  return (
    (value.anchor === null || isAnchor(value.anchor)) &&
    typeof value.established === 'boolean' &&
    typeof value.afterCompaction === 'boolean' &&
    typeof value.afterSwitch === 'boolean' &&
    (value.afterShrink === undefined || typeof value.afterShrink === 'boolean') &&
    (value.window === null || isLossWindow(value.window)) &&
    (value.previous === null || isIdentity(value.previous)) &&
    (value.missing === undefined || value.missing === 'no-usage' || value.missing === 'suspect-usage' || value.missing === 'usage-unsupported') &&
    (value.change === undefined || isChange(value.change)) &&
    (value.calibration === undefined || isCalibrationState(value.calibration))
  );
}

function isAnchor(value: unknown): value is Anchor {
  return isRecord(value) && isCount(value.real) && isCount(value.est) && isIdentity(value.identity) && (value.mark === undefined || isMark(value.mark));
}

function isMark(value: unknown): value is PayloadMark {
  return isRecord(value) && typeof value.epoch === 'string' && isCount(value.messages) && isPartMark(value.system) && isPartMark(value.tools);
}

function isPartMark(value: unknown): value is PartMark {
  return isRecord(value) && typeof value.key === 'string' && isCount(value.tokens) && Array.isArray(value.features) && value.features.every(isCount);
}

function isLossWindow(value: unknown): value is LossWindow {
  return (
    isRecord(value) &&
    (value.id === undefined || typeof value.id === 'string') &&
    isRecord(value.openedBy) &&
    isReason(value.openedBy.reason) &&
    isIdentity(value.openedBy) &&
    Array.isArray(value.reasons) &&
    value.reasons.every(isReason) &&
    typeof value.warned === 'boolean' &&
    isCount(value.maxEst) &&
    isCount(value.requests)
  );
}

function isChange(value: unknown): value is AnchorChange {
  return (
    isRecord(value) &&
    (value.kind === 'shrunk' || value.kind === 'dropped') &&
    isCount(value.removed) &&
    Array.isArray(value.parts) &&
    value.parts.every((part) => part === 'system' || part === 'tools') &&
    typeof value.at === 'string'
  );
}

function isIdentity(value: unknown): value is Identity {
  return isRecord(value) && typeof value.provider === 'string' && typeof value.model === 'string';
}

function isReason(value: unknown): value is LossReason {
  return LOSS_REASONS.includes(value as LossReason);
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}
