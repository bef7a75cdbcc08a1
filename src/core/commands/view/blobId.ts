import * as crypto from 'node:crypto';
import { hashBounded } from '../../boundedRead';

/**
 * The view's content hash is git's blob id (SHA-1 of `blob <size>\0` and the
 * bytes): the same number says "unchanged" to the manifest and names the
 * object in the view's repository, and for a file git calls clean it is
 * already known from the index, so the first build reads no clean file.
 */
export function blobId(bytes: Uint8Array): string {
  return crypto.createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** The blob id of a regular file's bytes; undefined when it is gone. Refuses a symlink, FIFO or folder (boundedRead.ts). */
export async function fileBlobId(file: string, maxBytes = Number.MAX_SAFE_INTEGER): Promise<string | undefined> {
  const hash = crypto.createHash('sha1');
  const size = await hashBounded(file, maxBytes, hash, file, (n) => `blob ${n}\0`);
  return size === undefined ? undefined : hash.digest('hex');
}

export const SHA1_ID = /^[0-9a-f]{40}$/;
