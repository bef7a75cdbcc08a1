import type { AnchorLossRecord, DriftRecord, DriftTotals, LossReason } from './driftEvents';

/**
 * Totals are counted from the events in the file, in file order, never kept
 * in a counter of one process alone, so that they continue across restarts
 * and agree between two windows (processes) appending to the same file. The
 * drift log feeds a Tally each line once, as the file grows.
 *
 * - `windows`: loss windows opened. An `anchor_loss` opens one unless it is
 *   the `no-usage` loss joining an open window of the same session that
 *   has none yet (a switch window whose first request completed without
 *   usage). A `switch` always opens a new window: it drops the open one.
 * - `warned`: windows that warned, i.e. `anchor_loss` events of reason
 *   `no-usage` (a window holds at most one).
 * - `drifts`: `anchor_drift` events, i.e. windows closed by a measurement.
 * - `abs_delta_sum`: the sum of |delta| over those events, in tokens.
 */
export const ZERO_TOTALS: DriftTotals = { windows: 0, warned: 0, drifts: 0, abs_delta_sum: 0 };

/** A loss window not (yet) closed by an `anchor_drift`. */
export interface OpenWindow {
  readonly session: string;
  /** The losses it holds, the opening one first. */
  readonly losses: AnchorLossRecord[];
  readonly warned: boolean;
}

export interface DriftTally {
  readonly totals: DriftTotals;
  /** Per session, the window still open at the end of the events. */
  readonly open: OpenWindow[];
}

interface MutableWindow {
  losses: AnchorLossRecord[];
  reasons: Set<LossReason>;
}

/** Counts the events in file order. */
export class Tally {
  private windows = 0;
  private warned = 0;
  private drifts = 0;
  private absDeltaSum = 0;
  private readonly openBySession = new Map<string, MutableWindow>();

  add(record: DriftRecord): void {
    if (record.event === 'anchor_drift') {
      this.drifts++;
      this.absDeltaSum += Math.abs(record.delta);
      this.openBySession.delete(record.session);
      return;
    }
    if (record.reason === 'no-usage') this.warned++;
    const open = this.openBySession.get(record.session);
    const joins = record.reason === 'no-usage' && open !== undefined && !open.reasons.has('no-usage');
    if (joins) {
      open.losses.push(record);
      open.reasons.add(record.reason);
      return;
    }
    this.windows++;
    this.openBySession.set(record.session, { losses: [record], reasons: new Set([record.reason]) });
  }

  /** An independent tally at the same point, to count an event that is not in the file yet. */
  copy(): Tally {
    const copy = new Tally();
    copy.windows = this.windows;
    copy.warned = this.warned;
    copy.drifts = this.drifts;
    copy.absDeltaSum = this.absDeltaSum;
    for (const [session, window] of this.openBySession) {
      copy.openBySession.set(session, { losses: [...window.losses], reasons: new Set(window.reasons) });
    }
    return copy;
  }

  get totals(): DriftTotals {
    return { windows: this.windows, warned: this.warned, drifts: this.drifts, abs_delta_sum: this.absDeltaSum };
  }

  result(): DriftTally {
    const open = [...this.openBySession].map(([session, window]) => ({
      session,
      losses: window.losses,
      warned: window.reasons.has('no-usage'),
    }));
    return { totals: this.totals, open };
  }
}

export function tallyDrift(records: readonly DriftRecord[]): DriftTally {
  const tally = new Tally();
  for (const record of records) tally.add(record);
  return tally.result();
}
