/**
 * The events of `drift.jsonl`, named and shaped as "The contract" fixes them.
 * The gate produces them; the DriftLog adds `v`, `ts` and, on a drift, the
 * running totals.
 */

/** Who a request went to: `(provider slug, model)`. */
export interface Identity {
  readonly provider: string;
  readonly model: string;
}

export type LossReason = 'no-usage' | 'switch';

/** model and provider: the identity that went silent (no-usage) or was left (switch). */
export interface AnchorLossEvent {
  readonly event: 'anchor_loss';
  readonly session: string;
  readonly reason: LossReason;
  readonly model: string;
  readonly provider: string;
  /** Local estimate of the payload at the moment the loss was recorded. */
  readonly est: number;
}

export interface AnchorDriftEvent {
  readonly event: 'anchor_drift';
  readonly session: string;
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
}

export type DriftEvent = AnchorLossEvent | AnchorDriftEvent;

/** Where the gate writes its events; the only I/O the gate does. */
export interface DriftSink {
  record(event: DriftEvent): void;
}

/** Totals as they stand after an event; see tally.ts for what each counts. */
export interface DriftTotals {
  readonly windows: number;
  readonly warned: number;
  readonly drifts: number;
  readonly abs_delta_sum: number;
}

export type AnchorLossRecord = AnchorLossEvent & { readonly v: 1; readonly ts: string };
export type AnchorDriftRecord = AnchorDriftEvent & {
  readonly v: 1;
  readonly ts: string;
  readonly totals: DriftTotals;
};
export type DriftRecord = AnchorLossRecord | AnchorDriftRecord;

/** A sink that keeps events in memory (the gate's preview, and tests). */
export class MemoryDriftSink implements DriftSink {
  readonly events: DriftEvent[] = [];
  record(event: DriftEvent): void {
    this.events.push(event);
  }
}
