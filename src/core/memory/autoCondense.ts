import type { CondenseOutcome } from './outcome';

/** After a failure that a retry at the same size would repeat, wait until the file is this much larger. */
export const BACKOFF_GROWTH = 1.25;

/**
 * When to condense on its own: once the file passes `condenseAboveBytes`
 * (0 or less: never). After a condense that would only fail the same way
 * again (`not-smaller`, `model-failed`) or that the user cancelled, it waits
 * until the file has grown by a quarter over its size at that outcome. Races
 * with other writers (`source-changed`, `still-growing`, `busy`) retry at the
 * next chance.
 */
export class AutoCondense {
  private resumeAtBytes = 0;

  constructor(private readonly condenseAboveBytes: number) {}

  shouldCondense(sizeBytes: number): boolean {
    return this.condenseAboveBytes > 0 && sizeBytes > this.condenseAboveBytes && sizeBytes >= this.resumeAtBytes;
  }

  /** `sizeBytes`: the file's size when the outcome arrived. */
  record(outcome: CondenseOutcome, sizeBytes: number): void {
    if (outcome.ok) {
      this.resumeAtBytes = 0;
      return;
    }
    if (outcome.reason === 'not-smaller' || outcome.reason === 'model-failed' || outcome.reason === 'cancelled') {
      this.resumeAtBytes = Math.max(sizeBytes + 1, Math.ceil(sizeBytes * BACKOFF_GROWTH));
    }
  }

  /** The size the file must reach before the next automatic condense; 0 when not backing off. */
  get backingOffUntilBytes(): number {
    return this.resumeAtBytes;
  }
}
