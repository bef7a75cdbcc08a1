import { encodingForModel, type TiktokenEncodingName, type TokenCounter } from '../../core/context';
import { WorkerTokenizer, type TokenizerModules } from '../../core/context/tokenizer/workerTokenizer';

/**
 * One js-tiktoken worker thread per encoding, started on first use, so that
 * loading its tables never blocks the extension host. A model with no known
 * encoding gets no tokenizer: the conversation counts it with the heuristic,
 * calibrated against the provider's own counts.
 */
export class Estimators {
  private readonly workers = new Map<TiktokenEncodingName, WorkerTokenizer>();

  constructor(private readonly modules: TokenizerModules) {}

  /** The tokenizer for a model, started in the background. */
  warm(model: string): void {
    this.counterFor(model);
  }

  /** The tokenizer of a model, or undefined when its encoding is not known. */
  counterFor(model: string): TokenCounter | undefined {
    const encoding = encodingForModel(model);
    return encoding ? this.worker(encoding) : undefined;
  }

  /** Token counts of plain texts (the offline provider's usage numbers). */
  async countText(encoding: TiktokenEncodingName, text: string): Promise<number> {
    const [count] = await this.worker(encoding).count([text]);
    return count ?? 0;
  }

  dispose(): void {
    for (const worker of this.workers.values()) worker.dispose();
  }

  private worker(encoding: TiktokenEncodingName): WorkerTokenizer {
    let worker = this.workers.get(encoding);
    if (!worker) {
      worker = new WorkerTokenizer(encoding, this.modules);
      this.workers.set(encoding, worker);
    }
    return worker;
  }
}
