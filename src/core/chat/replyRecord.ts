import { cutCall, CUT_CALL_RESULT, type AssistantMessage, type ChatMessage } from '../messages';
import type { CompletedRequest } from '../provider/chatModel';
import type { CutCall } from '../session/records';
import type { ChatSettings } from './ports';

/**
 * How a completed reply is kept (docs/architecture.md, "One message, end to
 * end"). Its thinking is kept for the view, and goes into the message (so it
 * is sent, and counted) only for a server that takes it back. A reply cut at
 * the output limit (`finish_reason: "length"`) says so; none of its calls is
 * run, and none goes back as it came: the history keeps each as a call with
 * `{}` for arguments and a tool result saying it was cut, a shape every
 * server takes.
 */
export interface KeptReply {
  readonly message: AssistantMessage;
  readonly reasoning?: string;
  readonly cut?: string;
  readonly cutCalls?: readonly CutCall[];
  /** The tool results of cut calls, in order. */
  readonly cutResults: readonly ChatMessage[];
}

export function keptReply(result: CompletedRequest, settings: Pick<ChatSettings, 'preserveReasoning' | 'maxOutputTokens'>): KeptReply {
  const cut = result.finishReason === 'length';
  const calls = cut ? result.toolCalls.filter((c) => c.function.name !== '') : result.toolCalls;
  const thinking = result.reasoning !== '' ? result.reasoning : undefined;
  const message: AssistantMessage = calls.length > 0
    ? { role: 'assistant', content: result.content || null, tool_calls: cut ? calls.map(cutCall) : calls }
    : { role: 'assistant', content: result.content };
  if (thinking && settings.preserveReasoning) message.reasoning_content = thinking;
  if (!cut) return { message, ...(thinking ? { reasoning: thinking } : {}), cutResults: [] };
  return {
    message,
    ...(thinking ? { reasoning: thinking } : {}),
    cut: cutText(result, settings.maxOutputTokens, calls.length),
    ...(calls.length > 0 ? { cutCalls: calls.map((c) => ({ id: c.id, arguments: c.function.arguments })) } : {}),
    cutResults: calls.map((c) => ({ role: 'tool', tool_call_id: c.id, content: CUT_CALL_RESULT })),
  };
}

/** What the chat says of a reply cut at the output limit, with the setting that sets the limit. */
export function cutText(result: CompletedRequest, maxOutputTokens: number | undefined, calls: number): string {
  const used = result.usage?.completionTokens;
  const notRun = calls > 0 ? ` Its tool call${calls === 1 ? ' was' : 's were'} not run.` : '';
  const n = (x: number): string => x.toLocaleString('en-US');
  if (maxOutputTokens !== undefined && (used === undefined || used >= maxOutputTokens)) {
    return `Cut at the output limit: ${n(used ?? maxOutputTokens)} tokens (candor.maxOutputTokens). Raise the setting for longer replies.${notRun}`;
  }
  if (used !== undefined) {
    const before = maxOutputTokens !== undefined ? `, before candor.maxOutputTokens (${n(maxOutputTokens)})` : '';
    return `Cut at the output limit: ${n(used)} tokens${before}: the server stopped the reply (its own output limit, or its context window is full).${notRun}`;
  }
  return `Cut at the output limit: the server stopped the reply (its own output limit, or its context window is full).${notRun}`;
}
