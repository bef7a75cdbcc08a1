import { messageOverhead, messageParts, REPLY_PRIMING } from '../context/messageParts';
import { renderTools } from '../context/toolRendering';
import type { ChatMessage, ToolSpec } from '../messages';

/**
 * The offline provider's prompt_tokens, counted as OpenAI counts a request
 * (docs/architecture.md, "Context gate"): each message's role, content, name
 * and tool calls with the chat frame's constants, the tool definitions by
 * OpenAI's documented rendering, and the reply's priming. Ids are not
 * counted. With js-tiktoken's o200k as `countTokens` (the extension's), the
 * demo reports what gpt-4o would: its anchors are a real provider's.
 */
export async function countPrompt(
  messages: readonly unknown[],
  tools: readonly unknown[],
  countTokens: (text: string) => number | Promise<number>,
): Promise<number> {
  let constant = REPLY_PRIMING;
  const texts: string[] = [];
  for (const raw of messages) {
    const message = wireMessage(raw);
    if (!message) continue;
    constant += messageOverhead(message);
    texts.push(...messageParts(message));
  }
  const rendering = renderTools('openai', tools.filter(isToolSpec));
  for (const item of [...rendering.tools, rendering.list]) {
    constant += item.overhead;
    texts.push(...item.texts.filter((text) => text.length > 0));
  }
  // Asked all at once: a tokenizer in a worker thread answers them in one go.
  const counts = await Promise.all(texts.map((text) => countTokens(text)));
  return counts.reduce((total, n) => total + n, constant);
}

/** A message of the request body, read as loosely as a provider reads it; anything else is skipped. */
function wireMessage(raw: unknown): ChatMessage | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const role = (raw as { role?: unknown }).role;
  return { ...(raw as object), role: typeof role === 'string' ? role : '' } as ChatMessage;
}

function isToolSpec(value: unknown): value is ToolSpec {
  if (value === null || typeof value !== 'object') return false;
  const fn = (value as { function?: unknown }).function;
  return fn !== null && typeof fn === 'object' && typeof (fn as { name?: unknown }).name === 'string';
}
