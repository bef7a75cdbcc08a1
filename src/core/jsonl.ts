import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * Durable JSON-lines files. Every JSONL file of Candor goes through here.
 *
 * Appends are one `write` of one whole line on a descriptor opened with
 * O_APPEND, so two processes appending at once interleave whole lines and
 * never tear each other's bytes (lines stay well under PIPE_BUF-independent
 * limits because O_APPEND writes to regular files are atomic per call on
 * Linux and macOS local filesystems).
 *
 * Reads are tolerant: a line that is not JSON, not an object, or cut short is
 * skipped and counted; nothing is ever removed from the file.
 */

export interface SkippedLine {
  readonly lineNumber: number;
  readonly reason: 'not-json' | 'not-object' | 'truncated';
  readonly preview: string;
}

export interface JsonlRead<T> {
  readonly records: T[];
  readonly skipped: SkippedLine[];
}

export interface AppendOptions {
  /** fsync after the write; on by default: these are records a user relies on. */
  readonly sync?: boolean;
}

export function appendJsonLine(file: string, record: object, options: AppendOptions = {}): void {
  const line = JSON.stringify(record);
  if (line.includes('\n')) {
    // JSON.stringify never emits a raw newline; guard against a future change.
    throw new Error('refusing to append a record that serializes across lines');
  }
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const fd = fs.openSync(file, 'a+');
  try {
    const prefix = needsLeadingNewline(fd) ? '\n' : '';
    fs.writeSync(fd, prefix + line + '\n');
    if (options.sync !== false) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A file whose last byte is not a newline ends in a truncated line (a crash
 * mid-write, or a writer of another program). Starting our line on a fresh
 * line keeps that damage to one skipped line instead of corrupting ours too.
 */
function needsLeadingNewline(fd: number): boolean {
  const size = fs.fstatSync(fd).size;
  if (size === 0) return false;
  const last = Buffer.alloc(1);
  fs.readSync(fd, last, 0, 1, size - 1);
  return last[0] !== 0x0a;
}

export function readJsonLines<T = Record<string, unknown>>(file: string): JsonlRead<T> {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], skipped: [] };
    throw err;
  }
  return parseJsonLines<T>(text);
}

export function parseJsonLines<T = Record<string, unknown>>(text: string): JsonlRead<T> {
  const records: T[] = [];
  const skipped: SkippedLine[] = [];
  const lines = text.split('\n');
  const endsWithNewline = text.endsWith('\n');
  lines.forEach((raw, index) => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    const isLast = index === lines.length - 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      skipped.push({
        lineNumber: index + 1,
        reason: isLast && !endsWithNewline ? 'truncated' : 'not-json',
        preview: line.slice(0, 80),
      });
      return;
    }
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      skipped.push({ lineNumber: index + 1, reason: 'not-object', preview: line.slice(0, 80) });
      return;
    }
    records.push(value as T);
  });
  return { records, skipped };
}

/** ISO-8601 UTC timestamp, the `ts` of every record. */
export function isoNow(clock: () => Date = () => new Date()): string {
  return clock().toISOString();
}
