import * as fs from 'node:fs';
import { Transcript, type TranscriptEntry } from './transcript';
import { contentText } from '../messages';
import { assertNever } from '../assertNever';
import { isSessionRecord, type SessionRecord } from './records';
import { linesBackward, withFile } from './reverseReader';
import { HEAD_BYTES } from './listing';

/** Entries the chat shows when a session opens, and each page of older ones after. */
export const PAGE_ENTRIES = 200;

/** The newest part of a transcript, and whether older entries exist. */
export interface TranscriptPage {
  readonly entries: readonly TranscriptEntry[];
  /** Entries older than the first one exist. */
  readonly more: boolean;
}

export interface SessionTail extends TranscriptPage {
  /** Lines read that were not session records (not JSON, cut short, or of another shape). */
  readonly skippedLines: number;
  /** Bytes from where reading stopped to the end of the file. */
  readonly bytesRead: number;
}

/**
 * The newest `wanted` transcript entries of a session file, read backwards
 * from its end (docs/architecture.md, "Sessions"): opening a session costs
 * the same whatever its length. Reading goes back to the user message that
 * started the oldest turn it keeps, so every record whose mapping depends on
 * an earlier one (a tool result takes its name from the call) has it, and the
 * entries are exactly those the whole file maps to.
 */
export function readSessionTail(file: string, wanted = PAGE_ENTRIES): SessionTail {
  return withFile(file, { entries: [], more: false, skippedLines: 0, bytesRead: 0 }, (fd) => {
    const newestFirst: SessionRecord[] = [];
    let count = 0;
    let skippedLines = 0;
    let start: number | undefined;
    const size = fs.fstatSync(fd).size;
    for (const line of linesBackward(fd, size)) {
      const record = parseRecord(line.text);
      if (!record) {
        skippedLines++;
        continue;
      }
      newestFirst.push(record);
      start = line.start;
      count += entryCount(record);
      if (count >= wanted && startsTurn(record)) break;
    }
    const more = start !== undefined && start > 0 && olderEntriesIn(fd, start);
    return { entries: entriesOf(newestFirst), more, skippedLines, bytesRead: start === undefined ? 0 : size - start };
  });
}

/** The same page from records in memory (a loaded session): the newest `wanted` entries, back to a turn's start. */
export function newestEntries(records: readonly SessionRecord[], wanted = PAGE_ENTRIES): TranscriptPage {
  const newestFirst: SessionRecord[] = [];
  let count = 0;
  let at = records.length - 1;
  for (; at >= 0; at--) {
    const record = records[at] as SessionRecord;
    newestFirst.push(record);
    count += entryCount(record);
    if (count >= wanted && startsTurn(record)) break;
  }
  let more = false;
  // From the oldest: the first records (meta) have no entries, the next one has.
  for (let i = 0; i < at && !more; i++) more = entryCount(records[i] as SessionRecord) > 0;
  return { entries: entriesOf(newestFirst), more };
}

function entriesOf(newestFirst: readonly SessionRecord[]): TranscriptEntry[] {
  const transcript = new Transcript();
  for (let i = newestFirst.length - 1; i >= 0; i--) transcript.add(newestFirst[i] as SessionRecord);
  return transcript.entries();
}

/** How many entries a record adds to the transcript; the same wherever it is read from. */
export function entryCount(record: SessionRecord): number {
  switch (record.type) {
    case 'message': {
      const m = record.message;
      if (m.role === 'user' || m.role === 'tool') return 1;
      if (m.role !== 'assistant') return 0;
      return (contentText(m) ? 1 : 0) + (m.tool_calls?.length ?? 0);
    }
    // An approval or a proposal is written again as it changes: a page may hold an entry a newer page holds too, and the view keeps the newer.
    case 'partial':
    case 'notice':
    case 'compaction':
    case 'approval':
    case 'proposal':
      return 1;
    case 'meta':
    case 'gate':
      return 0;
    default:
      return assertNever(record, 'session record');
  }
}

/**
 * Whether the file holds entries before byte `end`. Only the first records
 * (the meta ones) hold none, and they are within the head, so only a head
 * is read; past it, there are (a page that comes back empty says otherwise).
 */
function olderEntriesIn(fd: number, end: number): boolean {
  if (end > HEAD_BYTES) return true;
  const head = Buffer.alloc(end);
  const got = fs.readSync(fd, head, 0, end, 0);
  return head.toString('utf8', 0, got).split('\n').some((line) => {
    const record = parseRecord(line);
    return record !== undefined && entryCount(record) > 0;
  });
}

function startsTurn(record: SessionRecord): boolean {
  return record.type === 'message' && record.message.role === 'user';
}

function parseRecord(line: string): SessionRecord | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return isSessionRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

