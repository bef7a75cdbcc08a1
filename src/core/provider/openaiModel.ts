import OpenAI from 'openai';
import type { Identity } from '../context/driftEvents';
import type { ChatMessage } from '../messages';
import type { AttemptEnding, ChatModel, CompletedRequest, RequestPolicy, StreamOptions, StreamRequest } from './chatModel';
import { RequestError } from './requestError';
import { withRetries } from './retry';
import { classify, requestUrl, streamChat } from './stream';
import { inMemoryUsage, refusesStreamOptions, type StreamUsageMemory } from './streamUsage';
import { isKindError } from '../kindError';

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

/**
 * The one adapter of the ChatModel port: a client of an OpenAI-compatible
 * endpoint, one model on it. `usage` remembers which identities refuse
 * `stream_options` (docs/architecture.md, "Model port").
 */
export function openAiChatModel(client: OpenAI, identity: Identity, policy: RequestPolicy, usage: StreamUsageMemory = inMemoryUsage()): ChatModel {
  // Whatever the provider echoes back is redacted with the key this client sends.
  const secrets = client.apiKey ? [client.apiKey] : [];
  const streamOnce = (request: StreamRequest, options: StreamOptions, includeUsage: boolean): Promise<CompletedRequest> => streamChat(
    client,
    { model: identity.model, messages: request.messages, tools: request.tools, maxOutputTokens: policy.maxOutputTokens, includeUsage },
    { idleTimeoutMs: policy.idleTimeoutMs, signal: options.signal, onText: options.onText },
  );
  /**
   * One request. A 400 that names `stream_options` is the server refusing
   * the option before it read anything: the same request goes again at once
   * without it, within the same attempt (the gate sees one request), and
   * what the second answer shows is remembered for the identity.
   */
  const streamWithUsage = async (request: StreamRequest, options: StreamOptions): Promise<CompletedRequest> => {
    const known = usage.get(identity);
    let result: CompletedRequest;
    try {
      result = await streamOnce(request, options, known === undefined);
    } catch (err) {
      if (known !== undefined || !isKindError(err, RequestError) || !refusesStreamOptions(err)) throw err;
      result = await streamOnce(request, options, false);
      usage.remember(identity, result.usage ? 'rejects-stream-options' : 'no-usage-in-streams');
    }
    if (result.usage && usage.get(identity) === 'no-usage-in-streams') usage.remember(identity, 'rejects-stream-options');
    return !result.usage && usage.get(identity) === 'no-usage-in-streams' ? { ...result, usageUnsupported: true } : result;
  };
  return {
    identity,
    policy,
    stream(request: StreamRequest, options: StreamOptions = {}): Promise<CompletedRequest> {
      const attempt = async (): Promise<CompletedRequest> => {
        options.onAttempt?.();
        let ending: AttemptEnding;
        try {
          const result = await streamWithUsage(request, options);
          ending = { completed: true, result };
        } catch (err) {
          ending = { completed: false, error: isKindError(err, RequestError) ? err : new RequestError('cut', String(err)) };
        }
        options.onAttemptEnd?.(ending);
        if (!ending.completed) throw ending.error;
        return ending.result;
      };
      return withRetries(attempt, { maxRetries: policy.maxRetries, signal: options.signal, onRetry: options.onRetry });
    },
    async complete(messages: readonly ChatMessage[], signal?: AbortSignal): Promise<string> {
      try {
        const response = await client.chat.completions.create({ model: identity.model, messages: [...messages], stream: false }, { signal });
        return response.choices[0]?.message?.content ?? '';
      } catch (err) {
        throw classify(err, {
          idleFired: false, cancelled: signal?.aborted === true, idleTimeoutMs: policy.idleTimeoutMs, gotText: false, url: requestUrl(client.baseURL, '/chat/completions'),
        }, secrets);
      }
    },
  };
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
