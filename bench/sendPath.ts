/**
 * The send path as the extension logs it (docs/architecture.md, "Context
 * gate"): from entering `Conversation.request` to the SDK call, covering
 * resolving the unchanged model (the core's `ModelResolver`, which the host's
 * `Providers` wraps), the gate check and building the payload. The figure is
 * read from each request's own log line (`send path … ms`), so the benchmark
 * and the log measure one span.
 *
 * Beside it, what the SDK does after that call, from undici's diagnostics
 * channels: building the HTTP request (the JSON body among it), the first
 * byte on the wire (headers written), the body sent, and the first byte of
 * the reply. Sessions of 10, 1,000 and 10,000 messages, written as Candor
 * writes them, compacted whenever the history passed ~100K tokens, so the
 * payload is what compaction leaves; Candor's own 8 tools, its system prompt
 * built per request, gpt-4o with the o200k tokenizer in its worker thread.
 */
import dc from 'node:diagnostics_channel';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Tiktoken } from 'js-tiktoken/lite';
import { openConversation } from '../src/core/chat/openConversation';
import { DriftLog } from '../src/core/context';
import { SUMMARY_PREFIX } from '../src/core/context/compaction';
import { heuristicTokens } from '../src/core/context/heuristic';
import { providerSlug } from '../src/core/providerSlug';
import { messageOverhead, messageParts, REPLY_PRIMING } from '../src/core/context/messageParts';
import { WorkerTokenizer } from '../src/core/context/tokenizer/workerTokenizer';
import { noUnsavedBuffers } from '../src/core/git/unsaved';
import type { Logger } from '../src/core/log';
import { contentText, type ChatMessage } from '../src/core/messages';
import { parseScenario } from '../src/core/offline/scenario';
import { startOfflineServer } from '../src/core/offline/server';
import { buildSystemPrompt, BUILT_IN_PROMPT } from '../src/core/prompt/systemPrompt';
import { ModelResolver } from '../src/core/provider/resolve';
import { Session } from '../src/core/session/session';
import { agentTools } from '../src/core/tools/agentTools';
import { installedTokenizerModules } from '../test/helpers/installedModules';
import { Content } from './mixedSession';

const REQUESTS = 15;
/** Characters of history past which the session was compacted: about 100K tokens. */
const COMPACT_AT_CHARS = 400_000;
const KEEP_TURNS = 4;

