import OpenAI from 'openai';
import type { ChatMessage, ToolCall, ToolSpec } from '../messages';
import { redact } from '../redact';
import type { CompletedRequest, ModelEvent, Usage } from './chatModel';
import { RequestError } from './requestError';
import { parseOverflow, providerErrorOf } from './overflow';
import { ThinkSplitter, type Piece } from './thinkSplit';
import { Watchdog, type Timeout, type Timers } from './watchdog';
import { errorMessage } from '../errorMessage';
import { isKindError } from '../kindError';

/** One attempt as the SDK is asked for it; the adapter fills in the model and the policy. */
export interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolSpec[];
  readonly maxOutputTokens?: number;
  /** Ask for usage with `stream_options` (default); false for a server that refuses the option. */
  readonly includeUsage?: boolean;
  /** Ask llama.cpp for `prompt_progress` chunks (`return_progress`); other servers may refuse an unknown field. */
  readonly returnProgress?: boolean;
}

export interface AttemptOptions {
  readonly idleTimeoutMs: number;
  /** 0: no limit on the wait for the first live chunk. */
  readonly firstTokenTimeoutMs: number;
  readonly signal?: AbortSignal;
  /** The watchdog's clock (tests). */
  readonly timers?: Timers;
}

/** The events of one attempt: what `ChatModel.stream` yields between `attempt` and the next `retry`. */
export type AttemptEvent = Exclude<ModelEvent, { type: 'attempt' } | { type: 'retry' }>;

/** The fields of a chunk the SDK's types do not name: llama.cpp's progress, reasoning deltas. */
interface LooseChunk {
  readonly prompt_progress?: { readonly total?: unknown; readonly cache?: unknown; readonly processed?: unknown };
}
interface LooseDelta {
  readonly reasoning_content?: unknown;
  readonly reasoning?: unknown;
}

/** What one attempt has gathered so far. */
class Reply {
  content = '';
  reasoning = '';
  finishReason: string | undefined;
  usage: Usage | undefined;
  readonly calls = new Map<number, { id: string; name: string; args: string }>();
  readonly split = new ThinkSplitter();

  /** The events of a chunk, and whether it was live (anything but an empty delta). */
  read(chunk: OpenAI.Chat.Completions.ChatCompletionChunk): { events: AttemptEvent[]; live: boolean } {
    const events: AttemptEvent[] = [];
    const progress = (chunk as unknown as LooseChunk).prompt_progress;
    if (progress && typeof progress.total === 'number' && typeof progress.processed === 'number') {
      events.push({ type: 'progress', progress: { total: progress.total, processed: progress.processed, cached: typeof progress.cache === 'number' ? progress.cache : 0 } });
    }
    if (chunk.usage && typeof chunk.usage.prompt_tokens === 'number') {
      this.usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
      events.push({ type: 'usage', usage: this.usage });
    }
    const choice = chunk.choices?.[0];
    const delta = choice?.delta;
    const loose = (delta ?? {}) as LooseDelta;
    const thought = typeof loose.reasoning_content === 'string' ? loose.reasoning_content : typeof loose.reasoning === 'string' ? loose.reasoning : '';
    if (thought) events.push(this.piece({ kind: 'reasoning', text: thought }));
    if (delta?.content) for (const piece of this.split.push(delta.content)) events.push(this.piece(piece));
    for (const call of delta?.tool_calls ?? []) {
      const slot = this.calls.get(call.index) ?? { id: '', name: '', args: '' };
      if (call.id) slot.id = call.id;
      const name = call.function?.name ?? '';
      const args = call.function?.arguments ?? '';
      slot.name += name;
      slot.args += args;
      this.calls.set(call.index, slot);
      events.push({ type: 'tool-call', index: call.index, name, arguments: args });
    }
    if (choice?.finish_reason) this.finishReason = choice.finish_reason;
    // Text the think splitter holds back (a `<thi` that may open a block) is live too.
    const live = events.some((e) => e.type !== 'usage') || !!delta?.content || !!delta?.tool_calls?.length;
    return { events, live };
  }

  /** The end of the stream: what the think splitter held back. */
  end(): AttemptEvent[] {
    return this.split.end().map((piece) => this.piece(piece));
  }

  piece(piece: Piece): AttemptEvent {
    if (piece.kind === 'text') this.content += piece.text;
    else this.reasoning += piece.text;
    return { type: piece.kind, text: piece.text };
  }

  completed(finishReason: string): CompletedRequest {
    const toolCalls: ToolCall[] = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, c]) => ({ id: c.id || `call_${index}`, type: 'function', function: { name: c.name, arguments: c.args } }));
    return { content: this.content, reasoning: this.reasoning, toolCalls, finishReason, ...(this.usage ? { usage: this.usage } : {}) };
  }
}

/**
 * One attempt, streamed: its events, ending with `finish` (the stream ended
 * with a finish_reason) or `error` (every other ending, with a RequestError
 * whose kind says why). Never throws.
 */
