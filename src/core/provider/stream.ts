import OpenAI from 'openai';
import type { ChatMessage, ToolCall, ToolSpec } from '../messages';
import { redact } from '../redact';
import type { CompletedRequest, Usage } from './chatModel';
import { PartialReplyError, RequestError } from './requestError';
import { errorMessage } from '../errorMessage';
import { isKindError } from '../kindError';

/** One attempt as the SDK is asked for it; the adapter fills in the model and the policy. */
interface ChatRequest {
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolSpec[];
  readonly maxOutputTokens?: number;
  /** Ask for usage with `stream_options` (default); false for a server that refuses the option. */
  readonly includeUsage?: boolean;
}

interface AttemptOptions {
  readonly idleTimeoutMs: number;
  readonly signal?: AbortSignal;
  readonly onText?: (delta: string) => void;
}

/**
 * One request, streamed. Resolves only when the stream ended with a
 * finish_reason; every other ending throws a RequestError whose kind says why.
 */
export async function streamChat(client: OpenAI, request: ChatRequest, options: AttemptOptions): Promise<CompletedRequest> {
  const controller = new AbortController();
  let idleFired = false;
  const onOuterAbort = (): void => controller.abort();
  options.signal?.addEventListener('abort', onOuterAbort);
  if (options.signal?.aborted) controller.abort();
  let timer: NodeJS.Timeout | undefined;
  const arm = (): void => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      idleFired = true;
      controller.abort();
    }, options.idleTimeoutMs);
  };

  let content = '';
  let finishReason: string | undefined;
  let usage: Usage | undefined;
  const calls = new Map<number, { id: string; name: string; args: string }>();
  try {
    arm();
    const stream = await client.chat.completions.create(
      {
        model: request.model,
        messages: [...request.messages],
        tools: request.tools && request.tools.length > 0 ? [...request.tools] : undefined,
        max_tokens: request.maxOutputTokens,
        stream: true,
        ...(request.includeUsage === false ? {} : { stream_options: { include_usage: true } }),
      },
      { signal: controller.signal },
    );
    for await (const chunk of stream) {
      arm();
      if (chunk.usage && typeof chunk.usage.prompt_tokens === 'number') {
        usage = { promptTokens: chunk.usage.prompt_tokens, completionTokens: chunk.usage.completion_tokens };
      }
      const choice = chunk.choices?.[0];
      if (!choice) continue;
      const delta = choice.delta;
      if (delta?.content) {
        content += delta.content;
        options.onText?.(delta.content);
      }
      for (const call of delta?.tool_calls ?? []) {
        const slot = calls.get(call.index) ?? { id: '', name: '', args: '' };
        if (call.id) slot.id = call.id;
        if (call.function?.name) slot.name += call.function.name;
        if (call.function?.arguments) slot.args += call.function.arguments;
        calls.set(call.index, slot);
      }
      if (choice.finish_reason) finishReason = choice.finish_reason;
    }
  } catch (err) {
    // The key this client sends is redacted from whatever the provider echoes back.
    const cause = classify(err, {
      idleFired, cancelled: options.signal?.aborted === true, idleTimeoutMs: options.idleTimeoutMs, gotText: content.length > 0, url: requestUrl(client.baseURL, '/chat/completions'),
    }, client.apiKey ? [client.apiKey] : []);
    throw content.length > 0 ? new PartialReplyError(cause, content) : cause;
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  if (!finishReason) {
    // An aborted stream may simply end instead of throwing: say why it ended.
    const cut = classify(new RequestError('cut', 'the stream ended without a finish_reason'), {
      idleFired, cancelled: options.signal?.aborted === true, idleTimeoutMs: options.idleTimeoutMs, gotText: content.length > 0,
    });
    throw content.length > 0 ? new PartialReplyError(cut, content) : cut;
  }
  const toolCalls: ToolCall[] = [...calls.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, c]) => ({ id: c.id || `call_${index}`, type: 'function', function: { name: c.name, arguments: c.args } }));
  return { content, toolCalls, finishReason, usage };
}

interface FailureContext {
  readonly idleFired: boolean;
  readonly cancelled: boolean;
  readonly idleTimeoutMs: number;
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
  if (context.idleFired) return new RequestError('idle-timeout', `${Math.round(context.idleTimeoutMs / 1000)} s`);
  if (isKindError(err, RequestError)) return err;
  if (err instanceof OpenAI.APIError && typeof err.status === 'number') {
    const retryAfter = parseRetryAfter(err.headers?.get?.('retry-after') ?? null);
    const message = (err.error as { message?: unknown } | undefined)?.message;
    return new RequestError('http', redact(typeof message === 'string' ? message : err.message, secrets), err.status, retryAfter, context.url);
  }
  const text = redact(errorMessage(err), secrets);
  if (err instanceof SyntaxError || /JSON|parse/i.test(text)) return new RequestError('malformed', text.slice(0, 200));
  if (err instanceof OpenAI.APIConnectionError || /ECONNREFUSED|ENOTFOUND|EAI_AGAIN|fetch failed|socket|terminated|ECONNRESET|other side closed/i.test(text)) {
    return context.gotText ? new RequestError('cut', text) : new RequestError('connection', text, undefined, undefined, context.url);
  }
  return new RequestError('cut', text);
}

/** Retry-After in seconds or an HTTP date, as milliseconds. */
function parseRetryAfter(value: string | null): number | undefined {
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
