import type { TokenCounter } from './estimator';
import { priorTokens } from './heuristic';

/**
 * The exact counts the context ledger waits for (ledger.ts;
 * docs/architecture.md, "Context gate"): what is queued goes to the
 * tokenizer one request at a time, the urgent queue (new messages, new
 * system prompts and tool lists) before the background one (a reload's
 * warm-up), newest first, and each count lands on its item.
 */

/** Texts counted as one: a message, the system message, a tool definition, a tool list's frame. */
export interface Counted {
  readonly parts: readonly string[];
  /** Constant tokens around the texts (a message's frame, a tool definition's). */
  readonly overhead: number;
  readonly heuristic: number;
  readonly features: readonly number[];
  exact?: number;
  exactBy?: string;
}

/** Texts per tokenizer request: small enough that a new message never waits long behind a reload's warm-up. */
const BATCH_CHARS = 200_000;

export class ExactCounts {
  readonly urgent: Counted[] = [];
  background: Counted[] = [];
  private counterInUse: TokenCounter | undefined;
  private draining: Promise<void> | undefined;

  constructor(
    /** A count landed on `item`, which counted `before` until then. */
    private readonly landed: (item: Counted, before: number, wasExact: boolean) => void,
    /** `counter` failed (its worker could not load): the caller drops it. */
    private readonly failed: (err: unknown, counter: TokenCounter) => void,
  ) {}

  get counter(): TokenCounter | undefined {
    return this.counterInUse;
  }

  /** A new tokenizer (or none): both queues are dropped, the caller queues what it wants recounted. */
  use(counter: TokenCounter | undefined): void {
    this.counterInUse = counter;
    this.urgent.length = 0;
    this.background = [];
  }

  /** Resolves when the queues are empty, or undefined when nothing is being counted. */
  get settling(): Promise<void> | undefined {
    return this.draining;
  }

  isExact(counted: Counted): boolean {
    return !this.counterInUse || counted.parts.length === 0 || counted.exactBy === this.counterInUse.name;
  }

  /**
   * What an item counts now: its exact count once it has landed. Until then,
   * for a model with a tokenizer, the prior's rates (fitted to real
   * tokenizers, fittedPrior.ts) on its features, and its frame: a tokenizer
   * will count English at about 4.5 characters a token, not the plain
   * heuristic's 4, and what the user sees while the tokenizer loads should
   * already be close. Without a tokenizer, the plain heuristic: the
   * calibration estimates from the features itself.
   */
  current(counted: Counted): number {
    if (!this.counterInUse) return counted.heuristic;
    if (counted.exactBy === this.counterInUse.name && counted.exact !== undefined) return counted.exact;
    // A message's frame is in `overhead`, not in the `messages` feature's rate.
    return Math.round(counted.overhead + priorTokens(counted.features));
  }

  /** Counts what is queued, one tokenizer request at a time. */
  drain(): void {
    if (this.draining || !this.counterInUse) return;
    this.draining = this.drainLoop().finally(() => {
      this.draining = undefined;
      if (this.counterInUse && (this.urgent.length > 0 || this.background.length > 0)) this.drain();
    });
  }

  private async drainLoop(): Promise<void> {
    while (this.counterInUse && (this.urgent.length > 0 || this.background.length > 0)) {
      const counter = this.counterInUse;
      const batch = this.takeBatch(counter.name);
      if (batch.length === 0) continue;
      let counts: number[];
      try {
        counts = await counter.count(batch.flatMap((item) => item.parts));
      } catch (err) {
        this.failed(err, counter);
        return;
      }
      // A switch while counting: these counts belong to another tokenizer.
      if (this.counterInUse !== counter) continue;
      let at = 0;
      for (const item of batch) {
        let exact = item.overhead;
        for (let i = 0; i < item.parts.length; i++) exact += counts[at++] ?? 0;
        const before = this.current(item);
        const wasExact = this.isExact(item);
        item.exact = exact;
        item.exactBy = counter.name;
        this.landed(item, before, wasExact);
      }
    }
  }

  private takeBatch(counterName: string): Counted[] {
    const batch = new Set<Counted>();
    let chars = 0;
    while (chars < BATCH_CHARS) {
      const item = this.urgent.pop() ?? this.background.pop();
      if (!item) break;
      if (item.exactBy === counterName || batch.has(item)) continue;
      batch.add(item);
      for (const part of item.parts) chars += part.length;
    }
    return [...batch];
  }
}
