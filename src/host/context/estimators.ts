import { counterKindForModel, type TiktokenEncodingName, type TokenCounter } from '../../core/context';
import { Llama3Counter } from '../../core/context/tokenizer/llama3';
import { WorkerTokenizer, type TokenizerModules } from '../../core/context/tokenizer/workerTokenizer';

/**
 * One js-tiktoken worker thread per encoding, started on first use, so that
 * loading its tables never blocks the extension host; a Llama 3 model is
 * counted through cl100k's (tokenizer/llama3.ts). A model with no known
 * tokenizer gets none: the conversation counts it with the heuristic,
 * calibrated against the provider's own counts.
 */
export class Estimators {
  private readonly workers = new Map<TiktokenEncodingName, WorkerTokenizer>();
  private llama3: Llama3Counter | undefined;

  constructor(private readonly modules: TokenizerModules) {}

  /** The tokenizer for a model, started in the background. */
  warm(model: string): void {
    this.counterFor(model);
  }

  /** The tokenizer of a model, or undefined when it is not known. */
  counterFor(model: string): TokenCounter | undefined {
    const kind = counterKindForModel(model);
    if (kind === 'llama3') return (this.llama3 ??= new Llama3Counter(this.worker('cl100k_base')));
    return kind ? this.worker(kind) : undefined;
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