export interface SendPathRow {
  readonly history: number;
  readonly payload: number;
  readonly payloadTokens: number;
  /** The first request after opening, exact counts still landing. */
  readonly firstMs: number;
  /** Medians over the requests once every count landed. */
  readonly spanMs: number;
  readonly sdkMs: number;
  readonly wireMs: number;
  readonly bodyMs: number;
  readonly replyMs: number;
  /** One js-tiktoken pass over the same payload: what counting on the send path would cost. */
  readonly fullPassMs: number;
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

/** A session of `messages` messages, with the compaction records a 100K-token history would have had. */
function writeSession(dir: string, messages: number): string {
  const content = new Content(42);
  const lines = [JSON.stringify({ v: 1, ts: new Date().toISOString(), type: 'meta', id: `send-path-${messages}` })];
  const line = (record: object): number => lines.push(JSON.stringify({ v: 1, ts: new Date().toISOString(), ...record }));
  let live: Array<{ id: string; message: ChatMessage }> = [];
  let chars = 0;
  for (let step = 0; step < messages; step++) {
    const message = content.message(step);
    const id = `m${step}`;
    line({ type: 'message', id, turn: `t${step >> 2}`, message });
    live.push({ id, message });
    chars += contentText(message).length + JSON.stringify(message.role === 'assistant' ? message.tool_calls ?? [] : []).length;
    // A turn ends with the assistant's text (every fourth message): where the chat would have compacted.
    if (step % 4 !== 3 || chars < COMPACT_AT_CHARS) continue;
    const keepFrom = live.length - KEEP_TURNS * 4;
    const id2 = `c${step}`;
    const summary: ChatMessage = { role: 'user', content: `${SUMMARY_PREFIX}\n\n${content.english(400)}` };
    line({ type: 'compaction', id: id2, replaces: live.slice(0, keepFrom).map((e) => e.id), summary });
    live = [{ id: id2, message: summary }, ...live.slice(keepFrom)];
    chars = live.reduce((n, e) => n + contentText(e.message).length, 0);
  }
  const file = path.join(dir, `send-path-${messages}.jsonl`);
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** When each stage of the HTTP request happened, from undici's own channels. */
function httpStages(): { since(t: number): { create: number; headers: number; body: number; reply: number }; dispose(): void } {
  const times: Record<string, number[]> = {};
  const names = ['undici:request:create', 'undici:client:sendHeaders', 'undici:request:bodySent', 'undici:request:headers'];
  const listeners = names.map((name) => {
    const listener = (): void => void (times[name] ??= []).push(performance.now());
    dc.subscribe(name, listener);
    return { name, listener };
  });
  const after = (name: string, t: number): number => ((times[name] ?? []).find((x) => x >= t) ?? NaN) - t;
  return {
    since: (t) => ({ create: after(names[0] ?? '', t), headers: after(names[1] ?? '', t), body: after(names[2] ?? '', t), reply: after(names[3] ?? '', t) }),
    dispose: () => listeners.forEach(({ name, listener }) => dc.unsubscribe(name, listener)),
  };
}

export async function measureSendPath(dir: string, messages: number, o200k: Tiktoken): Promise<SendPathRow> {
  const scenario = parseScenario({ rules: [{ respond: { text: 'Noted.' }, chunkChars: 100 }] });
  const server = await startOfflineServer({ scenario: () => scenario, countTokens: heuristicTokens });
  const resolver = new ModelResolver({ scenario: () => scenario, countTokens: heuristicTokens });
  const worker = new WorkerTokenizer('o200k_base', installedTokenizerModules());
  const stages = httpStages();
  const spans: Array<{ ms: number; at: number }> = [];
  const log: Logger = {
    trace: () => undefined,
    warn: () => undefined,
    error: (m) => console.error(m),
    info: (m) => {
      const ms = /send path ([\d.]+) ms/.exec(m)?.[1];
      if (ms !== undefined) spans.push({ ms: Number(ms), at: performance.now() });
    },
  };
  try {
    const session = Session.open(writeSession(dir, messages));
    const drift = new DriftLog(path.join(dir, `drift-${messages}.jsonl`));
    // The host hands out the same tool objects for every request, as here.
    const tools = agentTools({ roots: () => [dir], repository: async () => undefined, unsaved: noUnsavedBuffers, proposeEdit: async () => '', remember: async () => '' });
    const memory = new Content(5).english(300);
    const settings = (): Parameters<ModelResolver['resolve']>[0] => ({ baseUrl: server.baseUrl, apiKey: 'bench-key', model: 'gpt-4o', policy: { idleTimeoutMs: 60_000, maxRetries: 0 } });
    const identity = { provider: providerSlug(server.baseUrl), model: 'gpt-4o' };
    const chat = openConversation(session, {
      driftLog: drift,
      summaryModel: { complete: async () => 'unused' },
      identity: () => identity,
      tokenizer: () => worker,
      // Resolved for every request from settings read afresh, as the extension does.
      provider: () => resolver.resolve(settings()),
      settings: () => ({ contextWindow: 1_000_000, thresholdPercent: 90, keepTurns: KEEP_TURNS }),
      // Built for every request, as the extension does: a new string each time.
      prompt: { systemPrompt: async (toolNames) => buildSystemPrompt({ prompt: BUILT_IN_PROMPT, memory, toolNames }) },
      tools: () => tools,
      emit: () => undefined,
      log,
    });
    await chat.publishGauge();
    const extra = new Content(7);
    const ask = async (i: number): Promise<{ ms: number; at: number }> => {
      await chat.send(`question ${i}: ${extra.english(150)}`);
      return spans.at(-1) ?? { ms: NaN, at: NaN };
    };
    const firstMs = (await ask(0)).ms;
    for (let i = 0; i < 100 && ((await chat.publishGauge()).estimator?.pending ?? 0) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    const rows: Array<{ ms: number; create: number; headers: number; body: number; reply: number }> = [];
    for (let i = 1; i <= REQUESTS; i++) {
      const span = await ask(i);
      rows.push({ ms: span.ms, ...stages.since(span.at) });
    }
    const payload: ChatMessage[] = [{ role: 'system', content: 'x' }, ...chat.session.history()];
    const full: number[] = [];
    let payloadTokens = 0;
    for (let i = 0; i < 3; i++) {
      const start = performance.now();
      payloadTokens = fullPass(o200k, payload);
      full.push(performance.now() - start);
    }
    return {
      history: messages,
      payload: payload.length,
      payloadTokens,
      firstMs,
      spanMs: median(rows.map((r) => r.ms)),
      sdkMs: median(rows.map((r) => r.create)),
      wireMs: median(rows.map((r) => r.headers)),
      bodyMs: median(rows.map((r) => r.body)),
      replyMs: median(rows.map((r) => r.reply)),
      fullPassMs: median(full),
    };
  } finally {
    stages.dispose();
    worker.dispose();
    await resolver.close();
    await server.close();
  }
}

/** Every message counted by js-tiktoken, as OpenAI's recipe counts it. */
export function fullPass(o200k: Tiktoken, messages: readonly ChatMessage[]): number {
  let total = REPLY_PRIMING;
  for (const message of messages) {
    total += messageOverhead(message);
    for (const part of messageParts(message)) total += o200k.encode(part, [], []).length;
  }
  return total;
}
