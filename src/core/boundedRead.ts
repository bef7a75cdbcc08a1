import type { Hash } from 'node:crypto';
import * as fs from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { KindError, isKindError } from './kindError';

/**
 * Reads of files that code Candor does not trust may have left behind (the
 * scratch clone after the model and the gate ran; docs/architecture.md,
 * "Sandbox"). A plain `readFileSync` of such a path hangs on a FIFO, reads
 * forever from a symlink to `/dev/zero`, and fails with `EISDIR` on a folder.
 * Here a path is opened with `O_RDONLY | O_NOFOLLOW | O_NONBLOCK` (a symlink
 * is refused by the kernel, a FIFO opens without waiting for a writer), the
 * descriptor is checked with `fstat` (a regular file, at most the cap), and
 * only that descriptor is read, in chunks, asynchronously: nothing large is
 * read on the extension host's thread.
 */

const OPEN_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);
const CHUNK = 64 * 1024;

/** A file Candor will not read: not a regular file, or larger than the cap. `file` is the name the message gives it. */
export class UnsafeFileError extends KindError<'unsafe-file'> {
  override readonly name = 'UnsafeFileError';
  constructor(
    readonly file: string,
    /** What it is instead: "a FIFO", "a symbolic link", "12345678 bytes (more than 1048576)". */
    readonly what: string,
  ) {
    super('unsafe-file', `${file} is ${what}; Candor does not read it`);
  }
}

export function isUnsafeFile(value: unknown): value is UnsafeFileError {
  return isKindError(value, UnsafeFileError);
}

/** What a stat says a path is, for people. */
export function describeType(stat: fs.Stats): string {
  if (stat.isFile()) return 'a regular file';
  if (stat.isDirectory()) return 'a folder, not a file';
  if (stat.isSymbolicLink()) return 'a symbolic link';
  if (stat.isFIFO()) return 'a FIFO (named pipe), not a regular file';
  if (stat.isSocket()) return 'a socket, not a regular file';
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'a device, not a regular file';
  return 'not a regular file';
}

/**
 * Opens `file` for a bounded read: undefined when it does not exist, else a
 * handle on a regular file of at most `maxBytes` (and its size). Throws
 * `UnsafeFileError` (named `label`) for anything else.
 */
async function openChecked(file: string, maxBytes: number, label: string): Promise<{ handle: FileHandle; size: number } | undefined> {
  let handle: FileHandle;
  try {
    handle = await fs.promises.open(file, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    // ELOOP: O_NOFOLLOW met a symlink. ENXIO: a socket. EISDIR: a folder where the platform refuses to open one.
    if (code === 'ELOOP' || code === 'EMLINK') throw new UnsafeFileError(label, 'a symbolic link');
    if (code === 'ENXIO') throw new UnsafeFileError(label, 'a socket, not a regular file');
    if (code === 'EISDIR') throw new UnsafeFileError(label, 'a folder, not a file');
    throw err;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new UnsafeFileError(label, describeType(stat));
    if (stat.size > maxBytes) throw new UnsafeFileError(label, `${stat.size} bytes (more than the ${maxBytes} Candor reads)`);
    return { handle, size: stat.size };
  } catch (err) {
    await handle.close();
    throw err;
  }
}

/**
 * The bytes of `file`, undefined when it does not exist. Throws
 * `UnsafeFileError` for a symlink, a FIFO, a socket, a device, a folder, or
 * a file larger than `maxBytes` (also one that grows past it while read).
 */
export async function readBounded(file: string, maxBytes: number, label = file): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  const total = await eachChunk(file, maxBytes, label, (chunk) => chunks.push(Buffer.from(chunk)));
  return total === undefined ? undefined : Buffer.concat(chunks, total);
}

/**
 * Feeds the bytes of `file` into `hash` through the same checks as
 * readBounded, after `header(size)` when given (git's `blob <size>\0`);
 * the number of bytes, or undefined when absent.
 */
export async function hashBounded(file: string, maxBytes: number, hash: Hash, label = file, header?: (size: number) => string): Promise<number | undefined> {
  return eachChunk(file, maxBytes, label, (chunk) => hash.update(chunk), (size) => {
    if (header !== undefined) hash.update(header(size));
  });
}

async function eachChunk(file: string, maxBytes: number, label: string, take: (chunk: Buffer) => void, start?: (size: number) => void): Promise<number | undefined> {
  const opened = await openChecked(file, maxBytes, label);
  if (opened === undefined) return undefined;
  const { handle } = opened;
  try {
    start?.(opened.size);
    const buffer = Buffer.alloc(Math.min(CHUNK, maxBytes + 1));
    let total = 0;
    while (true) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) return total;
      total += bytesRead;
      if (total > maxBytes) throw new UnsafeFileError(label, `more than ${maxBytes} bytes (it grew while read)`);
      take(buffer.subarray(0, bytesRead));
    }
  } finally {
    await handle.close();
  }
}
