import * as fs from 'node:fs';
import * as path from 'node:path';
import { contentText } from '../messages';
import { isSessionRecord, type SessionRecord } from './records';
import { linesBackward, withFile } from './reverseReader';

export interface SessionSummary {
  readonly id: string;
  readonly title: string;
  readonly updated: string;
  readonly file: string;
}

/**
 * How much of a session file's start the listing reads. The meta records are
 * written first, the title one just before the first user message, so they
 * are here however long the session grew.
 */
export const HEAD_BYTES = 4096;
/**
 * A session with neither a title record nor a user message within its first
 * HEAD_BYTES: one name wherever a session without a title shows (the chat's
 * header, Open Session).
 */
export const UNTITLED = 'New session';
const TITLE_CHARS = 60;

/** A session's title from the text of its first user message: one line, at most 60 characters. */
export function titleFromText(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, TITLE_CHARS).trimEnd();
}

/**
 * The sessions of `dir`, most recently updated first. Each file costs two
 * small reads, whatever its length: its first HEAD_BYTES (the title) and its
 * last complete line (when it was updated) (docs/architecture.md, "Sessions").
 */
export function listSessions(dir: string): SessionSummary[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  const summaries: SessionSummary[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    try {
      summaries.push(summarizeSession(file));
    } catch {
      // A file that cannot be read is not offered; it is left as it is.
    }
  }
  return summaries.sort((a, b) => b.updated.localeCompare(a.updated));
}

export function summarizeSession(file: string): SessionSummary {
  const id = path.basename(file, '.jsonl');
  return withFile(file, { id, title: UNTITLED, updated: '', file }, (fd) => ({
    id,
    title: headTitle(fd) ?? UNTITLED,
    updated: lastUpdate(fd),
    file,
  }));
}

/** The title in a session file's first HEAD_BYTES: its title record, else its first user message, if either is there. */
export function sessionTitle(file: string): string | undefined {
  return withFile(file, undefined, headTitle);
}

function headTitle(fd: number): string | undefined {
  const buffer = Buffer.alloc(HEAD_BYTES);
  const got = fs.readSync(fd, buffer, 0, HEAD_BYTES, 0);
  const lines = buffer.toString('utf8', 0, got).split('\n');
  // When the head is full, its last line is cut (and may end inside a character).
  const cut = got === HEAD_BYTES ? lines.pop() : undefined;
  let firstUser: string | undefined;
  for (const line of lines) {
    const record = parseRecord(line);
    if (record?.type === 'meta' && typeof record.title === 'string' && record.title.trim() !== '') return titleFromText(record.title);
    if (firstUser === undefined && record?.type === 'message' && record.message.role === 'user') firstUser = contentText(record.message);
  }
  firstUser ??= cut === undefined ? undefined : userTextPrefix(cut);
  const title = firstUser === undefined ? '' : titleFromText(firstUser);
  return title === '' ? undefined : title;
}

/** When the newest complete record was written: the `ts` of the file's last complete line. */
function lastUpdate(fd: number): string {
  for (const line of linesBackward(fd)) {
    // A line after the last newline is still being written, or was cut short.
    if (!line.terminated) continue;
    const record = parseRecord(line.text);
    return typeof record?.ts === 'string' ? record.ts : '';
  }
  return '';
}

function parseRecord(line: string): SessionRecord | undefined {
  if (line.trim() === '') return undefined;
  try {
    const value: unknown = JSON.parse(line);
    return isSessionRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The start of a user message's text from a record line cut at HEAD_BYTES
 * (a first message longer than the head, in a file written before title
 * records existed). The line is Candor's own serialization, so the fields
 * come in the order `append` writes them.
 */
function userTextPrefix(cut: string): string | undefined {
  const match = /^\{"v":1,"ts":"[^"]*","type":"message","id":"[^"]*","turn":"[^"]*","message":\{"role":"user","content":"((?:[^"\\]|\\.)*)/.exec(cut);
  if (!match?.[1]) return undefined;
  // A character the cut split decodes as U+FFFD; an escape it split (`\`, `\u00`) does not parse: drop either.
  const escaped = match[1].replace(/\uFFFD$/, '');
  for (let drop = 0; drop <= 5 && drop <= escaped.length; drop++) {
    try {
      return JSON.parse(`"${escaped.slice(0, escaped.length - drop)}"`) as string;
    } catch {
      // shorter
    }
  }
  return undefined;
}
