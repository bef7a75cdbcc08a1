import * as fs from 'node:fs/promises';
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

/** Reads a workspace file from disk, bounded, refusing paths outside the workspace folders. */
export async function readFile(roots: readonly string[], relPath: string, options: ReadFileOptions = {}): Promise<ReadFileResult> {
  const maxBytes = checkBound(options.maxBytes ?? DEFAULT_READ_BYTES, 'maxBytes');
  const target = await confine(roots, relPath);
  const stat = await fs.stat(target.absolute);
  if (!stat.isFile()) throw new WorkspaceToolError('not-a-file', `${target.display} is not a file`);

  const handle = await fs.open(target.absolute, 'r');
  let bytes: Buffer;
  try {
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

export function checkBound(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1 || value > 100_000_000) {
    throw new WorkspaceToolError('invalid', `${name} must be a positive integer, got ${value}`);
  }
  return value;
}
