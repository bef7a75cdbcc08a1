import { encodingForModel, type TiktokenEncodingName, type TokenCounter } from '../../core/context';
import type { TemplateFamily } from '../../core/modelIdentity';
import { FamilyTokenizer, type FamilyModules } from '../../core/context/tokenizer/familyTokenizer';
import { WorkerTokenizer, type TokenizerModules } from '../../core/context/tokenizer/workerTokenizer';

/**
 * One tokenizer worker thread per encoding or family, started on first use,
 * so that loading its tables never blocks the extension host. A model whose
 * server says it is of a family Candor ships (Qwen3, Llama 3, DeepSeek V3)
 * is counted with that family's own tokenizer and template; an OpenAI model
 * with its encoding; any other gets none: the conversation counts it with
 * the heuristic, calibrated against the provider's own counts, with a band.
 */
export class Estimators {
  private readonly workers = new Map<TiktokenEncodingName, WorkerTokenizer>();
  private readonly families = new Map<TemplateFamily, FamilyTokenizer>();

  constructor(
    private readonly modules: TokenizerModules,
    private readonly familyModules?: FamilyModules,
  ) {}

  /** The tokenizer for a model, started in the background. */
  warm(model: string, family?: TemplateFamily): void {
    this.counterFor(model, family);
  }

  /** The tokenizer of a model (`family`: what its server's metadata says), or undefined when it is not known. */
  counterFor(model: string, family?: TemplateFamily): TokenCounter | undefined {
    if (family && this.familyModules) return this.family(family, this.familyModules);
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
    for (const family of this.families.values()) family.dispose();
  }

  private family(family: TemplateFamily, modules: FamilyModules): FamilyTokenizer {
    let found = this.families.get(family);
    if (!found) {
      found = new FamilyTokenizer(family, modules);
      this.families.set(family, found);
    }
    return found;
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
