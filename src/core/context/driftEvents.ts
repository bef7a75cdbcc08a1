import type { LoggedWindow } from './tally';

/**
 * The events of `drift.jsonl`, named and shaped as "The contract" fixes them.
 * The gate produces them; the DriftLog adds `v`, `ts` and, on a drift, the
 * running totals.
 */

/**
 * `no-usage`: a completed request reported no usage; `switch`: the identity
 * changed; `suspect-usage`: the reported count was below half the local
 * estimate or equal to the server's window (a truncated or under-counted
 * prompt), so it is not an anchor.
 */
export type LossReason = 'no-usage' | 'switch' | 'suspect-usage';

export const LOSS_REASONS: readonly LossReason[] = ['no-usage', 'switch', 'suspect-usage'];

/** model and provider: the identity that went silent (no-usage) or was left (switch). */
export interface AnchorLossEvent {
  readonly event: 'anchor_loss';
  readonly session: string;
  /** The loss window this loss opened or joined. */
  readonly window: string;
  readonly reason: LossReason;
  readonly model: string;
  readonly provider: string;
  /** Local estimate of the payload at the moment the loss was recorded. */
  readonly est: number;
}

export interface AnchorDriftEvent {
  readonly event: 'anchor_drift';
  readonly session: string;
  /** The window this measurement closes. */
  readonly window: string;
  /** The identity that re-anchored. */
  readonly model: string;
  readonly provider: string;
  /** The identity of the event that opened the window. */
  readonly loss_model: string;
  readonly loss_provider: string;
  readonly real: number;
  readonly est: number;
  /** real - est. */
  readonly delta: number;
  /** Largest estimate of a payload sent while the window was open. */
  readonly window_max_est: number;
  /** Requests sent while the window was open, the re-anchoring one included. */
  readonly window_requests: number;
  /** The estimate of each of the newest 1,000 of those requests, oldest first (since the last restart). */
  readonly window_ests: readonly number[];
  /** The half-width of the band around `est`, in tokens (0: an exact count), and whether `real` fell inside `est ± band`. */
  readonly band: number;
  readonly held: boolean;
}

/**
 * A count claimed exact (the server's own, or the family's tokenizer with its
 * template) that the provider's usage did not match to the token: from now
 * on that source is an estimate with a band (docs/architecture.md, "Bands").
 * Not an anchor, not in `totals`.
 */
export interface CountMismatchEvent {
  readonly event: 'count_mismatch';
  readonly session: string;
  readonly model: string;
  readonly provider: string;
  /** `server`: the server's count endpoint; `tokenizer`: the family's tokenizer and template. */
  readonly source: 'server' | 'tokenizer';
  /** The tokenizer, or the server's kind of count. */
  readonly counter: string;
  readonly real: number;
  /** What Candor projected for the request, its claimed exact count; `est`: the local estimate of the payload. */
  readonly projected: number;
  readonly est: number;
}

/**
 * A window still open when its session ends or the extension stops: its
 * evidence so far. It neither opens nor closes a window in the totals; the
 * window goes on when the session is opened again.
 */
export interface AnchorLossOpenEvent {
  readonly event: 'anchor_loss_open';
  readonly session: string;
  readonly window: string;
  /** The loss that opened the window, and its identity. */
  readonly reason: LossReason;
  readonly model: string;
  readonly provider: string;
  /** Every reason the window holds, and whether it warned. */
  readonly reasons: readonly LossReason[];
  readonly warned: boolean;
  /** The latest estimate sent in the window. */
  readonly est: number;
  readonly window_max_est: number;
  readonly window_requests: number;
  readonly window_ests: readonly number[];
}

/**
 * A provider refused a request as too large for its window: a measurement
 * (its count and its window, when its error says them), and what Candor did
 * about it. Not an anchor: it opens or closes no loss window and is not in
 * the totals; readers that do not know it skip it.
 */
export interface OverflowEvent {
  readonly event: 'overflow';
  readonly session: string;
  readonly model: string;
  readonly provider: string;
  /** Candor's projection of the request it sent. */
  readonly projected: number;
  /** The local estimate of that payload, as in the anchor events. */
  readonly est: number;
  /** The provider's count of the prompt and its window, from its error; null when it said none. */
  readonly real: number | null;
  readonly window: number | null;
  /** Which known error shape matched (src/core/provider/overflow.ts). */
  readonly parser: string;
  readonly action: 'compacted-and-retried' | 'stopped';
}

export type DriftEvent = AnchorLossEvent | AnchorDriftEvent | AnchorLossOpenEvent | OverflowEvent | CountMismatchEvent;

/** Where the gate writes its events; the only I/O the gate does. */
export interface DriftSink {
  record(event: DriftEvent): void;
  /** The newest window of a session as the log tells it, for a gate reopening the session (reconcile.ts). */
  windowOf?(session: string): LoggedWindow | undefined;
}

/** Totals as they stand after an event; see tally.ts for what each counts. */
export interface DriftTotals {
  readonly windows: number;
  readonly warned: number;
  readonly drifts: number;
  readonly abs_delta_sum: number;
}

/**
 * The totals, with the windows a switch opened counted apart from those that
 * lost a count (tally.ts): what the gauge and the drift view show. Never
 * written: `drift.jsonl`'s `totals` keep their four fields.
 */
export interface DriftSummary extends DriftTotals {
  readonly switches: number;
  readonly losses: number;
}

/** Lines written before windows had ids lack `window`. */
export type AnchorLossRecord = Omit<AnchorLossEvent, 'window'> & { readonly window?: string; readonly v: 1; readonly ts: string };
export type AnchorLossOpenRecord = AnchorLossOpenEvent & { readonly v: 1; readonly ts: string };
export type AnchorDriftRecord = Omit<AnchorDriftEvent, 'window' | 'window_ests' | 'band' | 'held'> & {
  readonly window?: string;
  readonly window_ests?: readonly number[];
  /** Absent in lines written before bands. */
  readonly band?: number;
  readonly held?: boolean;
  readonly v: 1;
  readonly ts: string;
  readonly totals: DriftTotals;
};
export type DriftRecord = AnchorLossRecord | AnchorDriftRecord | AnchorLossOpenRecord;

