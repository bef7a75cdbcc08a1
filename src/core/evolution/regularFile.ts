import * as fs from 'node:fs';
import { describeType, isUnsafeFile, readBounded } from '../boundedRead';
import { WorkspaceToolError } from '../workspace/errors';

/**
 * The change tools touch regular files only (docs/architecture.md,
 * "Evolution"). A command of the model's may leave a FIFO where the model
 * then writes: a plain `writeFile` opens it and waits for a reader forever,
 * in a worker thread that cancelling the run does not free, and the run and
 * its lock never end. Here a path is opened with `O_NOFOLLOW | O_NONBLOCK`
 * (a FIFO opens, or fails, at once), the descriptor is checked to be a
 * regular file, and only that descriptor is read or written.
 */

/** The most `apply_patch` reads of one file. */
export const PATCH_READ_MAX_BYTES = 16 * 1024 * 1024;

/** The text of the regular file at `absolute` (a real path), named `display` in a refusal. */
export async function readRegularText(absolute: string, display: string, maxBytes = PATCH_READ_MAX_BYTES): Promise<string> {
  try {
    const bytes = await readBounded(absolute, maxBytes, display);
    if (bytes === undefined) throw new WorkspaceToolError('not-found', `${display} does not exist`);
    return bytes.toString('utf8');
  } catch (err) {
    if (isUnsafeFile(err)) throw new WorkspaceToolError('not-a-file', `${display} is ${err.what}; the change tools read and write regular files only`);
    throw err;
  }
}

const WRITE_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | (fs.constants.O_NOFOLLOW ?? 0) | (fs.constants.O_NONBLOCK ?? 0);

/** Writes `content` as the whole of the regular file at `absolute` (a real path), creating it when absent. */
export async function writeRegularText(absolute: string, display: string, content: string): Promise<void> {
  let handle: fs.promises.FileHandle;
  try {
    handle = await fs.promises.open(absolute, WRITE_FLAGS, 0o666);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // ENXIO: a FIFO with no reader (or a socket); ELOOP: a link put in place since the path was confined.
    if (code === 'ENXIO') throw refusal(display, 'a FIFO or a socket, not a regular file');
    if (code === 'ELOOP') throw refusal(display, 'a symbolic link');
    if (code === 'EISDIR') throw refusal(display, 'a folder, not a file');
    throw err;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw refusal(display, describeType(stat));
    // Truncated only once it is known to be a regular file (O_TRUNC would act on whatever opened).
    await handle.truncate(0);
    await handle.writeFile(content);
  } finally {
    await handle.close();
  }
}

function refusal(display: string, what: string): WorkspaceToolError {
  return new WorkspaceToolError('not-a-file', `${display} is ${what}; the change tools read and write regular files only`);
}
