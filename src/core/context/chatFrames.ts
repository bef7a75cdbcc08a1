import { contentText, type ChatMessage, type ToolCall, type ToolSpec } from '../messages';
import type { TemplateFamily } from '../modelIdentity';

/**
 * The chat templates of the families whose tokenizers Candor ships, written
 * in code (docs/architecture.md, "Exact counts"): each message, the system
 * turn, the tool definitions and the reply's priming as the family's template
 * renders them, so that the family's tokenizer counts what the server counts.
 *
 * Every text starts where the template's own tokenization is cut anyway:
 * right before a special token, or right after a line break and before a
 * character that is not white space. A tokenizer never merges across such a
 * point, so the count of the whole prompt is the sum of the counts of these
 * texts, and each message can be counted once, when it arrives. Where a
 * template joins two messages (Qwen3 puts consecutive tool results in one
 * user turn), the later one carries a negative overhead for the frame it
 * does not repeat.
 *
 * - `qwen3`: Qwen3's template (ChatML; tools as JSON in `<tools>` in the
 *   system turn, calls in `<tool_call>`, results in `<tool_response>`).
 *   Qwen 2.5 writes tools, calls and results the same way.
 * - `llama3`: Llama 3.1's published format: the system turn with the date
 *   lines, the definitions as JSON indented by 4 at the start of the first
 *   user turn, a call as `{"name": …, "parameters": …}`, a result as the
 *   `ipython` role with its text as a JSON string.
 * - `deepseek_v3`: DeepSeek V3's bar tokens; its template renders no
 *   definitions, so they follow the system prompt as a `## Tools` list, one
 *   fenced JSON block a line each; calls in fenced JSON between its
 *   tool-call tokens.
 */

export const TEMPLATE_FAMILIES: readonly TemplateFamily[] = ['qwen3', 'llama3', 'deepseek_v3'];

/** What the gauge calls each family ("counted with Qwen3's tokenizer"). */
export const FAMILY_NAMES: Readonly<Record<TemplateFamily, string>> = { qwen3: 'Qwen3', llama3: 'Llama 3', deepseek_v3: 'DeepSeek V3' };

/** Texts the tokenizer counts, and tokens added to their count (negative where a template joins two messages). */
export interface Framed {
  readonly texts: readonly string[];
  readonly overhead: number;
}

export interface FramedTools {
  readonly tools: readonly { readonly name: string; readonly texts: readonly string[] }[];
  /** What the list adds once: the frame around the definitions. */
  readonly list: Framed;
}

export interface ChatFrames {
  readonly family: TemplateFamily;
  /** The system turn and the reply's priming; `tools`: the request sends definitions (some templates put them in the system turn). */
  system(text: string, tools: boolean): Framed;
  tools(specs: readonly ToolSpec[]): FramedTools;
  /** One message of the history; `previous` is the message before it (undefined for the first). */
  message(message: ChatMessage, previous: ChatMessage | undefined): Framed;
}

/**
 * JSON as Python's `json.dumps` writes it, which is what the templates'
 * `tojson` runs (and llama.cpp's, like it): `", "` and `": "` between items,
 * non-ASCII characters as they are; with `indent`, JSON.stringify's layout,
 * which is Python's too.
 */
