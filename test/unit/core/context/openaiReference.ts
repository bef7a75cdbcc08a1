// OpenAI's published counting, for the tests of the tool rendering and of the
// offline provider. Two things, kept apart from Candor's own code:
//
// - OpenAI's cookbook "How to count tokens with tiktoken", sections 6 and 7:
//   its example requests, and for each model the prompt_tokens it printed as
//   "counted by the OpenAI API". Those figures are the provider's.
// - The cookbook's recipe written out again here, over gpt-tokenizer: an
//   implementation of the encodings independent of js-tiktoken, which Candor
//   counts with. The cookbook has no figure for tool calls; the reference
//   counts their values (name and arguments) as its recipe counts every value
//   of a message, and no ids.
import { countTokens as cl100k } from 'gpt-tokenizer/cjs/encoding/cl100k_base';
import { countTokens as o200k } from 'gpt-tokenizer/cjs/encoding/o200k_base';
import type { ToolSpec } from '../../../../src/core/messages';

export type ReferenceEncoding = 'o200k_base' | 'cl100k_base';

/** A message as the wire carries it: a name, tool calls and ids included. */
export interface WireMessage {
  readonly role: string;
  readonly content?: string | null;
  readonly name?: string;
  readonly tool_call_id?: string;
  readonly tool_calls?: readonly { readonly id: string; readonly type: 'function'; readonly function: { readonly name: string; readonly arguments: string } }[];
}

/** Section 6: a system prompt and few-shot examples given as named system messages. */
export const COOKBOOK_NAMED_MESSAGES: readonly WireMessage[] = [
  { role: 'system', content: 'You are a helpful, pattern-following assistant that translates corporate jargon into plain English.' },
  { role: 'system', name: 'example_user', content: 'New synergies will help drive top-line growth.' },
  { role: 'system', name: 'example_assistant', content: 'Things working well together will increase revenue.' },
  { role: 'system', name: 'example_user', content: "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage." },
  { role: 'system', name: 'example_assistant', content: "Let's talk later when we're less busy about how to do better." },
  { role: 'user', content: "This late pivot means we don't have time to boil the ocean for the client deliverable." },
];

/** Section 7: one tool with an enum, and two messages. */
export const COOKBOOK_TOOLS: readonly ToolSpec[] = [
  {
    type: 'function',
    function: {
      name: 'get_current_weather',
      description: 'Get the current weather in a given location',
      parameters: {
        type: 'object',
        properties: {
          location: { type: 'string', description: 'The city and state, e.g. San Francisco, CA' },
          unit: { type: 'string', description: 'The unit of temperature to return', enum: ['celsius', 'fahrenheit'] },
        },
        required: ['location'],
      },
    },
  },
];

export const COOKBOOK_TOOL_MESSAGES: readonly WireMessage[] = [
  { role: 'system', content: 'You are a helpful assistant that can answer to questions about the weather.' },
  { role: 'user', content: "What's the weather like in San Francisco?" },
];

/** prompt_tokens "counted by the OpenAI API", as the cookbook printed them, per model. */
export const COOKBOOK_API_COUNTS = {
  namedMessages: { 'gpt-4o': 124, 'gpt-4o-mini': 124, 'gpt-4': 129, 'gpt-3.5-turbo': 129 },
  tools: { 'gpt-4o': 101, 'gpt-4o-mini': 101, 'gpt-4': 105, 'gpt-3.5-turbo': 105 },
} as const;

export type CookbookModel = keyof (typeof COOKBOOK_API_COUNTS)['tools'];

export function referenceEncoding(model: string): ReferenceEncoding {
  return model.startsWith('gpt-4o') ? 'o200k_base' : 'cl100k_base';
}

function counter(encoding: ReferenceEncoding): (text: string) => number {
  const count = encoding === 'o200k_base' ? o200k : cl100k;
  // Text that looks like a special token is text here, as it is in a chat message.
  return (text) => (text === '' ? 0 : count(text, { disallowedSpecial: new Set() }));
}

/** `num_tokens_from_messages`: 3 per message, every value, 1 more for a name, 3 for the reply's priming. */
export function recipeMessages(messages: readonly WireMessage[], encoding: ReferenceEncoding): number {
  const count = counter(encoding);
  let tokens = 0;
  for (const message of messages) {
    tokens += 3;
    tokens += count(message.role) + count(message.content ?? '');
    if (message.name !== undefined) tokens += count(message.name) + 1;
    for (const call of message.tool_calls ?? []) tokens += count(call.function.name) + count(call.function.arguments);
  }
  return tokens + 3;
}

/** `num_tokens_for_tools`, its function part: the cookbook's constants for each encoding. */
export function recipeTools(tools: readonly ToolSpec[], encoding: ReferenceEncoding, withListEnd = true): number {
  if (tools.length === 0) return 0;
  const count = counter(encoding);
  const funcInit = encoding === 'o200k_base' ? 7 : 10;
  const dropStop = (text: unknown): string => {
    const value = typeof text === 'string' ? text : '';
    return value.endsWith('.') ? value.slice(0, -1) : value;
  };
  let tokens = 0;
  for (const tool of tools) {
    tokens += funcInit;
    tokens += count(`${tool.function.name}:${dropStop(tool.function.description)}`);
    const properties = (tool.function.parameters?.properties ?? {}) as Record<string, { type?: string; description?: string; enum?: unknown[] }>;
    if (Object.keys(properties).length > 0) {
      tokens += 3;
      for (const [key, property] of Object.entries(properties)) {
        tokens += 3;
        if (property.enum) {
          tokens -= 3;
          for (const item of property.enum) tokens += 3 + count(String(item));
        }
        tokens += count(`${key}:${property.type ?? 'any'}:${dropStop(property.description)}`);
      }
    }
  }
  return tokens + (withListEnd ? 12 : 0);
}

/** A whole request by the recipe. */
export function recipeRequest(messages: readonly WireMessage[], tools: readonly ToolSpec[], encoding: ReferenceEncoding): number {
  return recipeMessages(messages, encoding) + recipeTools(tools, encoding);
}
