/**
 * Benchmarks of the anchored compaction gate. Not a test: it prints costs
 * and errors measured side by side in one run.
 *
 * (a) The send path, the span each request's log line gives (`send path …
 *     ms`, from entering `Conversation.request` to the SDK call: resolving
 *     the unchanged model, the gate check, building the payload), read from
 *     that line (sendPath.ts). Sessions of 10, 1,000 and 10,000 messages of
 *     history, the payload being what compaction left; Candor's 8 tools;
 *     gpt-4o with the o200k tokenizer in its worker thread; the offline
 *     provider over HTTP. Beside it, the SDK's own work after the call
 *     (building the request, the first byte on the wire, the body sent, the
 *     reply's first byte) and one full js-tiktoken pass over the same
 *     payload (what counting on the send path would cost). Target: the span
 *     under 1 ms median at every size.
 * (b) Accuracy over 300 mixed requests (CJK, JSON, code, English) against
 *     three providers: o200k with harmony framing, Llama 3 and DeepSeek V3,
 *     each with its chat template. Every estimator, with an anchor (the
 *     request before reported its count) and without one (as after a
 *     compaction or a switch), counted once the provider's count is 10K.
 *
 * Run: `npx tsx bench/gate.bench.ts`.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Tiktoken } from 'js-tiktoken/lite';
import { ContextGate, type TokenCounter } from '../src/core/context';
import { PayloadLedger } from '../src/core/context/ledger';
import { contentText, type ChatMessage } from '../src/core/messages';
import { Content, deepseekV3Provider, harmonyProvider, llama3Provider, o200kTokenizer, systemPrompt, type SimulatedProvider } from './mixedSession';
import { measureSendPath } from './sendPath';
import { MemoryDriftSink } from '../test/helpers/core';

const pct = (value: number): string => `${(value * 100).toFixed(2)}%`;
const pad = (text: string, width: number): string => text.padEnd(width);
const lpad = (text: string, width: number): string => text.padStart(width);
const ms = (value: number): string => (value < 1 ? `${(value * 1000).toFixed(0)} µs` : `${value.toFixed(2)} ms`);

// ---------------------------------------------------------------- (b) accuracy

interface Series {
  readonly label: string;
  readonly anchored: number[];
  readonly unanchored: number[];
}

/** js-tiktoken in this thread behind the tokenizer port, so the ledger counts exactly without a worker. */
function inThreadCounter(o200k: Tiktoken): TokenCounter {
  return { name: 'o200k_base', count: async (texts) => texts.map((t) => (t === '' ? 0 : o200k.encode(t, [], []).length)) };
}

async function measureAccuracy(provider: SimulatedProvider, o200k: Tiktoken): Promise<Series[]> {
  const heuristicLedger = new PayloadLedger();
  const tokenLedger = new PayloadLedger();
  tokenLedger.useCounter(inThreadCounter(o200k));
  const calibratedGate = new ContextGate({ session: 'calibrated', sink: new MemoryDriftSink() });
  const tokenGate = new ContextGate({ session: 'tokenizer', sink: new MemoryDriftSink() });
  const identity = { provider: '127-0-0-1-11434', model: provider.name };
  const series = {
    tokenizer: { label: 'js-tiktoken o200k', anchored: [] as number[], unanchored: [] as number[] },
    calibrated: { label: 'calibrated heuristic', anchored: [] as number[], unanchored: [] as number[] },
    heuristic: { label: 'heuristic (uncalibrated)', anchored: [] as number[], unanchored: [] as number[] },
    kilo: { label: 'last usage + heuristic ×1.3', anchored: [] as number[], unanchored: [] as number[] },
  };
  const content = new Content(2026);
  const system = contentText(systemPrompt(content));
  const history: ChatMessage[] = [];
  let step = 0;
  let previous: { real: number; heuristic: number } | undefined;
  for (let request = 0; request < 300; request++) {
    for (let i = request === 0 ? 0 : content.int(0, 2); i >= 0; i--) {
      const message = content.message(step++);
      history.push(message);
      heuristicLedger.append(message);
      tokenLedger.append(message);
    }
    await tokenLedger.counted();
    const h = heuristicLedger.measure(system, '');
    const t = tokenLedger.measure(system, '');
    const calibrated = calibratedGate.beforeRequest(identity, h);
    const tokenized = tokenGate.beforeRequest(identity, t);
    const real = provider.count([{ role: 'system', content: system }, ...history]);
    calibratedGate.afterRequest({ completed: true, promptTokens: real });
    tokenGate.afterRequest({ completed: true, promptTokens: real });
    const err = (guess: number): number => Math.abs(guess - real) / real;
    if (real >= 10_000 && previous) {
      series.tokenizer.anchored.push(err(tokenized.projected));
      series.tokenizer.unanchored.push(err(t.tokens));
      series.calibrated.anchored.push(err(calibrated.projected));
      series.calibrated.unanchored.push(err(calibrated.estNow));
      series.heuristic.anchored.push(err(previous.real + (h.tokens - previous.heuristic)));
      series.heuristic.unanchored.push(err(h.tokens));
      series.kilo.anchored.push(err(previous.real + 1.3 * (h.tokens - previous.heuristic)));
    }
    previous = { real, heuristic: h.tokens };
  }
  return Object.values(series);
}

