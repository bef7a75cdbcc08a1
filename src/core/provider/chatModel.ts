import type { Identity } from '../context/driftEvents';
import type { ChatMessage, ToolCall, ToolSpec } from '../messages';
import type { RequestError } from './requestError';
import type { RetryNotice } from './retry';

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
   * One request, streamed, with tools and usage. Retried on 429, 5xx and
   * connection errors as `policy` says, each retry announced first; cut when
   * nothing arrives for `policy.idleTimeoutMs`. Resolves only when the stream
   * ended with a finish_reason; every other ending throws a RequestError
   * (a PartialReplyError when text had arrived), its message free of the key.
   */
  stream(request: StreamRequest, options?: StreamOptions): Promise<CompletedRequest>;
  /**
   * Messages in, text out: one request, not streamed, not retried (each
   * caller has its own fallback), with no cap on the reply (a cut summary or
   * memory file would be wrong). Failures throw a RequestError free of the key.
   */
  complete(messages: readonly ChatMessage[], signal?: AbortSignal): Promise<string>;
}

/** The half of the port that summaries, condense, triage, proposals and the judge need. */
export type TextModel = Pick<ChatModel, 'complete'>;

/** How requests are made: the `candor.request.*` settings and `candor.maxOutputTokens`. */
export interface RequestPolicy {
  /** A stream that sends nothing for this long is cut ('idle-timeout'). */
  readonly idleTimeoutMs: number;
  /** Retries after the first attempt, for retryable errors only. */
  readonly maxRetries: number;
  /** Upper bound on the tokens of one streamed reply. */
  readonly maxOutputTokens?: number;
}

/** The defaults of `candor.request.idleTimeoutSeconds` and `candor.request.maxRetries`. */
export const DEFAULT_POLICY: RequestPolicy = { idleTimeoutMs: 60_000, maxRetries: 2 };

export interface StreamRequest {
  readonly messages: readonly ChatMessage[];
  readonly tools?: readonly ToolSpec[];
}

export interface StreamOptions {
  readonly signal?: AbortSignal;
  /** Each piece of reply text as it arrives. */
  readonly onText?: (delta: string) => void;
  /** A retry about to happen, before its wait: the chat shows it. */
  readonly onRetry?: (notice: RetryNotice) => void;
  /** Before each attempt, the first and every retry: each is a request the context gate passes. */
  readonly onAttempt?: () => void;
  /** After each attempt, before the retry decision: how it ended. */
  readonly onAttemptEnd?: (ending: AttemptEnding) => void;
}

export type AttemptEnding =
  | { readonly completed: true; readonly result: CompletedRequest }
  | { readonly completed: false; readonly error: RequestError };

export interface Usage {
  readonly promptTokens: number;
  readonly completionTokens?: number;
}

/** A completed request: the stream ended normally with a finish_reason. */
export interface CompletedRequest {
  readonly content: string;
  readonly toolCalls: ToolCall[];
  readonly finishReason: string;
  readonly usage?: Usage;
  /**
   * Set on a request without usage from an identity known to report no usage
   * in streams at all (it refused `stream_options`, and its stream without it
   * carried none). The gate can say so once instead of warning per request.
   */
  readonly usageUnsupported?: true;
}
