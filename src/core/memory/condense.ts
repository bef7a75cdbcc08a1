import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { silentLogger, type Logger } from '../log';
import type { TextModel } from '../provider/chatModel';
import { RequestError } from '../provider/requestError';
import { isKindError } from '../kindError';
import { isValidUtf8 } from './bytes';
import { condenseMessages, summaryText } from './condensePrompt';
import { errorText, failed, type CondenseOutcome } from './outcome';
import { swapIn, type SwapHooks } from './swap';

export type { CondenseFailure, CondenseFailureReason, CondenseOutcome } from './outcome';
export type { SwapHooks } from './swap';

export interface CondenseOptions {
  /** The memory file. A symbolic link is followed: the file it points to is condensed. */
  readonly file: string;
  readonly model: TextModel;
  /** Paths of files an editor holds unsaved changes to (the dirty-buffer port). */
  readonly unsavedFiles: () => readonly string[];
  readonly signal?: AbortSignal;
  /** Names the temp file `memory.md.condense-<pid>.tmp`; defaults to this process. */
  readonly pid?: number;
  readonly log?: Logger;
  readonly hooks?: SwapHooks;
}

export function tempFileFor(file: string, pid: number): string {
  return `${file}.condense-${pid}.tmp`;
}

export function backupFileFor(file: string): string {
  return `${file}.bak`;
}

const running = new Set<string>();

/**
 * Condenses the memory file with a guarded swap (`swap.ts`): the model
 * summarizes a snapshot of the raw bytes; whatever other writers append
 * meanwhile is carried onto the new file verbatim; any other change aborts and
 * leaves the file as they left it. The previous version is kept as `.bak`.
 */
export async function condenseMemory(options: CondenseOptions): Promise<CondenseOutcome> {
  const log = options.log ?? silentLogger;
  const key = path.resolve(options.file);
  if (running.has(key)) return report(log, options.file, failed('busy', 'a condense of this memory file is already running'));
  running.add(key);
  try {
    return report(log, options.file, await condense(options, log));
  } finally {
    running.delete(key);
  }
}

async function condense(options: CondenseOptions, log: Logger): Promise<CondenseOutcome> {
  let file: string;
  try {
    file = await fs.realpath(options.file);
  } catch (err) {
    return failed('source-check-failed', `could not read the memory file: ${errorText(err)}`);
  }
  const isUnsaved = (): boolean => options.unsavedFiles().some((p) => samePath(p, options.file) || samePath(p, file));
  if (isUnsaved()) return failed('source-unsaved', 'an editor holds unsaved changes to the memory file; save or revert them first');
  if (options.signal?.aborted) return failed('cancelled', 'cancelled before the summary was requested');

  let snapshot: Buffer;
  try {
    snapshot = await fs.readFile(file);
  } catch (err) {
    return failed('source-check-failed', `could not read the memory file: ${errorText(err)}`);
  }
  if (!isValidUtf8(snapshot)) {
    return failed('source-encoding-invalid', 'the memory file is not valid UTF-8; re-save it as UTF-8 before condensing');
  }
  if (snapshot.length === 0) return failed('not-smaller', 'the memory file is empty');

  let reply: string;
  try {
    // `whole`: a summary the output limit cut is half a memory, and must not replace the file.
    reply = await options.model.complete(condenseMessages(snapshot.toString('utf8')), options.signal, { whole: true });
  } catch (err) {
    if (options.signal?.aborted) return failed('cancelled', 'cancelled while the summary was being written');
    if (isKindError(err, RequestError, 'length')) {
      return failed('model-failed', `the summary was cut at the output limit (${err.message}) before it was complete, so the memory file was left as it was; raise the server's output limit, or condense with a model that answers in fewer tokens`);
    }
    return failed('model-failed', `the summary request failed: ${errorText(err)}`);
  }
  if (options.signal?.aborted) return failed('cancelled', 'cancelled while the summary was being written');
  const summary = Buffer.from(summaryText(reply), 'utf8');
  if (summary.length === 0) return failed('model-failed', 'the model answered with an empty summary');
  if (summary.length >= snapshot.length) {
    return failed('not-smaller', `the summary (${summary.length} bytes) is not smaller than the memory file (${snapshot.length} bytes)`);
  }
  return swapIn({
    file,
    tempFile: tempFileFor(file, options.pid ?? process.pid),
    backupFile: backupFileFor(file),
    snapshot,
    summary,
    isUnsaved,
    log,
    hooks: options.hooks,
  });
}

function report(log: Logger, file: string, outcome: CondenseOutcome): CondenseOutcome {
  if (outcome.ok) {
    log.info(
      `memory condensed: ${file} ${outcome.beforeBytes} → ${outcome.afterBytes} bytes, carriedBytes=${outcome.carriedBytes}, rounds=${outcome.rounds}`,
    );
  } else {
    log.warn(`memory condense aborted (${outcome.reason}): ${outcome.detail} [${file}]`);
  }
  return outcome;
}

function samePath(a: string, b: string): boolean {
  const left = path.resolve(a);
  const right = path.resolve(b);
  if (left === right) return true;
  // Windows and macOS filesystems are case-insensitive by default.
  return (process.platform === 'win32' || process.platform === 'darwin') && left.toLowerCase() === right.toLowerCase();
}
