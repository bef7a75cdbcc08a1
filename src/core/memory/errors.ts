import { KindError } from '../kindError';

export type MemoryErrorKind = 'path-relative-without-folder' | 'empty-entry' | 'entry-too-long' | 'bad-arguments';

/** A memory operation the caller asked for that cannot be done; `kind` is for code, the message for people. */
export class MemoryError extends KindError<MemoryErrorKind> {
  override readonly name = 'MemoryError';
}
