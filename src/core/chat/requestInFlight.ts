import { newId } from '../ids';
import type { Identity } from '../modelIdentity';
import type { PayloadMeasure } from '../context/ledger';
import type { GateProjection } from '../context/gate';
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
  /** What the request sends: its messages (the system prompt among them) and tools, for the log line. */
  readonly messages: number;
  readonly tools: number;
}

/**
 * One request on its way, across its attempts (retries included): what its
 * traces, its notices, its overflow and the view need of it.
 */
export class RequestInFlight {
  readonly turn: string;
  readonly identity: Identity;
  readonly settings: ChatSettings;
  readonly measure: PayloadMeasure;
  readonly system: SystemPrompt;
  readonly span: SendSpan;
  readonly messages: number;
  readonly tools: number;
  /** The projection and estimate of the attempt in flight (the gate's `beforeRequest`), and when it started. */
  estNow: number;
  projected: number;
  /** The gate's projection of the attempt in flight: the gauge shows it once the request has ended. */
  projection: GateProjection | undefined;
  startedAt = Date.now();
  private reply: string | undefined;

  constructor(start: RequestStart) {
    this.turn = start.turn;
    this.identity = start.identity;
    this.settings = start.settings;
    this.measure = start.measure;
    this.system = start.system;
    this.span = start.span;
    this.messages = start.messages;
    this.tools = start.tools;
    this.estNow = start.measure.tokens;
    this.projected = start.measure.tokens;
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
