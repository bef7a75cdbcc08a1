import * as fs from 'node:fs';

/**
 * Files up to this size are read and written on the extension host's
 * thread, in batches between yields: for a small file a copy syscall
 * (`copy_file_range` after a failed reflink) costs more than reading and
 * writing its few kilobytes, and the bytes in hand give the hash for free.
 * Larger files are copied by the kernel, a reflink where it can.
 */
export const SMALL_FILE_BYTES = 128 * 1024;

const READ_FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);

/**
 * The bytes of a regular file of at most `max` bytes: undefined when it is
 * gone, null when it is not a regular file (a symlink is refused by
 * O_NOFOLLOW, a FIFO opens without waiting) or is larger than `max`.
 * With `scratch` the bytes are read into it (no allocation per file): they
 * are good until the next read into it.
 */
export function readSmall(file: string, max = SMALL_FILE_BYTES, scratch?: Buffer): Buffer | undefined | null {
  let fd: number;
  try {
    fd = fs.openSync(file, READ_FLAGS);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'ELOOP' || code === 'EMLINK' || code === 'ENXIO' || code === 'EISDIR') return null;
    throw err;
  }
  try {
    const stat = fs.fstatSync(fd);
    if (!stat.isFile() || stat.size > max) return null;
    // Its size as fstat saw it: bytes written after are seen at the next refresh, by their mtime.
    const bytes = scratch !== undefined && scratch.length >= stat.size ? scratch.subarray(0, stat.size) : Buffer.allocUnsafe(stat.size);
    let done = 0;
    while (done < bytes.length) {
      const n = fs.readSync(fd, bytes, done, bytes.length - done, done);
      if (n === 0) return bytes.subarray(0, done);
      done += n;
    }
    return bytes;
  } finally {
    fs.closeSync(fd);
  }
}

/** Lets the event loop run between batches of work done on this thread. */
export function yieldNow(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
