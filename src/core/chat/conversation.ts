import { SecretSet } from '../redact';
import { newId } from '../ids';
import type { ChatMessage, ToolSpec } from '../messages';
import type { SystemPrompt } from '../prompt/systemPrompt';
import type { Session } from '../session/session';
import type { ChatModel, CompletedRequest, ModelEvent } from '../provider/chatModel';
import { RequestError } from '../provider/requestError';
import type { RetryNotice } from '../provider/retry';
import { gaugeHeadline, gaugeOf, TOOLS_CROWD_PERCENT, type GaugeState, type ToolShare } from '../context/gauge';
import type { GateProjection } from '../context/gate';
import type { Identity } from '../modelIdentity';
import { PayloadLedger, type PayloadMeasure } from '../context/ledger';
import { ToolRenderings } from '../context/toolRendering';
import { ServerCounts } from '../context/serverCounts';
import { errorMessage } from '../errorMessage';
import { SendGate } from './sendGate';
import { retryableTurn, suspectText, warningText } from './gateNotices';
import { RequestInFlight, SendSpan } from './requestInFlight';
import { LiveReply } from './liveReply';
import { keptReply } from './replyRecord';
import { recoverFromOverflow, type OverflowDeps } from './overflowRecovery';
import type { ChatSettings, ConversationDeps } from './ports';
import { lastCompaction } from '../session/history';
import type { Subscription } from '../subscription';

export type { Identity };
export type { RequestTrace } from './ports';

/** Tool rounds per turn; a model that keeps calling tools past this is stopped and told so. */
const MAX_TOOL_ROUNDS = 12;

/** How a request ended: its last event. */
type Ending = Extract<ModelEvent, { type: 'finish' } | { type: 'error' }>;

/**
 * The chat loop of one session. A turn is what one user message starts; each
 * call to the provider inside it is a request, and each request passes the
 * context gate first.
 */
export class Conversation {
  private running: AbortController | undefined;
  private readonly secrets: SecretSet;
  /** Every message counted as it arrives, off the send path (docs/architecture.md, "Context gate"). */
  private readonly ledger: PayloadLedger;
  private readonly sendGate: SendGate;
  /** The tool list as the provider's family renders it, rendered again only when the list or the family changes. */
  private readonly toolRenderings = new ToolRenderings();
  /** The server's own counts of the payload, when it has a count endpoint. */
  private readonly serverCounts = new ServerCounts();
  /** The chat said the tool definitions crowd the window: once a session. */
  private toolsCrowdSaid = false;
  /** The pairs (user's window / server's window) the chat has named. */
  private readonly windowsSaid = new Set<string>();
  /** The ledger follows the session's appends until `dispose`. */
  private readonly following: Subscription;

