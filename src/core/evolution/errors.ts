import { KindError, isKindError } from '../kindError';

/** What stopped an evolution step, as a word the caller can switch on. */
export type EvolutionErrorKind =
  /** A scratch-git call aimed at a path outside `<dataDir>/scratch/`: a bug, never run. */
  | 'outside-scratch'
  /** Git failed in the scratch clone; the message holds its stderr. */
  | 'scratch-git'
  /** The user (or the task) cancelled the run. */
  | 'cancelled'
  /** A change-tool argument was refused (path escapes, bad patch, …). */
  | 'tool'
  /** The branch to hand off does not exist in the scratch clone. */
  | 'no-branch'
  /** The run cannot proceed (the repository is not one); the message says why, for people. */
  | 'refused';

export class EvolutionError extends KindError<EvolutionErrorKind> {
  override readonly name = 'EvolutionError';
}

export function isEvolutionError(value: unknown, kind?: EvolutionErrorKind): value is EvolutionError {
  return kind === undefined ? isKindError(value, EvolutionError) : isKindError(value, EvolutionError, kind);
}

/** Throws `cancelled` when the signal has fired. */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) throw new EvolutionError('cancelled', 'cancelled by the user');
}
