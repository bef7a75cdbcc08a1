import * as fs from 'node:fs';
import { appendJsonLine, isoNow, JsonlTail } from '../jsonl';
import { LOSS_REASONS, type AnchorDriftRecord, type DriftEvent, type DriftRecord, type DriftSink, type DriftSummary, type DriftTotals } from './driftEvents';
import { Tally, type LoggedWindow, type OpenWindow } from './tally';
import { isRecord } from '../text';

/** What the drift view shows. */
export interface DriftRead {
  /** Valid events in file order. */
  readonly events: DriftRecord[];
  /** Counted from the events (see tally.ts for what each counts). */
  readonly totals: DriftTotals;
  /** The totals with switches counted apart from losses: what the gauge and the drift view show. */
  readonly summary: DriftSummary;
  /** Per session, the last window not closed by an `anchor_drift`. */
  readonly open: OpenWindow[];
  /** Lines skipped: not JSON, cut short, or not a drift event of version 1. */
  readonly skipped: number;
}

/**
 * `drift.jsonl`, through the durable JSONL module. Every line has `"v": 1`
 * and an ISO-8601 UTC `ts`. An `anchor_drift` line carries the totals as they
 * stand after it, counted over the whole file at write time, so two windows
 * appending to one file and a restart all continue the same count.
 *
 * The file is read whole once; after that each read takes only the lines
 * appended since (by this window or another), so closing a window costs the
 * new lines, not a replay of the file (docs/architecture.md, "Sessions").
 */
export class DriftLog implements DriftSink {
  private readonly tail: JsonlTail<unknown>;
  private tally = new Tally();
  private events: DriftRecord[] = [];
  private skipped = 0;
  /** The last read, until the file changes (the gauge's tooltip asks often). */
  private read: Omit<DriftRead, 'skipped'> | undefined;
  /** Size, inode and mtime at the last read: one stat tells whether anything was appended since. */
  private seen = '';
  private pendingTail = false;

  constructor(
    readonly file: string,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.tail = new JsonlTail(file);
  }

  record(event: DriftEvent): void {
    const ts = isoNow(this.clock);
    if (event.event !== 'anchor_drift') {
      appendJsonLine(this.file, { v: 1, ...event, ts });
      return;
    }
    // Counted on a copy: the line itself is counted when a later read finds it in the file.
    this.catchUp();
    const tally = this.tally.copy();
    const withoutTotals = { v: 1 as const, ...event, ts };
    tally.add({ ...withoutTotals, totals: tally.totals });
    const line: AnchorDriftRecord = { ...withoutTotals, totals: tally.totals };
    appendJsonLine(this.file, line);
  }

  readDrift(): DriftRead {
    const pending = this.catchUp();
    if (!this.read) {
      const { totals, summary, open } = this.tally.result();
      this.read = { events: [...this.events], totals, summary, open };
    }
    // A line still being written (or cut short for good) counts as skipped while it is incomplete, as a whole read would count it.
    return { ...this.read, skipped: this.skipped + (pending ? 1 : 0) };
  }

  /** The newest window of a session as the file tells it: a gate reopening the session reconciles with it. */
  windowOf(session: string): LoggedWindow | undefined {
    this.catchUp();
    return this.tally.windowOf(session);
  }

  /** Counts the lines appended since the last read; returns whether the file ends in an incomplete line. */
  private catchUp(): boolean {
    // The gauge asks on every request: a file unchanged since the last read costs one stat, not an open and a read.
    const stat = fs.statSync(this.file, { throwIfNoEntry: false });
    const seen = stat ? `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}` : 'none';
    if (seen === this.seen) return this.pendingTail;
    this.seen = seen;
    this.pendingTail = this.readTail();
    return this.pendingTail;
  }

  private readTail(): boolean {
    const read = this.tail.read();
    if (read.restarted) {
      this.tally = new Tally();
      this.events = [];
      this.skipped = 0;
    }
    for (const record of read.records) {
      if (isDriftRecord(record)) {
        this.events.push(record);
        this.tally.add(record);
      } else if (!isOtherEvent(record)) this.skipped++;
    }
    this.skipped += read.skipped.length;
    if (read.restarted || read.records.length > 0 || read.skipped.length > 0) this.read = undefined;
    return read.pending;
  }
}

export function isDriftRecord(value: unknown): value is DriftRecord {
  if (!isRecord(value) || value.v !== 1 || typeof value.ts !== 'string' || typeof value.session !== 'string') return false;
  if (typeof value.model !== 'string' || typeof value.provider !== 'string' || !isNumber(value.est)) return false;
  // Lines written before windows had ids have no `window`.
  if (value.window !== undefined && typeof value.window !== 'string') return false;
  if (value.event === 'anchor_loss') return isReason(value.reason);
  const windowFields = isNumber(value.window_max_est) && isNumber(value.window_requests);
  if (value.event === 'anchor_loss_open') {
    return (
      typeof value.window === 'string' &&
      isReason(value.reason) &&
      Array.isArray(value.reasons) &&
      value.reasons.every(isReason) &&
      typeof value.warned === 'boolean' &&
      windowFields &&
      isNumberList(value.window_ests)
    );
  }
  if (value.event !== 'anchor_drift') return false;
  return (
    typeof value.loss_model === 'string' &&
    typeof value.loss_provider === 'string' &&
    isNumber(value.real) &&
    isNumber(value.delta) &&
    windowFields &&
    (value.window_ests === undefined || isNumberList(value.window_ests))
  );
}

/** A well-formed line of an event the tally does not count (`count_mismatch`, or one of a later version): skipped, never corrupt. */
function isOtherEvent(value: unknown): boolean {
  if (!isRecord(value) || value.v !== 1 || typeof value.ts !== 'string' || typeof value.event !== 'string') return false;
  return !['anchor_loss', 'anchor_loss_open', 'anchor_drift'].includes(value.event);
}

function isReason(value: unknown): boolean {
  return LOSS_REASONS.includes(value as never);
}

function isNumberList(value: unknown): boolean {
  return Array.isArray(value) && value.every(isNumber);
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
