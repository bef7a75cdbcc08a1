import { errorMessage } from '../errorMessage';

/** What a condense ended with. Failures leave the memory file exactly as its other writers left it. */

export type CondenseFailureReason =
  /** The file is not valid UTF-8; refused before the model was called. */
  | 'source-encoding-invalid'
  /** An editor holds unsaved changes to the file; refused before the model was called, or before the swap. */
  | 'source-unsaved'
  /** The file changed other than by appending while the summary was built. */
  | 'source-changed'
  /** The file was missing or unreadable (at the start or at the swap). */
  | 'source-check-failed'
  /** The summary was not shorter than the source (or the file is empty); nothing swapped. */
  | 'not-smaller'
  /** Bytes kept being appended through every re-check round; nothing swapped, nothing lost. */
  | 'still-growing'
  | 'cancelled'
  /** The model request failed or answered nothing. */
  | 'model-failed'
  /** Writing the temp file, the backup or the rename failed (disk full, permissions); source untouched. */
  | 'write-failed'
  /** Another condense of the same file is running in this process. */
  | 'busy';

export interface CondenseSuccess {
  readonly ok: true;
  /** Size of the content that was replaced: the snapshot plus every carried byte. */
  readonly beforeBytes: number;
  /** Size of the new file: the summary plus every carried byte. */
  readonly afterBytes: number;
  /** Bytes appended by other writers after the snapshot, carried onto the new file verbatim. */
  readonly carriedBytes: number;
  /** How many re-check rounds found appended bytes (0 to 3). */
  readonly rounds: number;
}

export interface CondenseFailure {
  readonly ok: false;
  readonly reason: CondenseFailureReason;
  readonly detail: string;
}

export type CondenseOutcome = CondenseSuccess | CondenseFailure;

export function failed(reason: CondenseFailureReason, detail: string): CondenseFailure {
  return { ok: false, reason, detail };
}

export function errorText(err: unknown): string {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const message = errorMessage(err);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
