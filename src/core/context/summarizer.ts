import { contentText, type ChatMessage } from '../messages';
import type { TextModel } from '../provider/chatModel';
import { RequestError } from '../provider/requestError';
import { isKindError } from '../kindError';
import { CompactionError, type Summarize } from './compaction';
import { heuristicTokens } from './heuristic';

const INSTRUCTIONS = [
  'You compact a conversation between a user and a coding agent so that the agent can continue it.',
  'Write a faithful summary of the transcript below: the user\'s goals and constraints, decisions made,',
  'files, commands and identifiers involved, results of tool calls that still matter, and open questions.',
  'Keep the language of the conversation. Do not invent anything. Reply with the summary only.',
].join(' ');

/** A summary gets at most a quarter of the window, and never more than this. */
const SUMMARY_CAP = 4096;
/** Less room than this for the summary (the transcript fills the window), and it is not asked for. */
const SUMMARY_FLOOR = 16;

/**
 * A Summarize backed by the model port. The transcript goes in as text in one
 * user message rather than as the original messages: a summary request must
 * not itself look like a turn with pending tool calls to answer.
 *
 * With `window` (the context window in force), the request carries a
 * `max_tokens` sized to it: a quarter of the window, at most SUMMARY_CAP,
 * and never more than the room the transcript leaves (a server counts
 * prompt and reply against one window). A summary the limit cut is
 * refused, so the history stays as it was (docs/architecture.md, "Context gate").
 */
export function textModelSummarizer(model: TextModel, window?: () => number): Summarize {
  return async (messages, signal) => {
    const request: ChatMessage[] = [
      { role: 'system', content: INSTRUCTIONS },
      { role: 'user', content: renderTranscript(messages) },
    ];
    const maxTokens = window ? summaryBudget(window(), request) : undefined;
    try {
      return await model.complete(request, signal, { ...(maxTokens !== undefined ? { maxTokens } : {}), whole: true });
    } catch (err) {
      if (isKindError(err, RequestError, 'length')) {
        throw new CompactionError('summary-cut', `the summary was cut at the output limit (${err.message}) before it was complete, so it was not used`, { cause: err });
      }
      throw err;
    }
  };
}

/**
 * The `max_tokens` of a summary request in a window of `window` tokens. The
 * prompt is estimated a tenth high (its real count is the server's), so the
 * reply's share is never what pushes the request past the window.
 */
export function summaryBudget(window: number, request: readonly ChatMessage[]): number {
  const prompt = Math.ceil(request.reduce((n, m) => n + heuristicTokens(contentText(m)) + 8, 0) * 1.1) + 16;
  const budget = Math.min(SUMMARY_CAP, Math.floor(window / 4), window - prompt);
  if (budget < SUMMARY_FLOOR) {
    throw new CompactionError('no-room', `the turns to summarize take about ${prompt.toLocaleString('en-US')} of the ${window.toLocaleString('en-US')}-token window, leaving no room for a summary`);
  }
  return budget;
}

export function renderTranscript(messages: readonly ChatMessage[]): string {
  return messages.map(renderMessage).join('\n\n');
}

function renderMessage(message: ChatMessage): string {
  const lines = [`### ${message.role}`];
  const text = contentText(message);
  if (text) lines.push(text);
  if (message.role === 'assistant') {
    for (const call of message.tool_calls ?? []) {
      lines.push(`[tool call ${call.id}] ${call.function.name}(${call.function.arguments})`);
    }
  }
  if (message.role === 'tool') lines[0] = `### tool result for ${message.tool_call_id}`;
  return lines.join('\n');
}
