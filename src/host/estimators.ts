import { estimatorForModel, IncrementalEstimate, type RanksLoader } from '../core/gate';
import type { ChatMessage } from '../core/messages';

/**
 * One incremental estimate per model's tokenizer, loaded lazily (the ranks
 * are megabytes; a user of the heuristic never pays for them).
 */
export class Estimators {
  private readonly byModel = new Map<string, Promise<IncrementalEstimate>>();
  private current: IncrementalEstimate | undefined;

  constructor(private readonly loader?: RanksLoader) {}

  async use(model: string): Promise<void> {
    let pending = this.byModel.get(model);
    if (!pending) {
      pending = estimatorForModel(model, this.loader).then((e) => new IncrementalEstimate(e));
      this.byModel.set(model, pending);
    }
    this.current = await pending;
  }

  estimate(messages: readonly ChatMessage[]): number {
    if (!this.current) throw new Error('no estimator selected');
    return this.current.total(messages);
  }
}

