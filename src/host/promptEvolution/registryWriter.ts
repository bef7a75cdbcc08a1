import type { Logger } from '../../core/log';
import type { PromptRegistry, Signal, Trace } from '../../core/promptEvolution/registry';

type Pending = { readonly kind: 'trace'; readonly trace: Trace } | { readonly kind: 'signal'; readonly signal: Signal };

/**
 * Trace and signal writes, queued so the chat never waits on them: batched a
 * moment apart (each write rewrites the database file), failures logged and
 * dropped, the queue bounded.
 */
export class RegistryWriter {
  private static readonly MAX_QUEUE = 1000;
  private static readonly BATCH_DELAY_MS = 300;
  private queue: Pending[] = [];
  private flushing: Promise<void> | undefined;
  private dropped = 0;

  constructor(
    private readonly registry: () => Promise<PromptRegistry>,
    private readonly log: Logger,
  ) {}

  push(item: Pending): void {
    if (this.queue.length >= RegistryWriter.MAX_QUEUE) {
      this.queue.shift();
      if (this.dropped++ === 0) this.log.warn('traces.sqlite: the write queue is full; the oldest traces are dropped');
    }
    this.queue.push(item);
    this.flushing ??= this.flush().finally(() => {
      this.flushing = undefined;
    });
  }

  flushed(): Promise<void> {
    return this.flushing ?? Promise.resolve();
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      await new Promise((resolve) => setTimeout(resolve, RegistryWriter.BATCH_DELAY_MS));
      const batch = this.queue;
      this.queue = [];
      try {
        const registry = await this.registry();
        const traces = batch.flatMap((p) => (p.kind === 'trace' ? [p.trace] : []));
        if (traces.length > 0) await registry.addTraces(traces);
        for (const p of batch) if (p.kind === 'signal') await registry.addSignal(p.signal);
      } catch (err) {
        this.log.warn(`traces.sqlite: ${batch.length} record(s) not written: ${errorText(err)}`);
      }
    }
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
