import * as fs from 'node:fs';
import { appendJsonLine, isoNow, readJsonLines } from '../jsonl';
import type { AnchorDriftRecord, AnchorLossRecord, DriftEvent, DriftRecord, DriftSink, DriftTotals } from './driftEvents';
import { Tally, type OpenWindow } from './tally';

/** What the drift view shows. */
export interface DriftRead {
  /** Valid events in file order. */
  readonly events: DriftRecord[];
  /** Recomputed from the events (see tally.ts for what each counts). */
  readonly totals: DriftTotals;
  /** Per session, the last window not closed by an `anchor_drift`. */
  readonly open: OpenWindow[];
  /** Lines skipped: not JSON, cut short, or not a drift event of version 1. */
  readonly skipped: number;
}

/**
 * `drift.jsonl`, through the durable JSONL module. Every line has `"v": 1`
 * and an ISO-8601 UTC `ts`. An `anchor_drift` line carries the totals as they
 * stand after it, recomputed from the file at write time, so two windows
 * appending to one file and a restart all continue the same count.
 */
export class DriftLog implements DriftSink {
  private cache: { size: number; mtimeMs: number; read: DriftRead } | undefined;

  constructor(
    readonly file: string,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  record(event: DriftEvent): void {
    const ts = isoNow(this.clock);
    if (event.event === 'anchor_loss') {
      const line: AnchorLossRecord = { v: 1, ...event, ts };
      appendJsonLine(this.file, line);
      return;
    }
    const tally = replay(readDriftFile(this.file).events);
    const withoutTotals = { v: 1 as const, ...event, ts };
    tally.add({ ...withoutTotals, totals: tally.totals });
    const line: AnchorDriftRecord = { ...withoutTotals, totals: tally.totals };
    appendJsonLine(this.file, line);
  }

  /** Reads the file again only when it changed (the gauge's tooltip asks often). */
  readDrift(): DriftRead {
    let stat: fs.Stats | undefined;
    try {
      stat = fs.statSync(this.file);
    } catch {
      stat = undefined;
    }
    const cached = this.cache;
    if (stat && cached && cached.size === stat.size && cached.mtimeMs === stat.mtimeMs) return cached.read;
    const read = readDriftFile(this.file);
    this.cache = stat ? { size: stat.size, mtimeMs: stat.mtimeMs, read } : undefined;
    return read;
  }
}

export function readDriftFile(file: string): DriftRead {
  const { records, skipped } = readJsonLines<unknown>(file);
  const events = records.filter(isDriftRecord);
  const tally = replay(events);
  const { totals, open } = tally.result();
  return { events, totals, open, skipped: skipped.length + records.length - events.length };
}

function replay(events: readonly DriftRecord[]): Tally {
  const tally = new Tally();
  for (const event of events) tally.add(event);
  return tally;
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
