import { contentText, type ChatMessage } from '../messages';

/**
 * Tokens added per message for the chat frame (role markers, separators).
 * OpenAI's own counting recipe uses 3; the anchor cancels whatever constant a
 * provider really uses, so the exact value matters only for anchor-less
 * estimates.
 */
export const PER_MESSAGE_OVERHEAD = 3;

/**
 * The texts of a message that a provider tokenizes: role, content, each tool
 * call's name and arguments, and the tool_call_id or name. Counted piece by
 * piece (as OpenAI's recipe does) rather than joined, so no separator we
 * invent shows up in the count.
 */
export function messageParts(message: ChatMessage): string[] {
  const parts: string[] = [message.role, contentText(message)];
  const loose = message as {
    name?: unknown;
    tool_call_id?: unknown;
    tool_calls?: unknown;
  };
  if (typeof loose.name === 'string') parts.push(loose.name);
  if (typeof loose.tool_call_id === 'string') parts.push(loose.tool_call_id);
  if (Array.isArray(loose.tool_calls)) {
    for (const call of loose.tool_calls as unknown[]) parts.push(...toolCallParts(call));
  }
  return parts.filter((part) => part.length > 0);
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
