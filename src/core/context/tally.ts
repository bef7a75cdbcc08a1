import type { AnchorDriftRecord, AnchorLossOpenRecord, AnchorLossRecord, DriftRecord, DriftSummary, DriftTotals, LossReason } from './driftEvents';

/**
 * Totals are counted from the events in the file, in file order, never kept
 * in a counter of one process alone, so that they continue across restarts
 * and agree between two windows (processes) appending to the same file. The
 * drift log feeds a Tally each line once, as the file grows.
 *
 * - `windows`: loss windows opened. A window is known by its id: the first
 *   `anchor_loss` of an id opens it, later ones join it, so a window the gate
 *   carried over a restart is never counted twice. (Lines written before
 *   windows had ids: an `anchor_loss` opens one unless it is the `no-usage`
 *   loss joining an open window of the same session that has none yet.)
 *   A `switch` always opens a new window: it drops the open one.
 * - `warned`: windows that warned, i.e. their `no-usage` loss (at most one each).
 * - `drifts`: `anchor_drift` events, i.e. windows closed by a measurement.
 * - `abs_delta_sum`: the sum of |delta| over those events, in tokens.
 *
 * Shown beside them, never written to the file (`DriftSummary`), from the
 * reasons of each window's `anchor_loss` lines:
 * - `switches`: windows a `switch` opened (the model or provider changed:
 *   the next reply re-anchors; nothing was lost);
 * - `losses`: windows that hold a `no-usage` or `suspect-usage` loss (a reply
 *   brought no count, or one too low to trust), whether a switch opened them
 *   or not.
 *
 * `anchor_loss_open` (a window still open when its session ended or the
 * extension stopped) neither opens nor closes a window: it only records the
 * window's evidence so far.
 */
/** A loss window not (yet) closed by an `anchor_drift`. */
export interface OpenWindow {
  readonly session: string;
  readonly window?: string;
  /** The losses it holds, the opening one first. */
  readonly losses: AnchorLossRecord[];
  readonly warned: boolean;
  /** The evidence written when its session last ended with it open. */
  readonly lastOpen?: AnchorLossOpenRecord;
}

/** The newest window of a session, as the log tells it: what a gate reopening the session reconciles with. */
export type LoggedWindow =
  | { readonly state: 'open'; readonly window: OpenWindow }
  | { readonly state: 'closed'; readonly window: string | undefined; readonly drift: AnchorDriftRecord };

export interface DriftTally {
  readonly totals: DriftTotals;
  /** The totals with the windows of switches counted apart from those of losses. */
  readonly summary: DriftSummary;
  /** Per session, the window still open at the end of the events. */
  readonly open: OpenWindow[];
}

interface MutableWindow {
  id: string | undefined;
  losses: AnchorLossRecord[];
  reasons: Set<LossReason>;
  lastOpen?: AnchorLossOpenRecord;
}

/** Counts the events in file order. */
export class Tally {
  private windows = 0;
  private warned = 0;
  private drifts = 0;
  private absDeltaSum = 0;
  private switches = 0;
  private losses = 0;
  private readonly openBySession = new Map<string, MutableWindow>();
  private readonly closedBySession = new Map<string, AnchorDriftRecord>();
  private readonly seen = new Set<string>();

  add(record: DriftRecord): void {
    if (record.event === 'anchor_drift') {
      this.drifts++;
      this.absDeltaSum += Math.abs(record.delta);
      this.openBySession.delete(record.session);
      this.closedBySession.set(record.session, record);
      return;
    }
    const open = this.openBySession.get(record.session);
    if (record.event === 'anchor_loss_open') {
      if (open && open.id === record.window) open.lastOpen = record;
      return;
    }
    if (record.window !== undefined) this.addWithId(record, record.window, open);
    else this.addLegacy(record, open);
  }

  /** An independent tally at the same point, to count an event that is not in the file yet. */
  copy(): Tally {
    const copy = new Tally();
    copy.windows = this.windows;
    copy.warned = this.warned;
    copy.drifts = this.drifts;
    copy.absDeltaSum = this.absDeltaSum;
    copy.switches = this.switches;
    copy.losses = this.losses;
    for (const [session, window] of this.openBySession) {
      copy.openBySession.set(session, { ...window, losses: [...window.losses], reasons: new Set(window.reasons) });
    }
    for (const [session, drift] of this.closedBySession) copy.closedBySession.set(session, drift);
    for (const id of this.seen) copy.seen.add(id);
    return copy;
  }

  get totals(): DriftTotals {
    return { windows: this.windows, warned: this.warned, drifts: this.drifts, abs_delta_sum: this.absDeltaSum };
  }

  get summary(): DriftSummary {
    return { ...this.totals, switches: this.switches, losses: this.losses };
  }

  result(): DriftTally {
    return { totals: this.totals, summary: this.summary, open: [...this.openBySession].map(([session, window]) => openView(session, window)) };
  }

  /** The newest window of a session: open, or closed by its drift. */
  windowOf(session: string): LoggedWindow | undefined {
    const open = this.openBySession.get(session);
    if (open) return { state: 'open', window: openView(session, open) };
    const drift = this.closedBySession.get(session);
    return drift ? { state: 'closed', window: drift.window, drift } : undefined;
  }

  private addWithId(record: AnchorLossRecord, id: string, open: MutableWindow | undefined): void {
    // A window an earlier version opened (no id) and this one carried on: the id names it from now on.
    if (!this.seen.has(id) && open && open.id === undefined && record.reason !== 'switch' && !open.reasons.has(record.reason)) {
      this.seen.add(id);
      open.id = id;
    }
    if (!this.seen.has(id)) {
      this.seen.add(id);
      this.windows++;
      if (record.reason === 'no-usage') this.warned++;
      const window = { id, losses: [], reasons: new Set<LossReason>() };
      this.join(window, record);
      this.openBySession.set(record.session, window);
      return;
    }
    // A window the tally has closed (or another session's) is not reopened by a late line.
    if (!open || open.id !== id || open.reasons.has(record.reason)) return;
    if (record.reason === 'no-usage') this.warned++;
    this.join(open, record);
  }

  /** A loss into its window; a window counts once as a switch (its opening) and once as a loss (its first no-usage or suspect-usage). */
  private join(window: MutableWindow, record: AnchorLossRecord): void {
    const lost = (reasons: Set<LossReason>): boolean => reasons.has('no-usage') || reasons.has('suspect-usage');
    if (window.losses.length === 0 && record.reason === 'switch') this.switches++;
    if (record.reason !== 'switch' && !lost(window.reasons)) this.losses++;
    window.losses.push(record);
    window.reasons.add(record.reason);
  }

  private addLegacy(record: AnchorLossRecord, open: MutableWindow | undefined): void {
    if (record.reason === 'no-usage') this.warned++;
    const joins = record.reason === 'no-usage' && open !== undefined && open.id === undefined && !open.reasons.has('no-usage');
    if (joins) {
      this.join(open, record);
      return;
    }
    this.windows++;
    const window = { id: undefined, losses: [], reasons: new Set<LossReason>() };
    this.join(window, record);
    this.openBySession.set(record.session, window);
  }
}

function openView(session: string, window: MutableWindow): OpenWindow {
  return {
    session,
    ...(window.id !== undefined ? { window: window.id } : {}),
    losses: window.losses,
    warned: window.reasons.has('no-usage'),
    ...(window.lastOpen ? { lastOpen: window.lastOpen } : {}),
  };
}

