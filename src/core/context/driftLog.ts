import { appendJsonLine, isoNow, JsonlTail } from '../jsonl';
import type { AnchorDriftRecord, AnchorLossRecord, DriftEvent, DriftRecord, DriftSink, DriftTotals } from './driftEvents';
import { Tally, type OpenWindow } from './tally';

/** What the drift view shows. */
export interface DriftRead {
  /** Valid events in file order. */
  readonly events: DriftRecord[];
  /** Counted from the events (see tally.ts for what each counts). */
  readonly totals: DriftTotals;
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

  constructor(
    readonly file: string,
    private readonly clock: () => Date = () => new Date(),
  ) {
    this.tail = new JsonlTail(file);
  }

  record(event: DriftEvent): void {
    const ts = isoNow(this.clock);
    if (event.event === 'anchor_loss') {
      const line: AnchorLossRecord = { v: 1, ...event, ts };
      appendJsonLine(this.file, line);
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
      const { totals, open } = this.tally.result();
      this.read = { events: [...this.events], totals, open };
    }
    // A line still being written (or cut short for good) counts as skipped while it is incomplete, as a whole read would count it.
    return { ...this.read, skipped: this.skipped + (pending ? 1 : 0) };
  }

  /** Counts the lines appended since the last read; returns whether the file ends in an incomplete line. */
  private catchUp(): boolean {
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
      } else this.skipped++;
    }
    this.skipped += read.skipped.length;
    if (read.restarted || read.records.length > 0 || read.skipped.length > 0) this.read = undefined;
    return read.pending;
  }
}

/** The whole file, read once. */
export function readDriftFile(file: string): DriftRead {
  return new DriftLog(file).readDrift();
}

export function isDriftRecord(value: unknown): value is DriftRecord {
  if (!isRecord(value) || value.v !== 1 || typeof value.ts !== 'string' || typeof value.session !== 'string') return false;
  if (typeof value.model !== 'string' || typeof value.provider !== 'string' || !isNumber(value.est)) return false;
  if (value.event === 'anchor_loss') return value.reason === 'no-usage' || value.reason === 'switch';
  if (value.event !== 'anchor_drift') return false;
  return (
    typeof value.loss_model === 'string' &&
    typeof value.loss_provider === 'string' &&
    isNumber(value.real) &&
    isNumber(value.delta) &&
    isNumber(value.window_max_est) &&
    isNumber(value.window_requests)
  );
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
