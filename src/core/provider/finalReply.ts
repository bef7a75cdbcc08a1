import type { CompletedRequest, ModelEvent } from './chatModel';
import { PartialReplyError, RequestError } from './requestError';
import type { RetryNotice } from './retry';

/** What a caller that only wants the reply may still hear of on the way. */
export interface ReplyListeners {
  readonly onText?: (delta: string) => void;
  readonly onRetry?: (notice: RetryNotice) => void;
}

/**
 * A request's events consumed for its outcome alone: the completed request,
 * or its last error thrown (a PartialReplyError when text had arrived). For
 * the callers with no gate to drive per attempt (the change loop, tools,
 * tests); the chat consumes the events itself.
 */
export async function finalReply(events: AsyncIterable<ModelEvent>, listeners: ReplyListeners = {}): Promise<CompletedRequest> {
  let last: ModelEvent | undefined;
  for await (const event of events) {
    last = event;
    if (event.type === 'text') listeners.onText?.(event.text);
    else if (event.type === 'retry') listeners.onRetry?.(event.notice);
  }
  if (last?.type === 'finish') return last.reply;
  if (last?.type === 'error') throw last.partial ? new PartialReplyError(last.error, last.partial) : last.error;
  throw new RequestError('cut', 'the request ended without a reply');
}
