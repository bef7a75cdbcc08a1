import OpenAI from 'openai';
import type { Identity } from '../context/driftEvents';
import type { ChatMessage } from '../messages';
import type { AttemptEnding, ChatModel, CompletedRequest, RequestPolicy, StreamOptions, StreamRequest } from './chatModel';
import { RequestError } from './requestError';
import { withRetries } from './retry';
import { classify, streamChat } from './stream';

/** The SDK's own limit on one HTTP request; idle streams are cut far sooner by the policy. */
const CLIENT_TIMEOUT_MS = 10 * 60_000;

/**
 * A client of one endpoint. Candor owns retrying and shows it: the SDK must
 * never retry behind its back (`maxRetries: 0`).
 */
export function createClient(baseURL: string, apiKey: string): OpenAI {
  return new OpenAI({ baseURL, apiKey: apiKey || 'no-key', maxRetries: 0, timeout: CLIENT_TIMEOUT_MS });
}

/** The one adapter of the ChatModel port: a client of an OpenAI-compatible endpoint, one model on it. */
export function openAiChatModel(client: OpenAI, identity: Identity, policy: RequestPolicy): ChatModel {
  // Whatever the provider echoes back is redacted with the key this client sends.
  const secrets = client.apiKey ? [client.apiKey] : [];
  return {
    identity,
    policy,
    stream(request: StreamRequest, options: StreamOptions = {}): Promise<CompletedRequest> {
      const attempt = async (): Promise<CompletedRequest> => {
        options.onAttempt?.();
        let ending: AttemptEnding;
        try {
          const result = await streamChat(
            client,
            { model: identity.model, messages: request.messages, tools: request.tools, maxOutputTokens: policy.maxOutputTokens },
            { idleTimeoutMs: policy.idleTimeoutMs, signal: options.signal, onText: options.onText },
          );
          ending = { completed: true, result };
        } catch (err) {
          ending = { completed: false, error: err instanceof RequestError ? err : new RequestError('cut', String(err)) };
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
        throw classify(err, { idleFired: false, cancelled: signal?.aborted === true, idleTimeoutMs: policy.idleTimeoutMs, gotText: false }, secrets);
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
