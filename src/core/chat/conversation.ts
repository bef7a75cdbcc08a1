import type { Logger } from '../log';
import { SecretSet } from '../redact';
import { newId } from '../ids';
import type { ChatMessage } from '../messages';
import type { Session } from '../session/session';
import type { ChatModel, CompletedRequest } from '../provider/chatModel';
import { PartialReplyError, RequestError } from '../provider/requestError';
import { Transcript, type TranscriptEntry } from './transcript';
import { shouldCompact } from '../context/compaction';
import type { ToolHost } from './tools';
import type { GaugeState } from '../context/gauge';
import type { ContextGate } from '../context/gate';
import type { Identity } from '../context/driftEvents';
import type { Projection } from '../context/transitions';
import type { DriftTotals } from '../context/driftEvents';

export type { Identity };

export interface ChatSettings {
  readonly contextWindow: number;
  readonly thresholdPercent: number;
  readonly keepTurns: number;
}

export interface Compactor {
  /** Replaces older turns by a summary; throws and leaves the session as it was on failure. */
  compact(session: Session, keepTurns: number, signal: AbortSignal): Promise<{ replaced: number }>;
}

export type ChatEvent =
  | { readonly type: 'entry'; readonly entry: TranscriptEntry }
  | { readonly type: 'delta'; readonly id: string; readonly text: string }
  | { readonly type: 'busy'; readonly busy: boolean }
  | { readonly type: 'gauge'; readonly gauge: GaugeState };

/** One request as the trace store keeps it (no message text, no key). */
export interface RequestTrace {
  readonly session: string;
  readonly turn: string;
  /** The transcript entry of the reply, for thumbs up/down. */
  readonly replyId: string;
  readonly model: string;
  readonly provider: string;
  readonly completed: boolean;
  readonly error?: string;
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  readonly estimate: number;
  readonly toolCalls: readonly string[];
  readonly durationMs: number;
}

export interface ConversationDeps {
  readonly session: Session;
  readonly gate: ContextGate;
  /** The identity requests would have now (settings), for the gauge between requests. */
  readonly identity: () => Identity;
  readonly driftTotals: () => DriftTotals;
  /** The local estimate of a payload, with the tokenizer of the model. */
  readonly estimate: (model: string, messages: readonly ChatMessage[]) => Promise<number>;
  /** The model of the settings in force; its policy says how requests are retried and cut. */
  readonly provider: () => Promise<ChatModel>;
  readonly settings: () => ChatSettings;
  readonly systemPrompt: () => Promise<string>;
  readonly tools: () => ToolHost;
  readonly compactor: Compactor;
  readonly emit: (event: ChatEvent) => void;
  readonly log: Logger;
  /** Told about every request that ended, completed or not. */
  readonly trace?: (trace: RequestTrace) => void;
  /**
   * The keys to keep out of notices, partial replies and log lines (the
   * session file and the view). Without it, only credential patterns are
   * removed. The user's own messages are kept as typed.
   */
  readonly secrets?: SecretSet;
}

/** Tool rounds per turn; a model that keeps calling tools past this is stopped and told so. */
const MAX_TOOL_ROUNDS = 12;

/**
 * The chat loop of one session. A turn is what one user message starts; each
 * call to the provider inside it is a request, and each request passes the
 * context gate first.
 */
export class Conversation {
  private running: AbortController | undefined;
  private readonly secrets: SecretSet;
  private readonly transcript = new Transcript();

