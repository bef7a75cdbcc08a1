import { contentText, type ChatMessage } from '../messages';
import type { TextModel } from '../provider/chatModel';
import type { Summarize } from './compaction';

const INSTRUCTIONS = [
  'You compact a conversation between a user and a coding agent so that the agent can continue it.',
  'Write a faithful summary of the transcript below: the user\'s goals and constraints, decisions made,',
  'files, commands and identifiers involved, results of tool calls that still matter, and open questions.',
  'Keep the language of the conversation. Do not invent anything. Reply with the summary only.',
].join(' ');

/**
 * A Summarize backed by the model port. The transcript goes in as text in one
 * user message rather than as the original messages: a summary request must
 * not itself look like a turn with pending tool calls to answer.
 */
export function textModelSummarizer(model: TextModel): Summarize {
  return (messages, signal) =>
    model.complete(
      [
        { role: 'system', content: INSTRUCTIONS },
        { role: 'user', content: renderTranscript(messages) },
      ],
      signal,
    );
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
