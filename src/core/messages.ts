import type OpenAI from 'openai';

/** A message as sent to an OpenAI-compatible chat completions endpoint. */
export type ChatMessage = OpenAI.Chat.Completions.ChatCompletionMessageParam;
export type ToolCall = OpenAI.Chat.Completions.ChatCompletionMessageFunctionToolCall;
export type ToolSpec = OpenAI.Chat.Completions.ChatCompletionFunctionTool;

/** Text of a message's content, whatever its shape. */
export function contentText(message: ChatMessage): string {
  const content = (message as { content?: unknown }).content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && 'text' in part ? String((part as { text: unknown }).text) : ''))
      .join('');
  }
  return '';
}