  constructor(private readonly deps: ConversationDeps) {
    this.secrets = deps.secrets ?? new SecretSet();
    // What the view shows comes from the records, through the same mapping a
    // reload uses; only a reply still streaming is shown before its record.
    for (const record of deps.session.all()) this.transcript.add(record);
    deps.session.onAppend((record) => {
      for (const entry of this.transcript.add(record)) deps.emit({ type: 'entry', entry });
    });
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  get session(): Session {
    return this.deps.session;
  }

  async send(text: string): Promise<void> {
    if (this.running) {
      this.notice(undefined, 'warning', 'A reply is still streaming: press Stop first, or wait for it.');
      return;
    }
    const turn = newId();
    this.deps.session.addMessage(turn, { role: 'user', content: text });
    await this.run(turn);
  }

  /** Sends the newest failed turn again, from where it stopped. */
  async retry(): Promise<void> {
    if (this.running) return;
    const turn = this.deps.session.retryableTurn();
    if (!turn) {
      this.notice(undefined, 'info', 'There is nothing to retry.');
      return;
    }
    await this.run(turn);
  }

  stop(): void {
    this.running?.abort();
  }

  /** `Candor: Compact Context`: on demand, drops the anchor. */
  async compactNow(signal?: AbortSignal): Promise<{ replaced: number }> {
    if (this.running) throw new Error('A reply is streaming; compact after it ends.');
    const result = await this.deps.compactor.compact(this.deps.session, this.deps.settings().keepTurns, signal ?? new AbortController().signal);
    this.deps.gate.afterCompaction();
    this.persistGate();
    await this.publishGauge();
    return result;
  }

  async publishGauge(): Promise<GaugeState> {
    const identity = this.deps.identity();
    const est = await this.deps.estimate(identity.model, await this.payload());
    // Between requests the gauge warns only while a window is open and has
    // warned; `project` would answer as if the next request were being sent.
    return this.publishProjection({ ...this.deps.gate.project(identity, est), warning: this.deps.gate.warning });
  }

  private publishProjection(projection: Projection): GaugeState {
    const settings = this.deps.settings();
    const anchor = projection.anchor;
    const gauge: GaugeState = {
      projected: projection.projected,
      estimate: projection.estNow,
      anchored: projection.anchored,
      warning: projection.warning,
      window: settings.contextWindow,
      thresholdPercent: settings.thresholdPercent,
      anchor: anchor ? { real: anchor.real, est: anchor.est, model: anchor.identity.model, provider: anchor.identity.provider } : undefined,
      totals: this.deps.driftTotals(),
    };
    this.deps.emit({ type: 'gauge', gauge });
    return gauge;
  }

  private async payload(): Promise<ChatMessage[]> {
    return [{ role: 'system', content: await this.deps.systemPrompt() }, ...this.deps.session.history()];
  }

  private async run(turn: string): Promise<void> {
    const controller = new AbortController();
    this.running = controller;
    this.deps.emit({ type: 'busy', busy: true });
    try {
      for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
        if (!(await this.saved(turn))) return;
        const reply = await this.request(turn, controller.signal);
        if (!reply) return;
        if (reply.toolCalls.length === 0) return;
        await this.runTools(turn, reply, controller.signal);
        if (controller.signal.aborted) {
          this.notice(turn, 'info', 'Stopped after the tool call.', true);
          return;
        }
      }
      this.notice(turn, 'warning', `Stopped after ${MAX_TOOL_ROUNDS} tool rounds in one turn. Send a message to go on.`);
    } finally {
      this.running = undefined;
      await this.deps.session.flushed().catch((err: unknown) => this.deps.log.error(`session file: ${String(err)}`));
      this.deps.emit({ type: 'busy', busy: false });
      await this.publishGauge().catch((err: unknown) => this.deps.log.error(`gauge: ${String(err)}`));
    }
  }

  /** One request, with the gate before it. Returns undefined when the turn ended in an error. */
  private async request(turn: string, signal: AbortSignal): Promise<CompletedRequest | undefined> {
    const settings = this.deps.settings();
    let provider: ChatModel;
    try {
      provider = await this.deps.provider();
    } catch (err) {
      this.notice(turn, 'error', err instanceof Error ? err.message : String(err), true);
      return undefined;
    }
    let payload = await this.payload();
    const model = provider.identity.model;
    let estNow = await this.deps.estimate(model, payload);
    const over = (est: number): boolean => shouldCompact(this.deps.gate.project(provider.identity, est).projected, settings.contextWindow, settings.thresholdPercent);
    if (over(estNow)) {
      payload = await this.compactBeforeRequest(turn, signal, settings.keepTurns);
      estNow = await this.deps.estimate(model, payload);
      if (over(estNow)) {
        // At most one compaction per request: warn, never summarize twice.
        this.notice(turn, 'warning', 'Still above the compaction threshold right after compacting. The newest turns alone are that large; consider a new session.');
      }
    }
    if (signal.aborted) {
      this.notice(turn, 'info', 'Stopped.', true);
      return undefined;
    }
    const replyId = newId();
    let started = false;
    let startedAt = Date.now();
    const record = (fields: Pick<RequestTrace, 'completed' | 'error' | 'promptTokens' | 'completionTokens' | 'toolCalls'>): void => {
      try {
        this.deps.trace?.({ session: this.deps.session.id, turn, replyId, model: provider.identity.model, provider: provider.identity.provider, estimate: estNow, durationMs: Date.now() - startedAt, ...fields });
      } catch (err) {
        this.deps.log.warn(`trace: ${String(err)}`);
      }
    };
    try {
      // Each attempt, retries included, is a request: it passes the gate and is traced.
      const result = await provider.stream({ messages: payload, tools: this.deps.tools().specs() }, {
        signal,
        onAttempt: () => {
          startedAt = Date.now();
          const projection = this.deps.gate.beforeRequest(provider.identity, estNow);
          if (projection.newWarning) {
            this.notice(turn, 'warning', `The provider did not report usage for the last reply: the context count is now an estimate (${provider.identity.model} @ ${provider.identity.provider}). This is counted in the drift view.`);
          }
          this.deps.log.info(`request: ${provider.identity.model} @ ${provider.identity.provider}, ${payload.length} messages, est ${estNow}, projected ${projection.projected} (${projection.anchored ? 'anchored' : 'estimated'})`);
          this.publishProjection(projection);
        },
        onText: (delta) => {
          if (!started) {
            started = true;
            this.deps.emit({ type: 'entry', entry: { id: replyId, kind: 'assistant', text: '', streaming: true } });
          }
          this.deps.emit({ type: 'delta', id: replyId, text: delta });
        },
        onAttemptEnd: (ending) => {
          if (ending.completed) {
            const { result } = ending;
            this.deps.gate.afterRequest({ completed: true, promptTokens: result.usage?.promptTokens, estSent: estNow });
            this.deps.log.info(`completed: finish ${result.finishReason}, prompt_tokens ${result.usage?.promptTokens ?? 'not reported'}`);
            record({ completed: true, promptTokens: result.usage?.promptTokens, completionTokens: result.usage?.completionTokens, toolCalls: result.toolCalls.map((c) => c.function.name) });
          } else {
            this.deps.gate.afterRequest({ completed: false, estSent: estNow });
            record({ completed: false, error: ending.error.kind, toolCalls: [] });
          }
          this.persistGate();
        },
        onRetry: (n) => {
          this.deps.log.warn(`retry ${n.attempt}/${n.of} in ${n.delayMs} ms after ${n.error.kind} ${n.error.status ?? ''}`);
          this.notice(turn, 'info', `${n.error.describe()} Retrying (${n.attempt} of ${n.of}) in ${(n.delayMs / 1000).toFixed(1)} s…`);
        },
      });
      const message: ChatMessage = result.toolCalls.length > 0
        ? { role: 'assistant', content: result.content || null, tool_calls: result.toolCalls }
        : { role: 'assistant', content: result.content };
      // The reply keeps the id its streaming entry had: its record's entry replaces the streamed one.
      this.deps.session.addMessage(turn, message, replyId);
      return result;
    } catch (err) {
      const error = err instanceof RequestError ? err : new RequestError('cut', err instanceof Error ? err.message : String(err));
      if (err instanceof PartialReplyError && err.partial) {
        // A partial reply is only ever shown, never sent again: it is stored redacted.
        // Under the streaming entry's id: the streamed text becomes an incomplete reply.
        this.deps.session.append({ type: 'partial', id: replyId, turn, text: this.secrets.redact(err.partial) });
      }
      this.deps.log.error(this.secrets.redact(`request failed: ${error.kind} ${error.status ?? ''} ${error.message}`));
      this.notice(turn, error.kind === 'cancelled' ? 'info' : 'error', error.describe(), true);
      return undefined;
    }
  }

