import { contentText, type ChatMessage } from '../messages';

/**
 * Messages counted as OpenAI's recipe counts them ("How to count tokens with
 * tiktoken"): 3 tokens per message for the chat frame, every value of the
 * message tokenized, 1 more for a `name`, and 3 once per request for the
 * reply's priming. The anchor cancels whatever constants a provider really
 * uses, so they matter only for anchor-less estimates; the embedded offline
 * provider counts with the same ones (docs/architecture.md, "Context gate").
 */
export const PER_MESSAGE_OVERHEAD = 3;
const PER_NAME = 1;
/** Every reply is primed with `<|start|>assistant<|message|>`. */
export const REPLY_PRIMING = 3;

/**
 * The texts of a message that a provider tokenizes: role, content, a name,
 * the thinking sent back with it, and each tool call's name and arguments.
 * Ids (a tool call's `id`, a tool reply's `tool_call_id`) are not part of
 * the prompt OpenAI counts. Counted piece by piece, as the recipe does,
 * rather than joined, so no separator we invent shows up in the count.
 */
export function messageParts(message: ChatMessage): string[] {
  const parts: string[] = [typeof message.role === 'string' ? message.role : '', contentText(message)];
  const loose = message as { name?: unknown; tool_calls?: unknown; reasoning_content?: unknown };
  if (typeof loose.name === 'string') parts.push(loose.name);
  // A reply's thinking, when it is sent back (a template that keeps it): what is sent is counted.
  if (typeof loose.reasoning_content === 'string') parts.push(loose.reasoning_content);
  if (Array.isArray(loose.tool_calls)) {
    for (const call of loose.tool_calls as unknown[]) parts.push(...toolCallParts(call));
  }
  return parts.filter((part) => part.length > 0);
}

/** The constant tokens of a message: its frame, and one for a name. */
export function messageOverhead(message: ChatMessage): number {
  return PER_MESSAGE_OVERHEAD + (typeof (message as { name?: unknown }).name === 'string' ? PER_NAME : 0);
}

/** Function calls carry name + arguments; custom tool calls name + input. */
function toolCallParts(call: unknown): string[] {
  if (!call || typeof call !== 'object') return [];
  const shaped = call as {
    function?: { name?: unknown; arguments?: unknown };
    custom?: { name?: unknown; input?: unknown };
  };
  const body = shaped.function ?? shaped.custom;
  if (!body) return [];
  const payload = 'arguments' in body ? body.arguments : (body as { input?: unknown }).input;
  return [body.name, payload].filter((value): value is string => typeof value === 'string');
}
