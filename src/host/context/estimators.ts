import { encodingForModel, heuristicEstimator, IncrementalEstimate, type TiktokenEncodingName } from '../../core/context';
import { PrimedEstimator, WorkerTokenizer, type TokenizerModules } from '../../core/context/tokenizer/workerTokenizer';
import type { ChatMessage } from '../../core/messages';

/**
 * One incremental estimate per tokenizer: js-tiktoken (in a worker thread, so
 * loading its tables never blocks the extension host) for models with a known
 * encoding, the CJK-aware heuristic for the rest.
 */
export class Estimators {
  private readonly tokenizers = new Map<TiktokenEncodingName, { primed: PrimedEstimator; estimate: IncrementalEstimate; worker: WorkerTokenizer }>();
  private readonly heuristic = new IncrementalEstimate(heuristicEstimator());

  constructor(private readonly modules: TokenizerModules) {}

  /** The tokenizer for a model, started in the background. */
  warm(model: string): void {
    const encoding = encodingForModel(model);
    if (encoding) this.tokenizer(encoding);
  }

  async estimate(model: string, messages: readonly ChatMessage[]): Promise<number> {
    const encoding = encodingForModel(model);
    if (!encoding) return this.heuristic.total(messages);
    const entry = this.tokenizer(encoding);
    await entry.primed.prime(messages);
    return entry.estimate.total(messages);
  }

  /** Token counts of plain texts (the offline provider's usage numbers). */
  async countText(encoding: TiktokenEncodingName, text: string): Promise<number> {
    const [count] = await this.tokenizer(encoding).worker.count([text]);
    return count ?? 0;
  }

  dispose(): void {
    for (const entry of this.tokenizers.values()) entry.worker.dispose();
  }

  private tokenizer(encoding: TiktokenEncodingName): { primed: PrimedEstimator; estimate: IncrementalEstimate; worker: WorkerTokenizer } {
    let entry = this.tokenizers.get(encoding);
    if (!entry) {
      const worker = new WorkerTokenizer(encoding, this.modules);
      const primed = new PrimedEstimator(worker);
      entry = { worker, primed, estimate: new IncrementalEstimate(primed) };
      this.tokenizers.set(encoding, entry);
    }
    return entry;
  }
}