  private async compactBeforeRequest(turn: string, signal: AbortSignal, keepTurns: number): Promise<ChatMessage[]> {
    this.notice(turn, 'info', 'The context passed the compaction threshold: summarizing older turns…');
    try {
      const result = await this.deps.compactor.compact(this.deps.session, keepTurns, signal);
      this.deps.gate.afterCompaction();
      this.persistGate();
      this.deps.log.info(`compaction: replaced ${result.replaced} messages`);
    } catch (err) {
      // A failed summary leaves the history as it was; the request goes on.
      this.deps.log.warn(this.secrets.redact(`compaction failed: ${String(err)}`));
      this.notice(turn, 'warning', `Compaction failed, the history is unchanged: ${err instanceof Error ? err.message : String(err)}`);
    }
    return this.payload();
  }

  private async runTools(turn: string, reply: CompletedRequest, signal: AbortSignal): Promise<void> {
    const tools = this.deps.tools();
    for (const call of reply.toolCalls) {
      let output: string;
      if (signal.aborted) output = 'The user stopped the turn before this tool ran.';
      else {
        try {
          output = await tools.run(call.function.name, call.function.arguments, signal);
        } catch (err) {
          output = `Error: ${err instanceof Error ? err.message : String(err)}`;
        }
      }
      this.deps.log.info(`tool ${call.function.name}: ${Buffer.byteLength(output)} bytes`);
      this.deps.session.addMessage(turn, { role: 'tool', tool_call_id: call.id, content: output });
    }
  }

  private persistGate(): void {
    this.deps.session.append({ type: 'gate', state: this.deps.gate.snapshot() });
  }

  /**
   * The model is asked only about records already on disk, so a crash never
   * leaves a reply to a message the file lacks. A write that failed ends the
   * turn with an error that can be retried.
   */
  private async saved(turn: string): Promise<boolean> {
    try {
      await this.deps.session.flushed();
      return true;
    } catch (err) {
      this.deps.log.error(`session file: ${String(err)}`);
      this.notice(turn, 'error', `The session file could not be written: ${err instanceof Error ? err.message : String(err)}`, true);
      return false;
    }
  }

  /** Notices are built from errors (a provider's body among them): stored and shown redacted. */
  private notice(turn: string | undefined, level: 'info' | 'warning' | 'error', raw: string, retryable = false): void {
    this.deps.session.append({ type: 'notice', id: newId(), turn, level, text: this.secrets.redact(raw), retryable: retryable || undefined });
  }
}
