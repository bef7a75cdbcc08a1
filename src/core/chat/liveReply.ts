import { progressPercent, type PromptProgress } from '../provider/chatModel';
import type { ChatEvent } from './ports';
import type { ReplyPart } from './viewMessages';

/**
 * What the view shows of one request while it streams: the wait before the
 * reply (the server's prompt progress, where it reports it), then the
 * reply's one streaming entry, its thinking and its text growing by deltas,
 * until the reply's record replaces it under the same id
 * (docs/architecture.md, "One message, end to end").
 */
export class LiveReply {
  private shown = false;
  private percent = -1;
  /** What arrived, for a reply that fails part-way (kept as a partial record). */
  text = '';
  reasoning = '';

  constructor(
    private readonly id: () => string,
    private readonly emit: (event: ChatEvent) => void,
  ) {}

  /** The server processed more of the prompt: "processing the prompt: 40%", while nothing of the reply shows. */
  progress(progress: PromptProgress): void {
    if (this.shown) return;
    const percent = progressPercent(progress);
    if (percent === this.percent) return;
    this.percent = percent;
    this.emit({ type: 'busy', busy: true, status: `processing the prompt: ${percent}%` });
  }

  /** The request ended: a progress still shown (a reply of tool calls only, an error) is taken down. */
  end(): void {
    if (!this.shown && this.percent >= 0) this.emit({ type: 'busy', busy: true });
  }

  add(part: ReplyPart, text: string): void {
    if (text === '') return;
    if (part === 'text') this.text += text;
    else this.reasoning += text;
    const id = this.id();
    if (!this.shown) {
      this.shown = true;
      if (this.percent >= 0) this.emit({ type: 'busy', busy: true });
      this.emit({ type: 'entry', entry: { id, kind: 'assistant', text: '', ...(part === 'reasoning' ? { reasoning: '' } : {}), streaming: true } });
    }
    this.emit({ type: 'delta', id, text, ...(part === 'reasoning' ? { part } : {}) });
  }
}