function stats(values: readonly number[]): { n: number; worst: number; p99: number } {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  return { n, worst: sorted[n - 1] ?? 0, p99: sorted[Math.max(0, Math.ceil(n * 0.99) - 1)] ?? 0 };
}

// ---------------------------------------------------------------- report

export async function run(): Promise<void> {
  const o200k = o200kTokenizer();
  console.log('gate benchmark\n');
  console.log('(a) the send path each request logs (entering Conversation.request -> the SDK call), median of 15 requests once counted;');
  console.log('    beside it, from the SDK call: its request built, first byte on the wire, body sent, reply\'s first byte. Target: < 1 ms median.');
  console.log(`${pad('history', 9)}${lpad('payload', 9)}${lpad('tokens', 9)}${lpad('first', 10)}${lpad('send path', 11)}${lpad('SDK built', 11)}${lpad('on wire', 10)}${lpad('body sent', 11)}${lpad('reply', 10)}${lpad('full pass', 11)}`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-gate-'));
  try {
    for (const history of [10, 1_000, 10_000]) {
      const r = await measureSendPath(dir, history, o200k);
      console.log(`${pad(String(history), 9)}${lpad(String(r.payload), 9)}${lpad(`${(r.payloadTokens / 1000).toFixed(1)}K`, 9)}${lpad(ms(r.firstMs), 10)}${lpad(ms(r.spanMs), 11)}${lpad(ms(r.sdkMs), 11)}${lpad(ms(r.wireMs), 10)}${lpad(ms(r.bodyMs), 11)}${lpad(ms(r.replyMs), 10)}${lpad(ms(r.fullPassMs), 11)}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  console.log('    (history: messages in the session file; payload: messages sent, what compaction left; first: the first request');
  console.log('    after opening, exact counts still landing; SDK columns are after the span, each from the SDK call)');

  console.log('\n(b) error against the provider\'s count over 300 mixed requests, counted once it is >= 10K tokens');
  console.log('    Targets: anchored js-tiktoken < 0.5% (o200k); calibrated heuristic anchored on Llama 3 / DeepSeek: worst < 1%, p99 < 0.5%,');
  console.log('    never worse than last usage + heuristic ×1.3; without an anchor, once calibrated: worst < 3%.');
  console.log(`${pad('provider', 17)}${pad('estimator', 30)}${lpad('n', 5)}${lpad('anchored worst', 16)}${lpad('p99', 9)}${lpad('no anchor worst', 17)}${lpad('p99', 9)}`);
  for (const provider of [harmonyProvider(o200k), llama3Provider(), deepseekV3Provider()]) {
    for (const series of await measureAccuracy(provider, o200k)) {
      const a = stats(series.anchored);
      const u = stats(series.unanchored);
      const none = u.n === 0;
      console.log(
        `${pad(provider.name, 17)}${pad(series.label, 30)}${lpad(String(a.n), 5)}${lpad(pct(a.worst), 16)}${lpad(pct(a.p99), 9)}${lpad(none ? '—' : pct(u.worst), 17)}${lpad(none ? '—' : pct(u.p99), 9)}`,
      );
    }
  }
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
