import * as fs from 'node:fs';
import { parseJsonLines } from '../jsonl';
import { isSessionRecord, type SessionRecord } from './records';

/** Characters parsed between two yields to the event loop (about a millisecond of JSON.parse). */
const SLICE_CHARS = 256 * 1024;

export interface LoadedRecords {
  readonly records: SessionRecord[];
  /** Lines that are not session records: not JSON, cut short, or of another shape. */
  readonly skipped: number;
}

/**
 * Every record of a session file, read off the caller's thread and parsed in
 * slices that yield to the event loop between them, so that a long session
 * is taken in while the extension host goes on answering (docs/architecture.md,
 * "Sessions"). The result is what `readJsonLines` gives for the same file.
 */
export async function loadSessionRecords(file: string): Promise<LoadedRecords> {
  let text: string;
  try {
    text = await fs.promises.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { records: [], skipped: 0 };
    throw err;
  }
  const records: SessionRecord[] = [];
  let skipped = 0;
  for (let from = 0; from < text.length; ) {
    // Slices end after a newline, so each line is parsed whole, as the full read would.
    const newline = text.indexOf('\n', Math.min(text.length, from + SLICE_CHARS));
    const to = newline === -1 ? text.length : newline + 1;
    const slice = parseJsonLines(text.slice(from, to));
    skipped += slice.skipped.length;
    for (const record of slice.records) {
      if (isSessionRecord(record)) records.push(record);
      else skipped++;
    }
    from = to;
    if (from < text.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return { records, skipped };
}
