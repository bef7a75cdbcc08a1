/**
 * One request, three ways of looking at it.
 *
 * (a) The model port's event stream against the callback path it replaced,
 *     on the same scripted reply from the embedded offline provider over
 *     real HTTP (4,000 characters in 400 chunks, tool-call-free), taken in
 *     turns so both see the same machine: the median time of one whole
 *     request, and their ratio. What the events add is an async generator
 *     step per delta, the think splitter and the watchdog.
 * (b) The send path as each request logs it (`send path … ms`, from
 *     entering Conversation.request to the SDK call; bench/sendPath.ts), on a
 *     session of 1,000 messages. Target: under 1 ms.
 * (c) Against a real llama-server (test/helpers/llamaServer.ts), Candor's
 *     first request of a session with its real system prompt and tools: the
 *     estimate it logs beside the count the server reports. Printed only;
 *     making them agree is the tokenizer's work.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openConversation } from '../src/core/chat/openConversation';
import { DriftLog } from '../src/core/context';
import { heuristicTokens } from '../src/core/context/heuristic';
import { noUnsavedBuffers } from '../src/core/git/unsaved';
import type { Logger } from '../src/core/log';
import type { ChatMessage } from '../src/core/messages';
import { parseScenario } from '../src/core/offline/scenario';
import { startOfflineServer } from '../src/core/offline/server';
import { buildSystemPrompt, BUILT_IN_PROMPT } from '../src/core/prompt/systemPrompt';
import { createClient, openAiChatModel } from '../src/core/provider/openaiModel';
import { Session } from '../src/core/session/session';
import { agentTools } from '../src/core/tools/agentTools';
import { Estimators } from '../src/host/context/estimators';
import { findLlama, startLlama } from '../test/helpers/llamaServer';
import { installedTokenizerModules } from '../test/helpers/installedModules';
import { callbackStream } from './callbackStream';
import { o200kTokenizer } from './mixedSession';
import { measureSendPath } from './sendPath';

const ROUNDS = 120;
const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;
const ms = (x: number): string => `${x.toFixed(2)} ms`;

async function eventsAgainstCallbacks(): Promise<void> {
  const reply = 'The quick brown fox jumps over the lazy dog. '.repeat(90).slice(0, 4000);
  const scenario = parseScenario({ rules: [{ respond: { text: reply }, chunkChars: 10, chunkDelayMs: 0 }] });
  const server = await startOfflineServer({ scenario: () => scenario, countTokens: heuristicTokens });
  const client = createClient(server.baseUrl, 'bench');
  const model = openAiChatModel(client, { provider: 'offline', model: 'm' }, { idleTimeoutMs: 60_000, firstTokenTimeoutMs: 300_000, maxRetries: 0 });
  const messages: ChatMessage[] = [{ role: 'user', content: 'hi' }];
  const events: number[] = [];
  const callbacks: number[] = [];
  let sink = 0;
  try {
    const viaEvents = async (): Promise<number> => {
      const start = performance.now();
      for await (const event of model.stream({ messages })) if (event.type === 'text') sink += event.text.length;
      return performance.now() - start;
    };
    const viaCallbacks = async (): Promise<number> => {
      const start = performance.now();
      await callbackStream(client, 'm', messages, 60_000, (d) => (sink += d.length));
      return performance.now() - start;
    };
    for (let i = 0; i < ROUNDS + 6; i++) {
      // Each goes first every other round, so a drift of the machine's load falls on both.
      const [e, c] = i % 2 === 0 ? [await viaEvents(), await viaCallbacks()] : [await viaCallbacks(), await viaEvents()].reverse() as [number, number];
      // The first rounds warm the connection pool and the JIT.
      if (i >= 6) {
        events.push(e);
        callbacks.push(c);
      }
    }
  } finally {
    await server.close();
  }
  const e = median(events);
  const cb = median(callbacks);
  console.log(`(a) one request, 4,000 characters in 400 chunks, median of ${ROUNDS} taken in turns (${sink > 0 ? 'replies read' : 'nothing read'}):`);
  console.log(`    event stream ${ms(e)}   callback path ${ms(cb)}   ratio ${(e / cb).toFixed(2)}×`);
}

async function sendPath(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-request-'));
  try {
    const r = await measureSendPath(dir, 1_000, o200kTokenizer());
    console.log(`(b) the send path as logged, a session of 1,000 messages (${r.payload} sent), median of 15: ${ms(r.spanMs)} (target < 1 ms); the first request after opening: ${ms(r.firstMs)}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function firstRequestOnLlama(): Promise<void> {
  const found = findLlama();
  if ('missing' in found) {
    console.log(`(c) skipped: ${found.missing}`);
    return;
  }
  const server = await startLlama(found, { ctx: 16384, model: 'toolcall' });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-llama-'));
  const estimators = new Estimators(installedTokenizerModules());
  const lines: string[] = [];
  const log: Logger = { trace: () => undefined, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
  try {
    const identity = { provider: `127-0-0-1-${server.port}`, model: server.modelPath };
    const model = openAiChatModel(createClient(server.baseUrl, ''), identity, { idleTimeoutMs: 60_000, maxRetries: 0, maxOutputTokens: 16 }, undefined, { returnProgress: true });
    const tools = agentTools({ roots: () => [dir], repository: async () => undefined, unsaved: noUnsavedBuffers, proposeEdit: async () => '', remember: async () => '' });
    const chat = openConversation(Session.create(path.join(dir, 'sessions'), 'bench'), {
      driftLog: new DriftLog(path.join(dir, 'drift.jsonl')),
      summaryModel: model,
      identity: () => identity,
      tokenizer: (m) => estimators.counterFor(m),
      provider: async () => model,
      settings: () => ({ contextWindow: 16384, thresholdPercent: 80, keepTurns: 4 }),
      prompt: { systemPrompt: async (toolNames) => buildSystemPrompt({ prompt: BUILT_IN_PROMPT, memory: '', toolNames }) },
      tools: () => tools,
      emit: () => undefined,
      log,
    });
    await chat.send('hi');
    const request = lines.find((l) => l.startsWith('request: ')) ?? '';
    const completed = lines.find((l) => l.startsWith('completed: ')) ?? '';
    const est = /est (\d+) \(([^)]+)\)/.exec(request);
    const real = /prompt_tokens (\d+)/.exec(completed)?.[1];
    console.log(`(c) the first request of a session on llama-server (${path.basename(server.modelPath)}), Candor's system prompt, "hi" and its ${tools.specs().length} tools:`);
    console.log(`    Candor's estimate ${est?.[1] ?? '?'} (${est?.[2] ?? '?'})   the server's prompt_tokens ${real ?? '?'}${est && real ? `   (${(((Number(est[1]) - Number(real)) / Number(real)) * 100).toFixed(1)}%)` : ''}`);
  } finally {
    estimators.dispose();
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  console.log('request benchmark\n');
  await eventsAgainstCallbacks();
  await sendPath();
  await firstRequestOnLlama();
}
