import { constants as fsConstants, type Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import { describeType } from '../boundedRead';
import { formatCount, truncationMarker, utf8Boundary } from './bounded';
import { confine } from './confine';
import { WorkspaceToolError } from './errors';
import { decodeUtf8, looksBinary } from './walk';

export interface ReadFileOptions {
  /** Largest number of bytes returned. Default 64 KiB. */
  readonly maxBytes?: number;
}

export interface ReadFileResult {
  /** The path as tools print it. */
  readonly path: string;
  /** The content, or a one-line note when the file is binary or not UTF-8. */
  readonly text: string;
  readonly truncated: boolean;
  readonly binary: boolean;
  readonly totalBytes: number;
}

export const DEFAULT_READ_BYTES = 64 * 1024;

/**
 * Opened without following a link and without waiting (a FIFO opens at
 * once), then checked on the descriptor: a FIFO, socket or device a command
 * left is refused, never read (a read would wait for a writer forever).
 */
const OPEN_FLAGS = fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0);

/** Reads a workspace file from disk, bounded, refusing paths outside the workspace folders and anything but a regular file. */
export async function readFile(roots: readonly string[], relPath: string, options: ReadFileOptions = {}): Promise<ReadFileResult> {
  const maxBytes = checkBound(options.maxBytes ?? DEFAULT_READ_BYTES, 'maxBytes');
  const target = await confine(roots, relPath);
  const handle = await openRegular(target.absolute, target.display);
  let bytes: Buffer;
  let stat: Stats;
  try {
    stat = await handle.stat();
    if (!stat.isFile()) throw new WorkspaceToolError('not-a-file', `${target.display} is not a file (${describeType(stat)})`);
    const buffer = Buffer.alloc(Math.min(stat.size, maxBytes) + 4);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    bytes = buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
  const totalBytes = Math.max(stat.size, bytes.length);
  const truncated = bytes.length > maxBytes;
  const shownBytes = truncated ? bytes.subarray(0, utf8Boundary(bytes, maxBytes)) : bytes;
  const text = looksBinary(bytes) ? undefined : decodeUtf8(shownBytes);
  if (text === undefined) {
    return {
      path: target.display,
      text: `[not shown: ${target.display} is binary or not valid UTF-8 (${formatCount(totalBytes)} bytes)]`,
      truncated: false,
      binary: true,
      totalBytes,
    };
  }
  return {
    path: target.display,
    text: truncated ? `${text}\n${truncationMarker(shownBytes.length, totalBytes, 'bytes')}` : text,
    truncated,
    binary: false,
    totalBytes,
  };
}

/** `absolute` is a real path (confine resolved it): a link there now was put in place since. */
async function openRegular(absolute: string, display: string): Promise<fs.FileHandle> {
  try {
    return await fs.open(absolute, OPEN_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'ENXIO' || code === 'EISDIR') throw new WorkspaceToolError('not-a-file', `${display} is not a file`);
    throw err;
  }
}

export function checkBound(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 100_000_000) {
    throw new WorkspaceToolError('invalid', `${name} must be a positive integer, got ${value}`);
  }
  return value;
}