  constructor(private readonly deps: ConversationDeps) {
    this.secrets = deps.secrets ?? new SecretSet();
    this.ledger = new PayloadLedger((err) => deps.log.warn(`tokenizer: ${errorMessage(err)}; counting with the heuristic`));
    this.ledger.useCounter(deps.tokenizer?.(deps.identity().model));
    this.ledger.reset(deps.session.history(), lastCompaction(deps.session.all()));
    this.sendGate = new SendGate({
      session: deps.session,
      gate: deps.gate,
      compactor: deps.compactor,
      log: deps.log,
      secrets: this.secrets,
      notice: (turn, level, text, retryable) => this.notice(turn, level, text, retryable),
      persistGate: () => this.persistGate(),
    });
    // What the view shows of the records comes from the session's live
    // transcript (TranscriptPages); only a reply still streaming is emitted here.
    this.following = deps.session.onAppend((record) => {
      if (record.type === 'message') this.ledger.append(record.message);
      else if (record.type === 'compaction') this.ledger.reset(deps.session.history(), record.id);
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
    const turn = retryableTurn(this.deps.session.all());
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
    if (result.replaced > 0) {
      this.deps.gate.afterCompaction(result.replaced);
      this.persistGate();
    }
    await this.publishGauge();
    return result;
  }

  /** The session ends or the extension stops: the session is no longer followed, and a loss window still open is written down, with the gate's state. */
  dispose(): void {
    this.following.dispose();
    this.running?.abort();
    this.deps.gate.close();
    this.persistGate();
  }

  /** `system`: the system prompt of the request just made, when there was one; else it is built. */
  async publishGauge(system?: SystemPrompt): Promise<GaugeState> {
    const identity = this.deps.identity();
    const tools = this.deps.tools().specs();
    const measure = this.measure(identity, system ?? (await this.systemPrompt(tools)), tools);
    // Between requests the gauge warns only while a window is open and has
    // warned; `project` would answer as if the next request were being sent.
    return this.publishProjection({ ...this.deps.gate.project(identity, measure), warning: this.deps.gate.warning });
  }

  private publishProjection(projection: GateProjection): GaugeState {
    const settings = this.deps.settings();
    const tools = this.toolShare();
    const gauge = gaugeOf(projection, settings, this.deps.driftTotals(), tools);
    this.deps.emit({ type: 'gauge', gauge, headline: gaugeHeadline(gauge) });
    if (tools && !this.toolsCrowdSaid && tools.tokens * 100 > settings.contextWindow * TOOLS_CROWD_PERCENT) {
      this.toolsCrowdSaid = true;
      this.notice(undefined, 'warning', `The tool definitions alone take ${tools.tokens.toLocaleString('en-US')} tokens, more than ${TOOLS_CROWD_PERCENT}% of the ${settings.contextWindow.toLocaleString('en-US')}-token window${tools.servers[0] ? ` ('${tools.servers[0].name}' brings ${tools.servers[0].tokens.toLocaleString('en-US')})` : ''}. Turn servers off with "Candor: MCP Servers".`);
    }
    return gauge;
  }

  /** What the tool definitions take, from the counts the ledger holds (measured when the list changed). */
  private toolShare(): ToolShare | undefined {
    const host = this.deps.tools();
    const specs = host.specs();
    if (specs.length === 0) return undefined;
    const counts = this.ledger.toolCounts(this.toolRenderings.of(this.deps.identity(), specs));
    const tokensOf = new Map(counts.tools.map((t) => [t.name, t.tokens]));
    const servers = [...(host.groups?.() ?? [])].map(([name, names]) => ({ name, tools: names.length, tokens: names.reduce((n, tool) => n + (tokensOf.get(tool) ?? 0), 0) }));
    return { count: specs.length, tokens: counts.tokens, servers: servers.sort((a, b) => b.tokens - a.tokens) };
  }

  /**
   * The payload measured from counts already known: the send path's whole
   * cost for the estimate. A server that counts prompts itself is asked for
   * this payload's count in the background; the gauge shows it when it lands.
   */
  private measure(identity: Identity, system: SystemPrompt, tools: readonly ToolSpec[]): PayloadMeasure {
    this.ledger.useCounter(this.deps.tokenizer?.(identity.model));
    const measure = this.ledger.measure(system.text, this.toolRenderings.of(identity, tools));
    this.serverCounts.ask(identity, measure.mark, measure.tokens, this.deps.serverCount?.(identity), () => ({ messages: this.payload(system), tools }), (count) => {
      this.deps.gate.serverCounted(count);
      if (!this.running) this.publishGauge(system).catch((err: unknown) => this.deps.log.error(`gauge: ${String(err)}`));
    });
    return measure;
  }

  private payload(system: SystemPrompt): ChatMessage[] {
    // concat copies the history in one block; a spread walks it element by element.
    const head: ChatMessage[] = [{ role: 'system', content: system.text }];
    return head.concat(this.deps.session.history());
  }

  private systemPrompt(tools: readonly ToolSpec[]): Promise<SystemPrompt> {
    return this.deps.prompt.systemPrompt(tools.map((t) => t.function.name));
  }

  private async run(turn: string): Promise<void> {
    const controller = new AbortController();
    this.running = controller;
    this.deps.emit({ type: 'busy', busy: true });
    // Built once per request (prompt file, memory, tool list), and reused for the gauge.
    let system: SystemPrompt | undefined;
    try {
      for (let round = 0; round < MAX_TOOL_ROUNDS; round++) {
        if (!(await this.saved(turn))) return;
        await this.deps.tools().prepare?.(controller.signal);
        const tools = this.deps.tools().specs();
        system = await this.systemPrompt(tools);
        const reply = await this.request(turn, controller.signal, system, tools);
        // A reply cut at the output limit ends the turn: its calls were not run (keptReply).
        if (!reply || reply.toolCalls.length === 0 || reply.finishReason === 'length') return;
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
      // The turn's end: the gauge shows what the next request would send.
      await this.publishGauge(system).catch((err: unknown) => this.deps.log.error(`gauge: ${String(err)}`));
    }
  }

  /**
   * One request, top to bottom (docs/architecture.md, "One message, end to
   * end"): the model, the send gate (compaction), then the model's events,
   * one loop per attempt (the gate's `beforeRequest`, the reply's deltas,
   * `afterRequest`), the record, and the gauge once. A refusal as too large
   * is recovered from once (overflowRecovery.ts). Returns the completed
   * reply, or undefined when the turn ended (the chat says why).
   */
  private async request(turn: string, signal: AbortSignal, system: SystemPrompt, tools: readonly ToolSpec[], afterOverflow = false): Promise<CompletedRequest | undefined> {
    // The send path, from here to the SDK call: only counts already known are added up.
    const span = new SendSpan();
    const provider = await this.model(turn);
    if (!provider) return undefined;
    span.resolved();
    const settings = this.deps.settings();
    this.sayWindow(turn, settings);
    const identity = provider.identity;
    const measure = (): PayloadMeasure => this.measure(identity, system, tools);
    const decision = await this.sendGate.check({ turn, identity, settings, signal, measure });
    if (!decision.send) return undefined;
    span.checked();
    if (signal.aborted) {
      this.notice(turn, 'info', 'Stopped.', true);
      return undefined;
    }
    const payload = this.payload(system);
    const flight = new RequestInFlight({ turn, identity, settings, measure: decision.measure, system, span, messages: payload.length, tools: tools.length });
    const live = new LiveReply(() => flight.replyId, this.deps.emit);
    const ending = await this.consume(flight, live, provider.stream({ messages: payload, tools }, { signal }));
    if (ending.type === 'finish') this.keepReply(flight, ending.reply);
    else if (ending.error.overflow && ending.error.kind !== 'cancelled') {
      const input = { turn, identity, overflow: ending.error.overflow, projected: flight.projected, est: flight.estNow, retried: afterOverflow, signal, measure };
      this.sendGate.noteOverflow(identity, ending.error.overflow.real, flight.estNow);
      if (await recoverFromOverflow(this.overflowDeps(), input)) return this.request(turn, signal, system, tools, true);
    } else this.replyFailed(flight, live, ending.error);
    // The projection the request was sent with, computed once by the gate; with the warning its end left.
    if (flight.projection) this.publishProjection({ ...flight.projection, warning: this.deps.gate.warning });
    return ending.type === 'finish' ? ending.reply : undefined;
  }

  /** The model's events, one attempt after another; returns how the request ended. */
  private async consume(flight: RequestInFlight, live: LiveReply, events: AsyncIterable<ModelEvent>): Promise<Ending> {
    let ending: Ending | undefined;
    let open = false;
    for await (const event of events) {
      switch (event.type) {
        case 'attempt':
          open = true;
          this.beginAttempt(flight);
          break;
        case 'progress':
          live.progress(event.progress);
          break;
        case 'text':
        case 'reasoning':
          live.add(event.type, event.text);
          break;
        case 'finish':
        case 'error':
          ending = event;
          // Stopped while waiting to retry: no attempt was open, the gate and the trace have had its end.
          if (open) this.endAttempt(flight, event);
          open = false;
          break;
        case 'retry':
          this.announceRetry(flight.turn, event.notice);
          break;
        default:
          // Tool-call deltas and usage: the finish carries them whole.
          break;
      }
    }
    live.end();
    return ending ?? { type: 'error', error: new RequestError('cut', 'the request ended without a reply'), partial: live.text };
  }

  /** The model of the settings in force; one that cannot be had ends the turn with an error that can be retried. */
  private async model(turn: string): Promise<ChatModel | undefined> {
    try {
      return await this.deps.provider();
    } catch (err) {
      this.notice(turn, 'error', errorMessage(err), true);
      return undefined;
    }
  }

  /** An attempt begins: the gate projects it, and its log line gives the send path (as the benchmarks read it). */
  private beginAttempt(flight: RequestInFlight): void {
    const attemptAt = performance.now();
    flight.startedAt = Date.now();
    const { turn, identity } = flight;
    const projection = this.deps.gate.beforeRequest(identity, flight.measure);
    flight.projection = projection;
    flight.estNow = projection.estNow;
    flight.projected = projection.projected;
    if (projection.newWarning) this.notice(turn, 'warning', warningText(projection, identity));
    const span = flight.span.describe(attemptAt);
    this.deps.log.info(`request: ${identity.model} @ ${identity.provider}, ${flight.messages} messages, ${flight.tools} tools, est ${flight.estNow} (${projection.estimator}), projected ${projection.projected} (${projection.anchored ? 'anchored' : 'estimated'}), ${span}`);
  }

  /** An attempt ended: the gate learns how, the chat says what the gate found, and the trace store is told. */
  private endAttempt(flight: RequestInFlight, ending: Ending): void {
    this.settle(flight, ending);
    this.traceAttempt(flight, ending);
  }

  private announceRetry(turn: string, n: RetryNotice): void {
    this.deps.log.warn(`retry ${n.attempt}/${n.of} in ${n.delayMs} ms after ${n.error.kind} ${n.error.status ?? ''}`);
    this.notice(turn, 'info', `${n.error.describe()} Retrying (${n.attempt} of ${n.of}) in ${(n.delayMs / 1000).toFixed(1)} s…`);
  }

  /**
   * The reply's record, under the id its streaming entry had: its entry
   * replaces the streamed one. A reply cut at the output limit keeps its
   * calls as cut calls, each with a tool result saying so (replyRecord.ts).
   */
  private keepReply(flight: RequestInFlight, result: CompletedRequest): void {
    const kept = keptReply(result, flight.settings);
    const { message, cutResults, ...shown } = kept;
    this.deps.session.append({ type: 'message', id: flight.replyId, turn: flight.turn, message, ...shown });
    for (const toolResult of cutResults) this.deps.session.addMessage(flight.turn, toolResult);
    if (kept.cut) this.deps.log.warn(`reply cut at the output limit (finish_reason length, completion_tokens ${result.usage?.completionTokens ?? 'not reported'}); ${result.toolCalls.length} tool call(s) not run`);
  }

  private replyFailed(flight: RequestInFlight, live: LiveReply, error: RequestError): void {
    if (live.text || live.reasoning) {
      // A partial reply is only ever shown, never sent again: it is stored redacted.
      // Under the streaming entry's id: the streamed text becomes an incomplete reply.
      this.deps.session.append({
        type: 'partial', id: flight.replyId, turn: flight.turn, text: this.secrets.redact(live.text), ...(live.reasoning ? { reasoning: this.secrets.redact(live.reasoning) } : {}),
      });
    }
    this.deps.log.error(this.secrets.redact(`request failed: ${error.kind} ${error.status ?? ''} ${error.message}`));
    this.notice(flight.turn, error.kind === 'cancelled' ? 'info' : 'error', error.describe(), true);
  }

  /** Tells the trace store how an attempt ended; a store that throws costs a log line, never the turn. */
  private traceAttempt(flight: RequestInFlight, ending: Ending): void {
    const fields = ending.type === 'finish'
      ? { completed: true, promptTokens: ending.reply.usage?.promptTokens, completionTokens: ending.reply.usage?.completionTokens, toolCalls: ending.reply.toolCalls.map((c) => c.function.name) }
      : { completed: false, error: ending.error.kind, toolCalls: [] };
    try {
      this.deps.trace?.({ session: this.deps.session.id, turn: flight.turn, replyId: flight.replyId, model: flight.identity.model, provider: flight.identity.provider, estimate: flight.estNow, durationMs: Date.now() - flight.startedAt, prompt: flight.system.prompt, ...fields });
    } catch (err) {
      this.deps.log.warn(`trace: ${String(err)}`);
    }
  }

  /** An attempt ended: the gate learns how, and the chat says what the gate found, as the stream ends. */
  private settle(flight: RequestInFlight, ending: Ending): void {
    const { turn, identity } = flight;
    if (ending.type === 'finish') {
      // Read afresh: the host reads a local server's window again before a reply's finish reaches here (Ollama reports it only once loaded).
      const settings = this.deps.settings();
      const result = ending.reply;
      const settled = this.deps.gate.afterRequest({ completed: true, promptTokens: result.usage?.promptTokens, usageUnsupported: result.usageUnsupported, contextWindow: settings.contextWindow });
      if (settled.events.some((e) => e.event === 'anchor_loss' && e.reason === 'suspect-usage')) {
        this.notice(turn, 'warning', suspectText(result.usage?.promptTokens ?? 0, flight.estNow, settings.contextWindow, settings.serverKind));
      }
      // A reply without usage warns as its stream ends, not one request later (docs/architecture.md, "Context gate").
      if (settled.newWarning) {
        this.notice(turn, 'warning', warningText(settled, identity));
        this.deps.log.warn(`anchor loss: ${identity.model} @ ${identity.provider} reported no usage; the context count is an estimate until it does`);
      }
      this.deps.log.info(`completed: finish ${result.finishReason}, prompt_tokens ${result.usage?.promptTokens ?? 'not reported'}`);
    } else {
      this.deps.gate.afterRequest({ completed: false });
    }
    this.persistGate();
  }

  /** When the user's window and the server's differ, the chat says which one counts: once per pair. */
  private sayWindow(turn: string, settings: ChatSettings): void {
    const { serverWindow: server, windowSetting: set } = settings;
    if (server === undefined || set === undefined || server === set) return;
    const key = `${set}/${server}`;
    if (this.windowsSaid.has(key)) return;
    this.windowsSaid.add(key);
    const n = (x: number): string => x.toLocaleString('en-US');
    this.notice(turn, server < set ? 'warning' : 'info', server < set
      ? `The server runs a context window of ${n(server)} tokens, smaller than candor.contextWindow (${n(set)}): Candor counts against ${n(server)}.`
      : `candor.contextWindow (${n(set)}) is smaller than the ${n(server)}-token window the server runs: Candor counts against ${n(set)}, as you set it.`);
  }

  private overflowDeps(): OverflowDeps {
    const { session, gate, compactor, settings, log, recordOverflow, onOverflow } = this.deps;
    return {
      session, gate, compactor, settings, log,
      notice: (turn, level, text, retryable) => this.notice(turn, level, text, retryable),
      persistGate: () => this.persistGate(),
      ...(recordOverflow ? { recordOverflow } : {}),
      ...(onOverflow ? { onOverflow } : {}),
    };
  }

  private async runTools(turn: string, reply: CompletedRequest, signal: AbortSignal): Promise<void> {
    const tools = this.deps.tools();
    for (const call of reply.toolCalls) {
      let output: string;
      if (signal.aborted) output = 'The user stopped the turn before this tool ran.';
      else {
        try {
          output = await tools.run(call.function.name, call.function.arguments, signal, { turn, callId: call.id, session: this.deps.session, show: (entry) => this.deps.emit({ type: 'entry', entry }) });
        } catch (err) {
          output = `Error: ${errorMessage(err)}`;
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
      this.notice(turn, 'error', `The session file could not be written: ${errorMessage(err)}`, true);
      return false;
    }
  }

  /** Notices are built from errors (a provider's body among them): stored and shown redacted. */
  private notice(turn: string | undefined, level: 'info' | 'warning' | 'error', raw: string, retryable = false): void {
    this.deps.session.append({ type: 'notice', id: newId(), turn, level, text: this.secrets.redact(raw), retryable: retryable || undefined });
  }
}
