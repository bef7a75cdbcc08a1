import { errorMessage } from '../errorMessage';
import type { PromptRegistry, Signal, Trace } from './registry';

/** A trace, with the prompt its request was built from; or a signal (thumbs, a linked rant). */
export type PendingRecord =
  | {
      readonly kind: 'trace';
      readonly trace: Trace;
      /** The prompt's own text (before memory and tools): the trace is tagged with the registry version that has it. Never stored. */
      readonly prompt?: string;
    }
  | { readonly kind: 'signal'; readonly signal: Signal };

/**
 * A FIFO of at most `limit` items that drops the oldest when full: the chat
 * goes on whatever happens to traces.sqlite, and memory stays bounded.
 */
export class BoundedQueue<T> {
  private items: T[] = [];
  /** Items dropped since the queue was made. */
  dropped = 0;

  constructor(readonly limit: number) {}

  get length(): number {
    return this.items.length;
  }

  /** Returns true when this push dropped the oldest item. */
  push(item: T): boolean {
    const full = this.items.length >= this.limit;
    if (full) {
      this.items.shift();
      this.dropped++;
    }
    this.items.push(item);
    return full;
  }

  takeAll(): T[] {
    const taken = this.items;
    this.items = [];
    return taken;
  }
}

export interface RegistryWriterOptions {
  readonly registry: () => Promise<PromptRegistry>;
  readonly warn: (line: string) => void;
  /** Default 1000. */
  readonly maxQueue?: number;
  /** Records are written this long after the first of a batch arrives (each write rewrites the file); default 300 ms. */
  readonly batchDelayMs?: number;
}

/**
 * Trace and signal writes, queued so the chat never waits on them: batched a
 * moment apart, each trace tagged with the registry version of the prompt it
 * was served (looked up here, off the request's path), failures logged and
 * dropped, the queue bounded.
 */
export class RegistryWriter {
  private readonly queue: BoundedQueue<PendingRecord>;
  private readonly batchDelayMs: number;
  private flushing: Promise<void> | undefined;

  constructor(private readonly options: RegistryWriterOptions) {
    this.queue = new BoundedQueue(options.maxQueue ?? 1000);
    this.batchDelayMs = options.batchDelayMs ?? 300;
  }

  push(item: PendingRecord): void {
    if (this.queue.push(item) && this.queue.dropped === 1) this.options.warn('traces.sqlite: the write queue is full; the oldest traces are dropped');
    this.flushing ??= this.flush().finally(() => {
      this.flushing = undefined;
    });
  }

  /** Resolves when every record pushed so far has been written (or given up on). */
  async flushed(): Promise<void> {
    while (this.flushing) await this.flushing;
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, this.batchDelayMs));
      const batch = this.queue.takeAll();
      try {
        await write(await this.options.registry(), batch);
      } catch (err) {
        this.options.warn(`traces.sqlite: ${batch.length} record(s) not written: ${errorMessage(err)}`);
      }
    }
  }
}

async function write(registry: PromptRegistry, batch: readonly PendingRecord[]): Promise<void> {
  const versions = new Map<string, string | undefined>();
  for (const record of batch) {
    if (record.kind === 'trace' && record.prompt !== undefined && !versions.has(record.prompt)) {
      versions.set(record.prompt, (await registry.versionWithText(record.prompt))?.id);
    }
  }
  const traces = batch.flatMap((record) => {
    if (record.kind !== 'trace') return [];
    const version = record.prompt !== undefined ? versions.get(record.prompt) : undefined;
    return [version !== undefined ? { ...record.trace, promptVersion: version } : record.trace];
  });
  if (traces.length > 0) await registry.addTraces(traces);
  for (const record of batch) if (record.kind === 'signal') await registry.addSignal(record.signal);
}
