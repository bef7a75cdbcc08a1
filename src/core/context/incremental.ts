import { createHash } from 'node:crypto';
import type { ChatMessage } from '../messages';
import type { Estimator } from './estimator';

/** Bound on remembered contents, so a long-lived window does not grow forever. */
const DEFAULT_CONTENT_CAPACITY = 50_000;

/**
 * The incremental estimate: each message is counted once, so a request costs
 * its new messages, not the history.
 *
 * Two caches: by object identity (the live history reuses its message
 * objects, a lookup is O(1)), and by content hash (a session reloaded from
 * disk re-creates equal messages as new objects; hashing is far cheaper than
 * tokenizing, and each re-created object is hashed once and then found by
 * identity). One instance belongs to one estimator: counts of two
 * tokenizers never mix.
 */
export class IncrementalEstimate {
  private readonly byObject = new WeakMap<object, number>();
  private readonly byContent = new Map<string, number>();
  private readonly byText = new Map<string, number>();
  private counted = 0;

  constructor(
    readonly estimator: Estimator,
    private readonly contentCapacity = DEFAULT_CONTENT_CAPACITY,
  ) {}

  /** Messages actually tokenized so far; tests and the benchmark read it. */
  get tokenizedMessages(): number {
    return this.counted;
  }

  total(messages: readonly ChatMessage[]): number {
    let sum = 0;
    for (const message of messages) sum += this.count(message);
    return sum;
  }

  count(message: ChatMessage): number {
    const known = this.byObject.get(message);
    if (known !== undefined) return known;
    const key = contentKey(message);
    let tokens = this.byContent.get(key);
    if (tokens === undefined) {
      tokens = this.estimator.countMessage(message);
      this.counted++;
      this.remember(key, tokens);
    }
    this.byObject.set(message, tokens);
    return tokens;
  }

  /**
   * A text sent beside the messages (the tool list as JSON): cached by value,
   * keeping only the latest few since these change rarely and are large.
   */
  text(value: string): number {
    const known = this.byText.get(value);
    if (known !== undefined) return known;
    const tokens = this.estimator.countText(value);
    if (this.byText.size >= 8) this.byText.clear();
    this.byText.set(value, tokens);
    return tokens;
  }

  private remember(key: string, tokens: number): void {
    if (this.byContent.size >= this.contentCapacity) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.byContent.keys().next();
      if (!oldest.done) this.byContent.delete(oldest.value);
    }
    this.byContent.set(key, tokens);
  }
}

/** A fixed-size key of everything the estimator reads from a message. */
function contentKey(message: ChatMessage): string {
  return createHash('sha1').update(JSON.stringify(message)).digest('base64');
}
