import type { Identity } from '../../../src/core/context/driftEvents';
import type { ChatModel, RequestPolicy } from '../../../src/core/provider/chatModel';
import { createClient, openAiChatModel } from '../../../src/core/provider/openaiModel';

export interface ModelOptions {
  readonly apiKey?: string;
  readonly identity?: Identity;
  readonly policy?: Partial<RequestPolicy>;
}

/** The shipped adapter over a real server on loopback; no retries unless asked for. */
export function modelAt(baseUrl: string, options: ModelOptions = {}): ChatModel {
  const policy: RequestPolicy = { idleTimeoutMs: 5000, maxRetries: 0, ...options.policy };
  return openAiChatModel(createClient(baseUrl, options.apiKey ?? 'k'), options.identity ?? { provider: 'test', model: 'm' }, policy);
}
