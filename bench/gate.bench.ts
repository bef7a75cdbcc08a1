/**
 * Benchmarks of the anchored compaction gate (issue 3). Not a test: it prints
 * costs and errors measured side by side in one run.
 *
 * (a) Cost on the send path: IncrementalEstimate.total + gate.beforeRequest
 *     with one new message appended, against re-tokenizing the whole history
 *     with js-tiktoken, at 10K, 50K and 230K tokens of mixed history.
 * (b) Accuracy over a 300-request mixed session against a simulated provider
 *     that counts with o200k plus its own chat overhead.
 *
 * Run: `npx tsx bench/gate.bench.ts`.
 */
import { performance } from 'node:perf_hooks';
import { MemoryDriftSink } from '../src/core/context/driftEvents';
import { heuristicEstimator, tiktokenEstimator, type Estimator } from '../src/core/context/estimator';
import { ContextGate } from '../src/core/context/gate';
import { IncrementalEstimate } from '../src/core/context/incremental';
import { contentText, type ChatMessage } from '../src/core/messages';
import { mulberry32, uniform } from '../src/core/random';

const IDENTITY = { provider: 'api-openai-com', model: 'gpt-4o' };

// ---------------------------------------------------------------- content

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

class Content {
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

function systemPrompt(content: Content): ChatMessage {
  return { role: 'system', content: `You are Candor, a coding agent.\n\n${content.english(600)}\n\n# Memory\n${content.cjk(400)}` };
}

// ---------------------------------------------------------------- (a) cost

interface CostRow {
  readonly tokens: number;
  readonly messages: number;
  readonly incrementalMs: number;
  /** The same call again with nothing new: the cache walk and the projection. */
  readonly walkMs: number;
  readonly fullMs: number;
}

/** Medians, because other processes on the machine add outliers. */
function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function fullCount(estimator: Estimator, messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) total += estimator.countMessage(message);
  return total;
}

function buildHistory(estimator: Estimator, target: number): ChatMessage[] {
  const content = new Content(42);
  const history = [systemPrompt(content)];
  let tokens = estimator.countMessage(history[0] as ChatMessage);
  for (let step = 0; tokens < target; step++) {
    const message = content.message(step);
    history.push(message);
    tokens += estimator.countMessage(message);
  }
  return history;
}

function measureCost(estimator: Estimator, target: number): CostRow {
  const history = buildHistory(estimator, target);
  const tokens = fullCount(estimator, history);
  // The same appended messages at every size, so the costs compare.
  const extra = new Content(7);
  const appended = Array.from({ length: 40 }, (_, i) => extra.message(i));

  const incremental = new IncrementalEstimate(estimator);
  const gate = new ContextGate({ session: 'bench', sink: new MemoryDriftSink() });
  const live = [...history];
  gate.beforeRequest(IDENTITY, incremental.total(live)); // a live session has counted its history already
  gate.afterRequest({ completed: true, estSent: incremental.total(live), promptTokens: tokens + 10 });
  const incrementalMs: number[] = [];
  const walkMs: number[] = [];
  for (const message of appended) {
    live.push(message);
    const start = performance.now();
    const estNow = incremental.total(live);
    gate.beforeRequest(IDENTITY, estNow);
    incrementalMs.push(performance.now() - start);
    gate.afterRequest({ completed: true, estSent: estNow, promptTokens: estNow + 10 });
    const again = performance.now();
    gate.project(IDENTITY, incremental.total(live));
    walkMs.push(performance.now() - again);
  }

  const fullRuns = target > 100_000 ? 3 : 8;
  const growing = [...history];
  const fullMs: number[] = [];
  for (let i = 0; i < fullRuns; i++) {
    growing.push(appended[i] as ChatMessage);
    const start = performance.now();
    fullCount(estimator, growing);
    fullMs.push(performance.now() - start);
  }
  return { tokens, messages: history.length, incrementalMs: median(incrementalMs), walkMs: median(walkMs), fullMs: median(fullMs) };
}

// ---------------------------------------------------------------- (b) accuracy

/**
 * A provider that renders the chat in OpenAI's harmony format and counts it
 * with o200k, special tokens one token each:
 *   `<|start|>{role}<|message|>{content}<|end|>`,
 *   a tool call as `<|start|>assistant to=functions.{name}<|channel|>commentary json<|message|>{arguments}<|call|>`,
 *   a tool result as `<|start|>functions.{name} to=assistant<|channel|>commentary<|message|>{content}<|end|>`,
 * plus a hidden preamble (tool definitions) and reply priming. Our
 * estimators know none of this framing; ids are never shown to the model.
 */
