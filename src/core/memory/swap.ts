import { promises as fs } from 'node:fs';
import type { Logger } from '../log';
import { startsWithBytes } from './bytes';
import { serializedOn } from './fileQueue';
import { errorText, failed, type CondenseFailure, type CondenseFailureReason, type CondenseOutcome } from './outcome';
import { KindError, isKindError } from '../kindError';

/** Re-checks that may carry appended bytes; growth still found at the check after them is `still-growing`. */
export const MAX_CARRY_ROUNDS = 3;

export interface SwapHooks {
  /**
   * Observer called before each re-check of the source, with the round number
   * (0 = the first check). It runs while this process's appends to the file
   * wait, so it must not await `appendEntry` on the same file.
   */
  readonly beforeSwapCheck?: (round: number) => void | Promise<void>;
  /**
   * The grace after the rename in which another process's late appends are
   * still carried; default a timer of LATE_WRITE_GRACE_MS. A test writes its
   * late bytes here instead of racing that timer.
   */
  readonly lateWriteGrace?: () => Promise<void>;
}

export interface SwapInput {
  readonly file: string;
  readonly tempFile: string;
  readonly backupFile: string;
  /** The raw bytes the summary was built from. */
  readonly snapshot: Buffer;
  readonly summary: Buffer;
  /** True when an editor now holds unsaved changes to the file. */
  readonly isUnsaved: () => boolean;
  readonly log: Logger;
  readonly hooks?: SwapHooks;
}

/** A swap given up on the way; its outcome says why, and the file is as its other writers left it. */
class SwapAbort extends KindError<CondenseFailureReason> {
  override readonly name = 'SwapAbort';

  constructor(readonly outcome: CondenseFailure) {
    super(outcome.reason, outcome.detail);
  }
}

/**
 * A writer in another process may have opened the previous file just before
 * the rename and write to it a moment later. Its bytes land in the backup
 * (the same file); they are looked for this long after the rename.
 */
export const LATE_WRITE_GRACE_MS = 25;

interface Swapped {
  /** The bytes the new file replaced, as last checked. */
  readonly current: Buffer;
  readonly carriedBytes: number;
  readonly rounds: number;
  /** The backup is a hard link to the previous file (not a copy). */
  readonly linked: boolean;
}

/**
 * Writes the summary to the temp file, then, with this process's appends
 * held back, re-reads the source as raw bytes: bytes appended after the
 * snapshot are carried onto the temp file verbatim, any other change aborts.
 * Then the previous version becomes the backup and the temp file is renamed
 * over the source. The temp file is gone on every path that does not swap.
 */
export async function swapIn(input: SwapInput): Promise<CondenseOutcome> {
  let swapped: Swapped;
  try {
    swapped = await swapThroughTemp(input);
  } catch (err) {
    if (isKindError(err, SwapAbort)) return err.outcome;
    return failed('write-failed', `could not write the condensed memory: ${errorText(err)}`);
  }
  const late = swapped.linked ? await carryLateAppends(input, swapped.current) : 0;
  return {
    ok: true,
    beforeBytes: swapped.current.length + late,
    afterBytes: input.summary.length + swapped.carriedBytes + late,
    carriedBytes: swapped.carriedBytes + late,
    rounds: swapped.rounds,
  };
}

async function swapThroughTemp(input: SwapInput): Promise<Swapped> {
  let tempCreated = false;
  let renamed = false;
  try {
    // A leftover of a crashed run with this same pid; no live run owns it (one condense per file per process).
    await fs.rm(input.tempFile, { force: true });
    const temp = await fs.open(input.tempFile, 'wx');
    tempCreated = true;
    let tempOpen = true;
    const closeTemp = async (): Promise<void> => {
      if (!tempOpen) return;
      tempOpen = false;
      await temp.close();
    };
    try {
      await writeAll(temp, input.summary);
      return await serializedOn(input.file, async () => {
        const { current, carriedBytes, rounds } = await carryAppends(input, temp);
        if (input.isUnsaved()) throw new SwapAbort(failed('source-unsaved', 'an editor now holds unsaved changes to the memory file'));
        await temp.sync();
        await closeTemp();
        const linked = await keepBackup(input.file, input.backupFile, current);
        await fs.rename(input.tempFile, input.file);
        renamed = true;
        return { current, carriedBytes, rounds, linked };
      });
    } finally {
      await closeTemp();
    }
  } finally {
    if (tempCreated && !renamed) await fs.rm(input.tempFile, { force: true }).catch(() => undefined);
  }
}

