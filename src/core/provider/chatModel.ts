import type { Identity } from '../modelIdentity';
import type { ChatMessage, ToolCall, ToolSpec } from '../messages';
import type { RequestError } from './requestError';
import type { RetryNotice } from './retry';
import { manifestNumber } from '../manifest';

/**
 * The model port: the one way any part of Candor talks to a model. The chat
 * loop, the change loop and every one-shot job (summaries, condense, triage,
 * proposals, the judge) take a ChatModel or its `complete` half. One adapter
 * implements it over the `openai` SDK (`openaiModel.ts`); `resolve.ts` builds
 * it from settings for the extension and the CLI alike (docs/architecture.md,
 * "Model port").
 */
export interface ChatModel {
  /** `(provider slug, model)`: what the context gate measures under and detects switches by. */
  readonly identity: Identity;
  readonly policy: RequestPolicy;
  /**
   * One request, streamed, with tools and usage, as the events of its
   * attempts (docs/architecture.md, "One message, end to end"): each attempt
   * opens with `attempt` (the request is sent only when the consumer asks for
   * the next event) and ends with `finish` or `error`; an `error` the policy
   * retries is followed by `retry` and the next `attempt`. The stream never
   * throws: its last event says how the request ended. Cut when nothing
   * arrives for `policy.firstTokenTimeoutMs` before the reply starts, or
   * `policy.idleTimeoutMs` between chunks after.
   */
  stream(request: StreamRequest, options?: StreamOptions): AsyncIterable<ModelEvent>;
  /**
   * Messages in, text out: one request, not streamed, not retried (each
   * caller has its own fallback). Failures throw a RequestError free of the
   * key; with `whole`, a reply the output limit cut (`finish_reason:
   * "length"`) is one too (`length`): a cut summary or memory file would be
   * wrong.
   */
  complete(messages: readonly ChatMessage[], signal?: AbortSignal, options?: CompleteOptions): Promise<string>;
}

/** The half of the port that summaries, condense, triage, proposals and the judge need. */
export type TextModel = Pick<ChatModel, 'complete'>;

export interface CompleteOptions {
  /** `max_tokens` of the request; absent: none (the server's own limit applies). */
  readonly maxTokens?: number;
  /** A reply that ended with `finish_reason: "length"` throws RequestError `length` instead of returning. */
  readonly whole?: boolean;
}

/** How requests are made: the `candor.request.*` settings and `candor.maxOutputTokens`. */
export interface RequestPolicy {
  /** After the first live chunk, a stream that sends nothing for this long is cut ('idle-timeout'). */
  readonly idleTimeoutMs: number;
  /**
   * Until the first chunk with text, reasoning, a tool-call delta or prompt
   * progress, the request is cut after this long ('first-token-timeout');
   * 0: no limit. Absent: the default (300 s).
   */
  readonly firstTokenTimeoutMs?: number;
  /** Retries after the first attempt, for retryable errors only. */
  readonly maxRetries: number;
  /** Upper bound on the tokens of one streamed reply. */
  readonly maxOutputTokens?: number;
}

/** The manifest's defaults of `candor.request.idleTimeoutSeconds`, `…firstTokenTimeoutSeconds` (seconds to milliseconds) and `…maxRetries`. */
export const DEFAULT_POLICY: RequestPolicy = {
  idleTimeoutMs: manifestNumber('request.idleTimeoutSeconds') * 1000,
  firstTokenTimeoutMs: manifestNumber('request.firstTokenTimeoutSeconds') * 1000,
  maxRetries: manifestNumber('request.maxRetries'),
};

/** The first-token limit of a policy: its own, else the default. */
export function firstTokenLimitMs(policy: RequestPolicy): number {
  return policy.firstTokenTimeoutMs ?? DEFAULT_POLICY.firstTokenTimeoutMs ?? 0;
}

export interface StreamRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolSpec[];
}

export interface StreamOptions {
  readonly signal?: AbortSignal;
}

/** One event of a streamed request; see `ChatModel.stream`. */
export type ModelEvent =
  /** An attempt begins (1 = the first, then each retry): the request is sent when the next event is asked for. */
  | { readonly type: 'attempt'; readonly attempt: number }
  /** The server reports how far it is in processing the prompt (llama.cpp's `prompt_progress`). */
  | { readonly type: 'progress'; readonly progress: PromptProgress }
  | { readonly type: 'text'; readonly text: string }
  /** Thinking: `reasoning_content`, `reasoning`, or a leading `<think>…</think>` of the content. */
  | { readonly type: 'reasoning'; readonly text: string }
  | { readonly type: 'tool-call'; readonly index: number; readonly name: string; readonly arguments: string }
  | { readonly type: 'usage'; readonly usage: Usage }
  /** The attempt completed: the stream ended with a finish_reason. */
  | { readonly type: 'finish'; readonly reply: CompletedRequest }
  /** The attempt failed; `partial` is the reply text that had arrived. A `retry` follows when it is retried. */
  | { readonly type: 'error'; readonly error: RequestError; readonly partial: string }
  | { readonly type: 'retry'; readonly notice: RetryNotice };

/** llama.cpp's `prompt_progress`: the prompt's tokens, how many came from its cache, how many are processed. */
export interface PromptProgress {
  readonly total: number;
  readonly cached: number;
  readonly processed: number;
}

/** The share of the prompt processed so far, 0–100: the work this request does (cached tokens left out). */
export function progressPercent(progress: PromptProgress): number {
  const work = progress.total - progress.cached;
  if (work <= 0) return 100;
  return Math.max(0, Math.min(100, Math.floor(((progress.processed - progress.cached) / work) * 100)));
}

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens?: number;
}

/** A completed request: the stream ended normally with a finish_reason. */
export interface CompletedRequest {
  readonly content: string;
  /** What the model thought before answering ('' when it showed none). */
  readonly reasoning: string;
  readonly toolCalls: ToolCall[];
  /** `stop`, `tool_calls`, `length` (cut at the output limit), or what else the server says. */
  readonly finishReason: string;
  readonly usage?: Usage;
  /**
   * Set on a request without usage from an identity known to report no usage
   * in streams at all (it refused `stream_options`, and its stream without it
   * carried none). The gate can say so once instead of warning per request.
   */
  readonly usageUnsupported?: true;
}
