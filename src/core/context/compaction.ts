import type { ChatMessage } from '../messages';
import { errorMessage } from '../errorMessage';
import { KindError, isKindError } from '../kindError';

/**
 * Compaction: the older turns are summarized and replaced by the summary; the
 * newest `keepTurns` turns stay word for word. The caller passes the history
 * without the system prompt, which is never summarized.
 */

export interface CompactionPlan {
  /** Index of the first message kept verbatim; 0 = nothing to compact. */
  readonly cut: number;
  readonly summarize: readonly ChatMessage[];
  readonly keep: readonly ChatMessage[];
}

export type CompactionErrorKind = 'nothing-to-compact' | 'summary-failed' | 'summary-cut' | 'no-room' | 'empty-summary' | 'cancelled';

export class CompactionError extends KindError<CompactionErrorKind> {
  override readonly name = 'CompactionError';
}

export type Summarize = (messages: ChatMessage[], signal?: AbortSignal) => Promise<string>;

export interface Compacted {
  readonly history: ChatMessage[];
  /** How many messages the summary replaced. */
  readonly summarizedCount: number;
  readonly summary: string;
}

/**
 * Marks the summary message. It is a `user` message, not `system`: the
 * system prompt stays one byte-stable message at the start (the estimate
 * and the provider's prefix cache rely on it, and several OpenAI-compatible
 * servers reject a system message anywhere else); and not `assistant`, which
 * would make the model take the summary for words it said itself.
 */
export const SUMMARY_PREFIX = '[Summary of earlier conversation]';

/** Projected context passes the threshold share of the window. */
export function shouldCompact(projected: number, window: number, thresholdPercent: number): boolean {
  if (!(window > 0) || !(thresholdPercent > 0)) return false;
  return projected > (window * thresholdPercent) / 100;
}

/** A summary a compaction put in place of older turns. */
export function isSummary(message: ChatMessage): boolean {
  return message.role === 'user' && typeof message.content === 'string' && message.content.startsWith(SUMMARY_PREFIX);
}

/**
 * A turn starts at a user message; a summary is not one, so summarizing
 * again needs a turn newer than the summary beyond the kept ones (one
 * compaction per growth, never one per request). The cut lands on the start
 * of the oldest kept turn, then moves earlier while it would separate an
 * assistant message with `tool_calls` from one of its `tool` replies.
 */
export function planCompaction(history: readonly ChatMessage[], keepTurns: number): CompactionPlan {
  const turnStarts: number[] = [];
  history.forEach((message, index) => {
    if (message.role === 'user' && !isSummary(message)) turnStarts.push(index);
  });
  const keep = Math.max(1, Math.floor(keepTurns));
  let cut = turnStarts.length > keep ? (turnStarts[turnStarts.length - keep] ?? 0) : 0;
  cut = keepToolPairsTogether(history, cut);
  return { cut, summarize: history.slice(0, cut), keep: history.slice(cut) };
}

function keepToolPairsTogether(history: readonly ChatMessage[], cut: number): number {
  const callerOf = new Map<string, number>();
  history.forEach((message, index) => {
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) callerOf.set(call.id, index);
    }
  });
  // Scanning the kept part from its end lets one pass catch chains: moving
  // the cut earlier only adds messages, whose replies come after them.
  for (let index = history.length - 1; index >= cut; index--) {
    const message = history[index];
    if (message?.role !== 'tool') continue;
    const caller = callerOf.get(message.tool_call_id);
    if (caller !== undefined && caller < cut) cut = caller;
  }
  // A tool reply whose caller is unknown cannot lead the kept part.
  while (cut < history.length && history[cut]?.role === 'tool') cut++;
  return cut;
}

/**
 * Summarizes the planned prefix and returns a new history; the input array
 * is never modified, so any failure leaves the history as it was.
 */
export async function compactHistory(
  history: readonly ChatMessage[],
  keepTurns: number,
  summarize: Summarize,
  signal?: AbortSignal,
): Promise<Compacted> {
  const plan = planCompaction(history, keepTurns);
  if (plan.cut === 0) {
    throw new CompactionError('nothing-to-compact', `nothing older than the newest ${keepTurns} turns to summarize`);
  }
  throwIfCancelled(signal);
  let summary: string;
  try {
    summary = await summarize([...plan.summarize], signal);
  } catch (err) {
    throwIfCancelled(signal);
    // The summarizer's own refusals (a cut summary, no room for one) say what happened themselves.
    if (isKindError(err, CompactionError)) throw err;
    throw new CompactionError('summary-failed', `the summary request failed: ${describe(err)}`, { cause: err });
  }
  throwIfCancelled(signal);
  const text = summary.trim();
  if (text === '') throw new CompactionError('empty-summary', 'the model returned an empty summary');
  const message: ChatMessage = { role: 'user', content: `${SUMMARY_PREFIX}\n\n${text}` };
  return { history: [message, ...plan.keep], summarizedCount: plan.cut, summary: text };
}

function throwIfCancelled(signal?: AbortSignal): void {
  if (signal?.aborted) throw new CompactionError('cancelled', 'compaction was cancelled');
}

function describe(err: unknown): string {
  return errorMessage(err);
}
