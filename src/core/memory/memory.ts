import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { toolSpec, type ToolSpec } from '../messages';
import { decodeLossy } from './bytes';
import { MemoryError } from './errors';
import { serializedOn } from './fileQueue';

/**
 * The memory file: Markdown, append-only for the agent. Each `remember` call
 * adds one entry:
 *
 *     \n## 2026-11-30T10:00:00Z\n<text>\n
 *
 * The leading newline keeps the heading on its own line even after a hand
 * edit that left no trailing newline; the time is UTC to the second.
 */

export const MAX_ENTRY_BYTES = 8192;

export const rememberToolSpec: ToolSpec = toolSpec(
  'remember',
  "Save a note to this workspace's memory so that future sessions know it: a fact about the project, a decision, a user preference, a command that works. One short self-contained note per call; do not repeat what memory already holds.",
  { text: { type: 'string', description: 'The note, in Markdown; a sentence or a few lines.' } },
  ['text'],
);

/** The exact bytes one `remember` call appends. */
export function entryBytes(text: string, now: Date): Buffer {
  const body = text.replace(/\s+$/u, '');
  if (body.trim() === '') throw new MemoryError('empty-entry', 'remember: the note is empty');
  const stamp = now.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const bytes = Buffer.from(`\n## ${stamp}\n${body}\n`, 'utf8');
  if (bytes.length > MAX_ENTRY_BYTES) {
    throw new MemoryError('entry-too-long', `remember: the note is ${bytes.length} bytes; at most ${MAX_ENTRY_BYTES}`);
  }
  return bytes;
}

/**
 * Appends one entry with one write on a descriptor opened with O_APPEND: never
 * a read-modify-write, so concurrent appenders and a running condense never
 * lose each other's bytes. Creates the folder and the file when missing.
 * Returns the number of bytes appended.
 */
export async function appendEntry(file: string, text: string, now: Date): Promise<number> {
  const bytes = entryBytes(text, now);
  await fs.mkdir(path.dirname(file), { recursive: true });
  // The condense swap queues on the real path; queue on the same one when the file is a link.
  const queueKey = await fs.realpath(file).catch(() => file);
  return serializedOn(queueKey, async () => {
    const handle = await fs.open(file, 'a');
    try {
      let written = 0;
      // One write for a regular file; the loop only guards against a short write.
      while (written < bytes.length) {
        const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, null);
        written += bytesWritten;
      }
      return written;
    } finally {
      await handle.close();
    }
  });
}

/**
 * The memory as it goes into the system prompt: at most `maxBytes` UTF-8
 * bytes. A larger file keeps its newest part, cut at a line boundary after a
 * one-line marker. Invalid UTF-8 becomes U+FFFD, never an error. A missing
 * file is empty memory.
 */
export async function readForPrompt(file: string, maxBytes: number): Promise<string> {
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, 'r');
  } catch (err) {
    if (isMissing(err)) return '';
    throw err;
  }
  try {
    const size = (await handle.stat()).size;
    const start = Math.max(0, size - maxBytes);
    const buffer = Buffer.alloc(size - start);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, start);
    const bytes = buffer.subarray(0, bytesRead);
    if (start === 0 && bytes.length <= maxBytes && fits(decodeLossy(bytes), maxBytes)) return decodeLossy(bytes);
    return newestPart(bytes, start, maxBytes);
  } finally {
    await handle.close();
  }
}

/** `tail` is the file from byte `tailStart` on. */
function newestPart(tail: Buffer, tailStart: number, maxBytes: number): string {
  // Cut on valid UTF-8: each invalid sequence becomes U+FFFD (three bytes) first,
  // so the bound holds for the text as sent. For a valid file the counts are exact.
  const skipped = characterStartAtOrAfter(tail, 0);
  const clean = Buffer.from(decodeLossy(tail.subarray(skipped)), 'utf8');
  const budget = maxBytes - Buffer.byteLength(omittedMarker(tailStart + tail.length));
  if (budget <= 0) return '';
  const cut = lineStartAtOrAfter(clean, clean.length - budget);
  return omittedMarker(tailStart + skipped + cut) + clean.subarray(cut).toString('utf8');
}

function omittedMarker(bytes: number): string {
  return `[older memory omitted: ${bytes} bytes]\n`;
}

/** The first line start at or after `from`; without a newline, the first character start. */
function lineStartAtOrAfter(bytes: Buffer, from: number): number {
  const start = Math.max(0, from);
  const newline = bytes.indexOf(0x0a, Math.max(0, start - 1));
  if (newline !== -1 && newline + 1 < bytes.length) return newline + 1;
  return characterStartAtOrAfter(bytes, start);
}

function characterStartAtOrAfter(bytes: Buffer, from: number): number {
  let i = from;
  while (i < bytes.length && ((bytes[i] ?? 0) & 0xc0) === 0x80) i++;
  return i;
}

function fits(text: string, maxBytes: number): boolean {
  return Buffer.byteLength(text) <= maxBytes;
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