export async function* streamAttempt(client: OpenAI, request: ChatRequest, options: AttemptOptions): AsyncGenerator<AttemptEvent> {
  const controller = new AbortController();
  const onOuterAbort = (): void => controller.abort();
  options.signal?.addEventListener('abort', onOuterAbort);
  if (options.signal?.aborted) controller.abort();
  const watchdog = new Watchdog({ firstTokenMs: options.firstTokenTimeoutMs, idleMs: options.idleTimeoutMs }, () => controller.abort(), options.timers);
  const reply = new Reply();
  const context = (): FailureContext => ({
    timedOut: watchdog.timedOut, limits: options, cancelled: options.signal?.aborted === true, gotText: reply.content.length > 0, url: requestUrl(client.baseURL, '/chat/completions'),
  });
  let failure: RequestError | undefined;
  try {
    watchdog.start();
    const stream = await client.chat.completions.create(body(request), { signal: controller.signal });
    for await (const chunk of stream) {
      const { events, live } = reply.read(chunk);
      watchdog.chunk(live);
      for (const event of events) yield event;
    }
    for (const event of reply.end()) yield event;
  } catch (err) {
    // The key this client sends is redacted from whatever the provider echoes back.
    failure = classify(err, context(), client.apiKey ? [client.apiKey] : []);
  } finally {
    watchdog.stop();
    controller.abort();
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  // An aborted stream may simply end instead of throwing: say why it ended.
  failure ??= reply.finishReason ? undefined : classify(new RequestError('cut', 'the stream ended without a finish_reason'), context());
  if (failure) yield { type: 'error', error: failure, partial: reply.content };
  else yield { type: 'finish', reply: reply.completed(reply.finishReason ?? 'stop') };
}

/** The request body: the SDK's parameters, plus llama.cpp's `return_progress` when asked for. */
function body(request: ChatRequest): OpenAI.Chat.Completions.ChatCompletionCreateParamsStreaming {
  return {
    model: request.model,
    messages: [...request.messages] as OpenAI.Chat.Completions.ChatCompletionMessageParam[],
    tools: request.tools && request.tools.length > 0 ? [...request.tools] : undefined,
    max_tokens: request.maxOutputTokens,
    stream: true,
    ...(request.includeUsage === false ? {} : { stream_options: { include_usage: true } }),
    // Not in the SDK's types: the SDK sends the body's fields as they are.
    ...(request.returnProgress ? { return_progress: true } : {}),
  };
}

interface FailureContext {
  readonly timedOut?: Timeout;
  readonly limits: { readonly idleTimeoutMs: number; readonly firstTokenTimeoutMs: number };
  readonly cancelled: boolean;
  readonly gotText: boolean;
  /** Where the request went (shown with a connection or HTTP error). */
  readonly url?: string;
}

/**
 * The URL of an endpoint as the chat may show it: no user, password or
 * query (where a key may travel), only scheme, host, port and path.
 */
export function requestUrl(baseUrl: string, path: string): string {
  const joined = `${baseUrl.replace(/\/+$/, '')}${path}`;
  try {
    const url = new URL(joined);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return joined;
  }
}

/**
 * The RequestError for a failure. Its message is built from what the provider
 * sent (an error body may echo the Authorization header), so it is redacted
 * here, with the key the request carried: nothing downstream ever holds it
 * (docs/architecture.md, "Secrets").
 */
export function classify(err: unknown, context: FailureContext, secrets: readonly string[] = []): RequestError {
  if (context.cancelled) return new RequestError('cancelled', 'stopped by the user');
  if (context.timedOut === 'first-token') return new RequestError('first-token-timeout', `${Math.round(context.limits.firstTokenTimeoutMs / 1000)} s`);
  if (context.timedOut === 'idle') return new RequestError('idle-timeout', `${Math.round(context.limits.idleTimeoutMs / 1000)} s`);
  if (isKindError(err, RequestError)) return err;
  if (err instanceof OpenAI.APIError && !(err instanceof OpenAI.APIConnectionError) && (typeof err.status === 'number' || err.error !== undefined)) {
    return providerError(err, context, secrets);
  }
  const text = redact(errorMessage(err), secrets);
  if (err instanceof SyntaxError || /JSON|parse/i.test(text)) return new RequestError('malformed', text.slice(0, 200));
  if (err instanceof OpenAI.APIConnectionError || /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|fetch failed|socket|terminated|ECONNRESET|other side closed/i.test(text)) {
    return context.gotText ? new RequestError('cut', text) : new RequestError('connection', text, undefined, undefined, context.url);
  }
  return new RequestError('cut', text);
}

/**
 * An error the provider itself sent: an HTTP status with a body, or an
 * `error` object inside the stream (the SDK gives that one no status). Its
 * own message is kept, redacted; an overflow is parsed (overflow.ts).
 */
function providerError(err: InstanceType<typeof OpenAI.APIError>, context: FailureContext, secrets: readonly string[]): RequestError {
  const parsed = providerErrorOf(err.status, { error: err.error }, err.message);
  const message = redact(parsed.message, secrets);
  const overflow = parseOverflow(parsed);
  if (typeof err.status !== 'number') {
    const code = typeof (err.error as { code?: unknown } | undefined)?.code === 'number' ? (err.error as { code: number }).code : undefined;
    return new RequestError('stream-error', message, code, undefined, context.url, overflow);
  }
  const retryAfter = parseRetryAfter(err.headers?.get?.('retry-after') ?? null);
  return new RequestError('http', message, err.status, retryAfter, context.url, overflow);
}

/** Retry-After in seconds or an HTTP date, as milliseconds. */
function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
