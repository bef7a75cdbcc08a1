import * as fs from 'node:fs';

/** One line of a file, read from its end. */
export interface FileLine {
  /** The line's text, without its newline (and without a `\r` before it). */
  readonly text: string;
  /** Byte offset of the line's first byte. */
  readonly start: number;
  /** False for bytes after the file's last newline: a line still being written, or cut short. */
  readonly terminated: boolean;
}

const CHUNK_BYTES = 64 * 1024;

/**
 * The lines of an open file from its end towards its start, newest first,
 * read one chunk at a time: a caller that stops after the newest lines has
 * read only the end of the file (docs/architecture.md, "Sessions").
 * Lines are cut at newline bytes, which never occur inside a UTF-8
 * sequence, so each line decodes on its own. Empty lines are not yielded.
 */
export function* linesBackward(fd: number, end: number = fs.fstatSync(fd).size, chunkBytes = CHUNK_BYTES): Generator<FileLine> {
  // The line being assembled, as pieces in file order (a long line spans chunks).
  let pieces: Buffer[] = [];
  // The segment that ends at `end` has no newline after it: unless empty, nobody finished it.
  let last = true;
  let pos = end;
  while (pos > 0) {
    const length = Math.min(chunkBytes, pos);
    pos -= length;
    const chunk = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = fs.readSync(fd, chunk, got, length - got, pos + got);
      if (n === 0) throw new Error(`the file shrank while it was read (at byte ${pos + got})`);
      got += n;
    }
    let lineEnd = length;
    // (lastIndexOf with a negative offset would count from the end: stop at 0.)
    for (let i = chunk.lastIndexOf(0x0a, length - 1); i !== -1; i = i > 0 ? chunk.lastIndexOf(0x0a, i - 1) : -1) {
      const line = lineOf([chunk.subarray(i + 1, lineEnd), ...pieces], pos + i + 1, !last);
      if (line) yield line;
      pieces = [];
      last = false;
      lineEnd = i;
    }
    if (lineEnd > 0) pieces.unshift(chunk.subarray(0, lineEnd));
  }
  const line = lineOf(pieces, 0, !last);
  if (line) yield line;
}

function lineOf(pieces: readonly Buffer[], start: number, terminated: boolean): FileLine | undefined {
  const bytes = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces as Buffer[]);
  if (!bytes || bytes.length === 0) return undefined;
  const text = bytes.toString('utf8').replace(/\r$/, '');
  return text.trim() === '' ? undefined : { text, start, terminated };
}

/** Runs `read` on the file opened for reading; a missing file reads as `missing`. */
export function withFile<T>(file: string, missing: T, read: (fd: number) => T): T {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return missing;
    throw err;
  }
  try {
    return read(fd);
  } finally {
    fs.closeSync(fd);
  }
}
