export type MemoryErrorKind = 'path-relative-without-folder' | 'empty-entry' | 'entry-too-long' | 'bad-arguments';

/** A memory operation the caller asked for that cannot be done; `kind` is for code, the message for people. */
export class MemoryError extends Error {
  constructor(
    readonly kind: MemoryErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'MemoryError';
  }
}