async function carryAppends(input: SwapInput, temp: fs.FileHandle): Promise<{ current: Buffer; carriedBytes: number; rounds: number }> {
  let expected = input.snapshot;
  let carriedBytes = 0;
  for (let round = 0; ; round++) {
    await input.hooks?.beforeSwapCheck?.(round);
    const current = await readSource(input.file);
    if (current.equals(expected)) return { current, carriedBytes, rounds: round };
    if (current.length <= expected.length || !startsWithBytes(current, expected)) {
      throw new SwapAbort(failed('source-changed', describeChange(expected, current)));
    }
    if (round === MAX_CARRY_ROUNDS) {
      throw new SwapAbort(failed('still-growing', `the memory file was still growing after ${MAX_CARRY_ROUNDS} re-check rounds; nothing was swapped and nothing lost`));
    }
    const appended = current.subarray(expected.length);
    await writeAll(temp, appended);
    carriedBytes += appended.length;
    expected = current;
  }
}

async function readSource(file: string): Promise<Buffer> {
  try {
    return await fs.readFile(file);
  } catch (err) {
    throw new SwapAbort(failed('source-check-failed', `could not re-read the memory file before the swap: ${errorText(err)}`));
  }
}

/**
 * Keeps the bytes being replaced as the backup. A hard link keeps the very
 * file: a writer in another process that appends to it between the last check
 * and the rename still lands in the backup, and is carried over below.
 * Returns whether the backup is that link (false: a copy).
 */
async function keepBackup(file: string, backupFile: string, current: Buffer): Promise<boolean> {
  await fs.rm(backupFile, { force: true });
  try {
    await fs.link(file, backupFile);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new SwapAbort(failed('source-check-failed', 'the memory file disappeared just before the swap'));
  }
  await fs.writeFile(backupFile, current, { flag: 'wx' });
  return false;
}

/** Bytes another process appended to the previous file after the last check, appended to the new file. */
async function carryLateAppends(input: SwapInput, checked: Buffer): Promise<number> {
  await (input.hooks?.lateWriteGrace?.() ?? new Promise((resolve) => setTimeout(resolve, LATE_WRITE_GRACE_MS)));
  try {
    return await appendLateBytes(input, checked);
  } catch (err) {
    // The swap is done; the late bytes are still in the backup, say where.
    input.log.error(`memory condense: could not carry bytes appended during the rename (they are in ${input.backupFile}): ${errorText(err)}`);
    return 0;
  }
}

async function appendLateBytes(input: SwapInput, checked: Buffer): Promise<number> {
  const previous = await fs.readFile(input.backupFile).catch(() => undefined);
  if (previous === undefined || previous.equals(checked)) return 0;
  if (previous.length > checked.length && startsWithBytes(previous, checked)) {
    const late = previous.subarray(checked.length);
    const handle = await fs.open(input.file, 'a');
    try {
      await writeAll(handle, late);
    } finally {
      await handle.close();
    }
    input.log.info(`memory condense: carried ${late.length} bytes appended during the rename`);
    return late.length;
  }
  input.log.warn(`memory condense: the memory file changed during the rename; the displaced version is kept in ${input.backupFile}`);
  return 0;
}

async function writeAll(handle: fs.FileHandle, bytes: Uint8Array): Promise<void> {
  let written = 0;
  while (written < bytes.length) {
    const { bytesWritten } = await handle.write(bytes, written, bytes.length - written, null);
    written += bytesWritten;
  }
}

function describeChange(expected: Buffer, current: Buffer): string {
  if (current.length < expected.length && startsWithBytes(expected, current)) {
    return `the memory file was truncated from ${expected.length} to ${current.length} bytes during the condense`;
  }
  let at = 0;
  while (at < expected.length && at < current.length && expected[at] === current[at]) at++;
  return `the memory file was rewritten during the condense (first difference at byte ${at}); it was left as the other writer left it`;
}
