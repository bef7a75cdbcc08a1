import type { Identity, LossReason } from './driftEvents';

/** A real count and the local estimate of exactly the messages it measured. */
export interface Anchor {
  readonly real: number;
  readonly est: number;
  readonly identity: Identity;
}

/** Open from an anchor loss until the next completed request with usage. */
export interface LossWindow {
  /** The loss that opened it: for a switch, the identity that was left. */
  readonly openedBy: { readonly reason: LossReason } & Identity;
  /** Reasons already logged: at most one `anchor_loss` of each. */
  readonly reasons: readonly LossReason[];
  /** Whether it warns (a `no-usage` loss was logged). */
  readonly warned: boolean;
  /** Largest estimate of a payload sent while open. */
  readonly maxEst: number;
  /** Requests sent while open. */
  readonly requests: number;
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
  /** One-shot: the next completed request follows a compaction. */
  readonly afterCompaction: boolean;
  /** One-shot: the next completed request follows a switch. */
  readonly afterSwitch: boolean;
  readonly window: LossWindow | null;
  /** Identity of the session's previous request; a different one is a switch. */
  readonly previous: Identity | null;
}

export function initialGateState(): GateState {
  return { v: 1, anchor: null, established: false, afterCompaction: false, afterSwitch: false, window: null, previous: null };
}

export function sameIdentity(a: Identity, b: Identity): boolean {
  return a.provider === b.provider && a.model === b.model;
}

/** Validates state read back from a session file (untrusted JSON). */
export function isGateState(value: unknown): value is GateState {
  if (!isRecord(value) || value.v !== 1) return false;
  return (
    (value.anchor === null || isAnchor(value.anchor)) &&
    typeof value.established === 'boolean' &&
    typeof value.afterCompaction === 'boolean' &&
    typeof value.afterSwitch === 'boolean' &&
    (value.window === null || isLossWindow(value.window)) &&
    (value.previous === null || isIdentity(value.previous))
  );
}

function isAnchor(value: unknown): value is Anchor {
  return isRecord(value) && isCount(value.real) && isCount(value.est) && isIdentity(value.identity);
}

function isLossWindow(value: unknown): value is LossWindow {
  return (
    isRecord(value) &&
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

function isIdentity(value: unknown): value is Identity {
  return isRecord(value) && typeof value.provider === 'string' && typeof value.model === 'string';
}

function isReason(value: unknown): value is LossReason {
  return value === 'no-usage' || value === 'switch';
}

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value) && value >= 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
