import type { ChatMessage, ToolSpec } from '../messages';
import type { ServerCounting } from './serverFamily';
import { postJson } from './serverFamily';

/**
 * A server's own count of a prompt, asked before it is sent
 * (docs/architecture.md, "Exact counts"): what the server will count, its
 * template and the tool definitions included.
 *
 * - llama.cpp: `POST /apply-template` renders the messages and tools with
 *   the model's template; `POST /tokenize` of that text (special tokens
 *   parsed, the BOS added as the server adds it) is the prompt's count:
 *   1,252 for Candor's first request on a Qwen3 model, the `prompt_tokens`
 *   the same server then reports.
 * - vLLM: `POST /tokenize` takes the chat messages and tools themselves.
 *
 * Undefined when the server has no such endpoint or answers something else:
 * the caller falls back without a word.
 */

export interface CountRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools: readonly ToolSpec[];
}

export type PromptCount = (request: CountRequest, signal: AbortSignal) => Promise<number | undefined>;

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** The count endpoint of a server at `origin` (`http://127.0.0.1:PORT`). */
export function serverPromptCount(counting: ServerCounting, origin: string, model: string, headers?: Record<string, string>): PromptCount {
  const options = (signal: AbortSignal) => ({ signal, ...(headers ? { headers } : {}) });
  if (counting === 'vllm') {
    return async (request, signal) => {
      const body = { model, messages: request.messages, ...(request.tools.length > 0 ? { tools: request.tools } : {}), add_generation_prompt: true, add_special_tokens: false };
      const count = record(await postJson(`${origin}/tokenize`, body, options(signal)))?.count;
      return typeof count === 'number' && Number.isInteger(count) && count > 0 ? count : undefined;
    };
  }
  return async (request, signal) => {
    const body = { messages: request.messages, ...(request.tools.length > 0 ? { tools: request.tools } : {}) };
    const prompt = record(await postJson(`${origin}/apply-template`, body, options(signal)))?.prompt;
    if (typeof prompt !== 'string') return undefined;
    const tokens = record(await postJson(`${origin}/tokenize`, { content: prompt, add_special: true, parse_special: true }, options(signal)))?.tokens;
    return Array.isArray(tokens) && tokens.length > 0 ? tokens.length : undefined;
  };
}