function providerCounter(o200k: Estimator): (messages: readonly ChatMessage[]) => number {
  const HIDDEN_PREAMBLE = 412;
  const PRIMING = 2; // <|start|>assistant
  const toolNames = new Map<string, string>();
  const countMessage = (message: ChatMessage): number => {
    const text = o200k.countText(contentText(message));
    if (message.role === 'tool') {
      const name = toolNames.get(message.tool_call_id) ?? 'tool';
      return 4 + o200k.countText(`functions.${name} to=assistant`) + o200k.countText('commentary') + text;
    }
    let total = 3 + o200k.countText(message.role) + text;
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) {
        if (call.type !== 'function') continue;
        toolNames.set(call.id, call.function.name);
        total += 4 + o200k.countText(`assistant to=functions.${call.function.name}`) + o200k.countText('commentary json') + o200k.countText(call.function.arguments);
      }
    }
    return total;
  };
  // Memoized only to keep the run short: the simulated count is the same.
  const memo = new WeakMap<ChatMessage, number>();
  return (messages) => {
    let total = PRIMING + HIDDEN_PREAMBLE;
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

interface Errors {
  readonly label: string;
  readonly values: number[];
}

function stats(values: readonly number[]): { n: number; worst: number; p99: number; mean: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const p99 = sorted[Math.max(0, Math.ceil(n * 0.99) - 1)] ?? 0;
  return { n, worst: sorted[n - 1] ?? 0, p99, mean: sorted.reduce((s, v) => s + v, 0) / Math.max(1, n) };
}

async function measureAccuracy(o200k: Estimator): Promise<{ errors: Errors[]; finalTokens: number }> {
  const heuristic = heuristicEstimator();
  const provider = providerCounter(o200k);
  // One incremental cache per estimator, so the provider's counting does not warm ours.
  const sides = [
    { label: 'js-tiktoken o200k, anchored', estimate: new IncrementalEstimate(o200k), anchored: true },
    { label: 'heuristic, anchored', estimate: new IncrementalEstimate(heuristic), anchored: true },
    { label: 'heuristic alone (no anchor)', estimate: new IncrementalEstimate(heuristic), anchored: false },
  ].map((side) => ({ ...side, gate: new ContextGate({ session: side.label, sink: new MemoryDriftSink() }), values: [] as number[] }));

  const content = new Content(2026);
  const payload: ChatMessage[] = [systemPrompt(content)];
  let step = 0;
  let real = 0;
  for (let request = 0; request < 300; request++) {
    const newMessages = request === 0 ? 1 : 1 + content.int(0, 2);
    for (let i = 0; i < newMessages; i++) payload.push(content.message(step++));
    real = provider(payload);
    for (const side of sides) {
      const estNow = side.estimate.total(payload);
      const projection = side.gate.beforeRequest(IDENTITY, estNow);
      side.gate.afterRequest({ completed: true, estSent: estNow, promptTokens: real });
      const guess = side.anchored ? projection.projected : estNow;
      if (!side.anchored || projection.anchored) side.values.push(Math.abs(guess - real) / real);
    }
  }
  return { errors: sides.map(({ label, values }) => ({ label, values })), finalTokens: real };
}

// ---------------------------------------------------------------- report

const pct = (value: number): string => `${(value * 100).toFixed(value < 0.01 ? 3 : 2)}%`;
const ms = (value: number): string => (value < 1 ? `${(value * 1000).toFixed(1)} µs` : `${value.toFixed(1)} ms`);
const pad = (text: string, width: number): string => text.padEnd(width);
const lpad = (text: string, width: number): string => text.padStart(width);

export async function run(): Promise<void> {
  const loadStart = performance.now();
  const o200k = await tiktokenEstimator('o200k_base');
  console.log(`gate benchmark (js-tiktoken o200k_base loaded in ${ms(performance.now() - loadStart)})\n`);

  console.log('(a) send-path cost per request (median), one new message appended');
  console.log(`${pad('history', 9)}${lpad('msgs', 6)}${lpad('incremental', 14)}${lpad('(cache walk)', 14)}${lpad('full re-tokenize', 18)}${lpad('ratio', 9)}`);
  for (const target of [10_000, 50_000, 230_000]) {
    const row = measureCost(o200k, target);
    const ratio = row.fullMs / row.incrementalMs;
    const size = `${(row.tokens / 1000).toFixed(1)}K`;
    console.log(`${pad(size, 9)}${lpad(String(row.messages), 6)}${lpad(ms(row.incrementalMs), 14)}${lpad(ms(row.walkMs), 14)}${lpad(ms(row.fullMs), 18)}${lpad(`${ratio.toFixed(0)}x`, 9)}`);
  }

  const { errors, finalTokens } = await measureAccuracy(o200k);
  console.log(`\n(b) accuracy over 300 requests (provider: o200k, harmony framing; ends at ${(finalTokens / 1000).toFixed(0)}K tokens)`);
  console.log(`${pad('estimate', 30)}${lpad('n', 5)}${lpad('worst', 10)}${lpad('p99', 10)}${lpad('mean', 10)}`);
  for (const { label, values } of errors) {
    const s = stats(values);
    console.log(`${pad(label, 30)}${lpad(String(s.n), 5)}${lpad(pct(s.worst), 10)}${lpad(pct(s.p99), 10)}${lpad(pct(s.mean), 10)}`);
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
