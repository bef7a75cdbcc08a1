import { newId } from '../ids';
import type { Identity } from '../context/driftEvents';
import type { PayloadMeasure } from '../context/ledger';
import type { SystemPrompt } from '../prompt/systemPrompt';
import type { ChatSettings } from './ports';

/**
 * The send path's span, from entering `Conversation.request` to the SDK
 * call, and its parts: resolving the model, the gate, building the payload.
 * Only counts already known are added up on it (docs/architecture.md,
 * "Context gate"); the benchmarks read the span from the request's log line.
 */
export class SendSpan {
  private readonly start = performance.now();
  private resolvedAt = this.start;
  private checkedAt = this.start;

  /** The model is resolved. */
  resolved(): void {
    this.resolvedAt = performance.now();
  }

  /** The gate let the request through. */
  checked(): void {
    this.checkedAt = performance.now();
  }

  /** The span up to now, for an attempt that began at `attemptAt`: the gate's part counts the projection made since. */
  describe(attemptAt: number): string {
    const now = performance.now();
    return `send path ${(now - this.start).toFixed(2)} ms (model ${(this.resolvedAt - this.start).toFixed(2)}, gate ${(this.checkedAt - this.resolvedAt + now - attemptAt).toFixed(2)}, payload ${(attemptAt - this.checkedAt).toFixed(2)})`;
  }
}

export interface RequestStart {
  readonly turn: string;
  readonly identity: Identity;
  readonly settings: ChatSettings;
  /** The payload as the gate let it through. */
  readonly measure: PayloadMeasure;
  readonly system: SystemPrompt;
  readonly span: SendSpan;
}

/**
 * One request on its way, across its attempts (retries included): what its
 * traces, its notices and the view need of it.
 */
export class RequestInFlight {
  readonly turn: string;
  readonly identity: Identity;
  readonly settings: ChatSettings;
  readonly measure: PayloadMeasure;
  readonly system: SystemPrompt;
  readonly span: SendSpan;
  /** The estimate of the attempt in flight, and when it started. */
  estNow: number;
  startedAt = Date.now();
  /** Text arrived: the view has the reply's streaming entry. */
  streaming = false;
  private reply: string | undefined;

  constructor(start: RequestStart) {
    this.turn = start.turn;
    this.identity = start.identity;
    this.settings = start.settings;
    this.measure = start.measure;
    this.system = start.system;
    this.span = start.span;
    this.estNow = start.measure.tokens;
  }

  /**
   * The reply's id, named when first needed, after the request is on its way
   * (making an id is not free). The reply's record keeps it, so its entry
   * replaces the streamed one.
   */
  get replyId(): string {
    return (this.reply ??= newId());
  }
}
