/**
 * The one base of Candor's errors: `kind` is a word the caller can switch
 * on, the message is for people (docs/architecture.md, "Layout"). Each
 * subclass names itself, so that a log line says which part failed even in
 * the minified bundle.
 */
export abstract class KindError<K extends string = string> extends Error {
  abstract override readonly name: string;

  constructor(
    readonly kind: K,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    Object.setPrototypeOf(this, new.target.prototype);
  }
}

/** `value` is an error of class `type`, and of one of `kinds` when any are given: the one way callers test an error. */
export function isKindError<E extends KindError>(value: unknown, type: abstract new (...args: never[]) => E, ...kinds: ReadonlyArray<E['kind']>): value is E {
  return value instanceof type && (kinds.length === 0 || kinds.includes(value.kind));
}