export function templateJson(value: unknown, indent?: number): string {
  if (indent !== undefined) return JSON.stringify(value, null, indent) ?? 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map((item) => templateJson(item)).join(', ')}]`;
  const entries = Object.entries(value as Record<string, unknown>).filter(([, item]) => item !== undefined && typeof item !== 'function');
  return `{${entries.map(([key, item]) => `${JSON.stringify(key)}: ${templateJson(item)}`).join(', ')}}`;
}

/** A call's arguments as the server re-serializes them: parsed, then written by `tojson`; text that is not JSON stays as it came. */
function argumentsJson(call: ToolCall): string {
  try {
    return templateJson(JSON.parse(call.function.arguments) as unknown);
  } catch {
    return call.function.arguments;
  }
}

const framed = (texts: string[], overhead = 0): Framed => ({ texts: texts.filter((t) => t !== ''), overhead });

const QWEN_TOOLS_HEAD =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>\n';
const QWEN_TOOLS_TAIL =
  '</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';

const qwen3: ChatFrames = {
  family: 'qwen3',
  system: (text, tools) => {
    const reply = '<|im_start|>assistant\n';
    if (tools) return framed([`<|im_start|>system\n${text === '' ? '' : `${text}\n\n`}`, reply]);
    return framed([text === '' ? '' : `<|im_start|>system\n${text}<|im_end|>\n`, reply]);
  },
  tools: (specs) => ({
    tools: specs.map((spec) => ({ name: spec.function.name, texts: [`${templateJson(spec)}\n`] })),
    list: framed([QWEN_TOOLS_HEAD, QWEN_TOOLS_TAIL]),
  }),
  message: (message, previous) => {
    if (message.role === 'tool') {
      const body = `<tool_response>\n${message.content}\n</tool_response><|im_end|>\n`;
      // Consecutive results share one user turn: the one before closed it (`<|im_end|>`, `\n`), this one reopens nothing.
      return previous?.role === 'tool' ? framed([`\n${body}`], -2) : framed([`<|im_start|>user\n${body}`]);
    }
    if (message.role === 'assistant') {
      const content = contentText(message);
      const calls = (message.tool_calls ?? []).map((call, i) => `${i > 0 || content !== '' ? '\n' : ''}<tool_call>\n{"name": "${call.function.name}", "arguments": ${argumentsJson(call)}}\n</tool_call>`);
      return framed([`<|im_start|>assistant\n${content}${calls.join('')}<|im_end|>\n`]);
    }
    return framed([`<|im_start|>${message.role}\n${contentText(message)}<|im_end|>\n`]);
  },
};

const LLAMA_TOOLS_HEAD =
  'Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n' +
  'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n';
const header = (role: string): string => `<|start_header_id|>${role}<|end_header_id|>\n\n`;

/**
 * Llama 3.1 with its definitions at the start of the first user turn (its
 * template's default). Jinja's `trim` strips what Python's `str.strip` does.
 */
const llama3: ChatFrames = {
  family: 'llama3',
  system: (text, tools) =>
    framed([`<|begin_of_text|>${header('system')}${tools ? 'Environment: ipython\n' : ''}Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n`, `${text.trim()}<|eot_id|>`, header('assistant')]),
  tools: (specs) => ({
    tools: specs.map((spec) => ({ name: spec.function.name, texts: [`${templateJson(spec, 4)}\n\n`] })),
    list: framed([LLAMA_TOOLS_HEAD]),
  }),
  message: (message) => {
    if (message.role === 'tool') return framed([`${header('ipython')}${JSON.stringify(message.content)}<|eot_id|>`]);
    if (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0) {
      const calls = (message.tool_calls ?? []).map((call) => `{"name": "${call.function.name}", "parameters": ${argumentsJson(call)}}`);
      return framed([`${header('assistant')}${calls.join('')}<|eot_id|>`]);
    }
    return framed([`${header(message.role)}${contentText(message).trim()}<|eot_id|>`]);
  },
};

const deepseekV3: ChatFrames = {
  family: 'deepseek_v3',
  system: (text, tools) => framed([`<｜begin▁of▁sentence｜>${text}${tools ? '\n\n' : ''}`, '<｜Assistant｜>']),
  tools: (specs) => ({
    // Each definition ends its own line, so no count crosses from one to the next.
    tools: specs.map((spec) => ({ name: spec.function.name, texts: [`- \`${spec.function.name}\`:\n\`\`\`json\n${JSON.stringify(spec.function)}\n\`\`\`\n`] })),
    list: framed(['## Tools\n\n### Function\n\nYou have the following functions available:\n\n']),
  }),
  message: (message) => {
    const content = contentText(message);
    if (message.role === 'user') return framed([`<｜User｜>${content}`]);
    if (message.role === 'tool') return framed([`<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>${content}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>`]);
    if (message.role === 'assistant' && (message.tool_calls?.length ?? 0) > 0) {
      const calls = (message.tool_calls ?? []).map((call) => `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${call.function.name}\n\`\`\`json\n${call.function.arguments}\n\`\`\`<｜tool▁call▁end｜>`);
      return framed([`<｜Assistant｜><｜tool▁calls▁begin｜>${calls.join('')}<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`]);
    }
    return framed([message.role === 'assistant' ? `<｜Assistant｜>${content}<｜end▁of▁sentence｜>` : content]);
  },
};

export const CHAT_FRAMES: Readonly<Record<TemplateFamily, ChatFrames>> = { qwen3, llama3, deepseek_v3: deepseekV3 };
