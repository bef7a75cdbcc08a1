/**
 * Messages as Candor sends them to an OpenAI-compatible chat completions
 * endpoint: the subset of the wire format it uses, declared here so that no
 * code outside `src/core/provider` depends on the SDK. The adapter passes
 * them to the SDK as they are.
 */
export type ChatMessage = SystemMessage | UserMessage | AssistantMessage | ToolMessage;

export interface SystemMessage {
  role: 'system';
  content: string;
}

export interface UserMessage {
  role: 'user';
  content: string;
}

export interface AssistantMessage {
  role: 'assistant';
  /** Null when the reply is tool calls only. */
  content?: string | null;
  tool_calls?: ToolCall[];
  /**
   * The model's thinking, sent back only to a server whose template keeps it
   * (llama.cpp's `supports_preserve_reasoning`); otherwise it stays in the
   * session record alone (docs/architecture.md, "Model port").
   */
  reasoning_content?: string;
}

export interface ToolMessage {
  role: 'tool';
  tool_call_id: string;
  content: string;
}

export interface ToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

/** A function the model may call: name, description and JSON Schema of its arguments. */
export interface ToolSpec {
  type: 'function';
  function: { name: string; description?: string; parameters?: Record<string, unknown> };
}

/** A function tool whose arguments are one JSON object with exactly these properties. */
export function toolSpec(name: string, description: string, properties: Record<string, object>, required: readonly string[] = []): ToolSpec {
  return { type: 'function', function: { name, description, parameters: { type: 'object', properties, required: [...required], additionalProperties: false } } };
}

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

/**
 * Whether a tool call's arguments are a JSON object: what every server needs
 * to take the call back in a later request (llama.cpp answers HTTP 500 to
 * anything else, for every later request of the session).
 */
export function argumentsAreObject(args: string): boolean {
  try {
    const value: unknown = JSON.parse(args);
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}

/** What the model is told of a call it made in a reply cut at the output limit. */
export const CUT_CALL_RESULT = 'Not run: this tool call was cut at the output limit (finish_reason "length") before the reply was complete, so its arguments may be incomplete. Nothing was done. If it is still needed, call it again with shorter arguments.';

/** A call as history keeps it when it cannot go back as it came: `{}` for its arguments, every other part as it was. */
export function cutCall(call: ToolCall): ToolCall {
  return { ...call, function: { ...call.function, arguments: '{}' } };
}

/**
 * The message with every call whose arguments are not a JSON object turned
 * into a cut call: how a session written before cut calls were kept apart
 * is repaired when it is loaded (docs/architecture.md, "Sessions").
 */
export function withSendableCalls(message: ChatMessage): ChatMessage {
  if (message.role !== 'assistant' || !message.tool_calls?.some((c) => !argumentsAreObject(c.function.arguments))) return message;
  return { ...message, tool_calls: message.tool_calls.map((c) => (argumentsAreObject(c.function.arguments) ? c : cutCall(c))) };
}
