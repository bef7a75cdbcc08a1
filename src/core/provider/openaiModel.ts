import OpenAI from 'openai';
import type { Identity } from '../modelIdentity';
import type { ChatMessage } from '../messages';
import { firstTokenLimitMs, type ChatModel, type CompletedRequest, type CompleteOptions, type ModelEvent, type RequestPolicy, type StreamOptions, type StreamRequest } from './chatModel';
import { RequestError } from './requestError';
import { retries, retryDelayMs } from './retry';
import { classify, requestUrl, streamAttempt, type AttemptEvent } from './stream';
import { inMemoryUsage, refusesStreamOptions, type StreamUsageMemory } from './streamUsage';
import { ThinkSplitter } from './thinkSplit';
import type { Timers } from './watchdog';
import { abortableSleep } from '../sleep';

/** The SDK's own limit on one HTTP request; idle streams are cut far sooner by the policy. */
const CLIENT_TIMEOUT_MS = 10 * 60_000;

/**
 * A client of one endpoint. Candor owns retrying and shows it: the SDK must
 * never retry behind its back (`maxRetries: 0`). Without a key no
 * `Authorization` header is sent at all (the SDK would otherwise send a
 * placeholder, or read OPENAI_API_KEY from the environment).
 */
export function createClient(baseURL: string, apiKey: string): OpenAI {
  return new OpenAI({
    baseURL,
    apiKey: apiKey || 'no-key',
    maxRetries: 0,
    timeout: CLIENT_TIMEOUT_MS,
    ...(apiKey ? {} : { defaultHeaders: { Authorization: null } }),
  });
}

/** What the adapter knows of the server beyond the policy, and what tests replace. */
export interface AdapterOptions {
  /** The server is llama.cpp: ask it for `prompt_progress` chunks (`return_progress`). */
  readonly returnProgress?: boolean;
  /** The watchdog's clock and the retries' sleep (tests). */
  readonly timers?: Timers;
  readonly sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/**
 * The one adapter of the ChatModel port: a client of an OpenAI-compatible
 * endpoint, one model on it. `usage` remembers which identities refuse
 * `stream_options` (docs/architecture.md, "Model port").
 */
export function openAiChatModel(client: OpenAI, identity: Identity, policy: RequestPolicy, usage: StreamUsageMemory = inMemoryUsage(), adapter: AdapterOptions = {}): ChatModel {
  // Whatever the provider echoes back is redacted with the key this client sends.
  const secrets = client.apiKey ? [client.apiKey] : [];
  const attempt = (request: StreamRequest, options: StreamOptions, includeUsage: boolean): AsyncGenerator<AttemptEvent> => streamAttempt(
    client,
    { model: identity.model, messages: request.messages, tools: request.tools, maxOutputTokens: policy.maxOutputTokens, includeUsage, returnProgress: adapter.returnProgress },
    { idleTimeoutMs: policy.idleTimeoutMs, firstTokenTimeoutMs: firstTokenLimitMs(policy), signal: options.signal, timers: adapter.timers },
  );
  /**
   * One attempt's events. A 400 that names `stream_options` is the server
   * refusing the option before it read anything: the same request goes again
   * at once without it, within the same attempt (the gate sees one request).
   * The first event is read here to see that; the caller yields it first.
   */
  async function openAttempt(request: StreamRequest, options: StreamOptions): Promise<{ first: IteratorResult<AttemptEvent>; rest: AsyncGenerator<AttemptEvent>; refused: boolean }> {
    const known = usage.get(identity);
    const rest = attempt(request, options, known === undefined);
    const first = await rest.next();
    if (first.done || first.value.type !== 'error' || known !== undefined || !refusesStreamOptions(first.value.error)) return { first, rest, refused: false };
    const again = attempt(request, options, false);
    return { first: await again.next(), rest: again, refused: true };
  }
  /** A completed reply, with what its usage (or its absence) taught about the identity remembered and said. */
  function settleUsage(result: CompletedRequest, refused: boolean): CompletedRequest {
    if (refused) usage.remember(identity, result.usage ? 'rejects-stream-options' : 'no-usage-in-streams');
    if (result.usage && usage.get(identity) === 'no-usage-in-streams') usage.remember(identity, 'rejects-stream-options');
    return !result.usage && usage.get(identity) === 'no-usage-in-streams' ? { ...result, usageUnsupported: true } : result;
  }
  const sleep = adapter.sleep ?? abortableSleep;
  return {
    identity,
    policy,
    async *stream(request: StreamRequest, options: StreamOptions = {}): AsyncGenerator<ModelEvent> {
      for (let tries = 0; ; tries++) {
        yield { type: 'attempt', attempt: tries + 1 };
        let failed: RequestError | undefined;
        const { first, rest, refused } = await openAttempt(request, options);
        for (let next = first; !next.done; next = await rest.next()) {
          const event = next.value;
          if (event.type === 'finish') yield { type: 'finish', reply: settleUsage(event.reply, refused) };
          else yield event;
          if (event.type === 'error') failed = event.error;
        }
        if (!failed || !retries(failed, tries, { maxRetries: policy.maxRetries, signal: options.signal })) return;
        const delayMs = retryDelayMs(failed, tries + 1);
        yield { type: 'retry', notice: { attempt: tries + 1, of: policy.maxRetries, delayMs, error: failed } };
        await sleep(delayMs, options.signal);
        if (options.signal?.aborted) {
          yield { type: 'error', error: new RequestError('cancelled', 'stopped by the user'), partial: '' };
          return;
        }
      }
    },
    async complete(messages: readonly ChatMessage[], signal?: AbortSignal, options: CompleteOptions = {}): Promise<string> {
      let response: OpenAI.Chat.Completions.ChatCompletion;
      try {
        response = await client.chat.completions.create(
          { model: identity.model, messages: [...messages] as OpenAI.Chat.Completions.ChatCompletionMessageParam[], stream: false, ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}) },
          { signal },
        );
      } catch (err) {
        throw classify(err, {
          limits: { idleTimeoutMs: policy.idleTimeoutMs, firstTokenTimeoutMs: 0 }, cancelled: signal?.aborted === true, gotText: false, url: requestUrl(client.baseURL, '/chat/completions'),
        }, secrets);
      }
      const choice = response.choices[0];
      if (options.whole && choice?.finish_reason === 'length') {
        const used = response.usage?.completion_tokens ?? options.maxTokens;
        throw new RequestError('length', used === undefined ? 'the server\'s own limit' : `${used.toLocaleString('en-US')} tokens`);
      }
      return answerOf(choice?.message?.content ?? '');
    },
  };
}

/** A one-shot reply without the `<think>…</think>` a server left at its start. */
function answerOf(content: string): string {
  const split = new ThinkSplitter();
  return [...split.push(content), ...split.end()].filter((p) => p.kind === 'text').map((p) => p.text).join('');
}

/** The model ids an endpoint lists (`GET /models`), at most `limit`. */
export async function listModels(client: OpenAI, signal: AbortSignal, limit = 200): Promise<string[]> {
  const ids: string[] = [];
  for await (const model of client.models.list({ signal })) {
    ids.push(model.id);
    if (ids.length >= limit) break;
  }
  return ids;
}
