// The context gate as production runs it: through the Conversation, against
// the offline provider over real HTTP, with the session and drift files on disk.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario, type Scenario } from '../../../../src/core/offline/scenario';
import { modelAt } from '../provider/models';
import type { Conversation } from '../../../../src/core/chat/conversation';
import type { ChatEvent, ChatSettings, RequestTrace } from '../../../../src/core/chat/ports';
import type { ToolHost } from '../../../../src/core/chat/tools';
import { Session } from '../../../../src/core/session/session';
import { DriftLog, type DriftRecord } from '../../../../src/core/context';
import type { GaugeState } from '../../../../src/core/context/gauge';
import { silentLogger } from '../../../../src/core/log';

import type { ChatMessage } from '../../../../src/core/messages';

import { WorkerTokenizer } from '../../../../src/core/context/tokenizer/workerTokenizer';
import type { TokenCounter } from '../../../../src/core/context/estimator';
import { o200kTokenizer } from '../../../../bench/mixedSession';
import { installedTokenizerModules } from '../../../helpers/installedModules';
import { MemoryLogger, measureMessage } from '../../../helpers/core';
import { openChat } from './openChat';

const bigTool: ToolHost = {
  specs: () => [{ type: 'function', function: { name: 'read_big', description: 'read', parameters: { type: 'object', properties: {} } } }],
  run: async () => 'x '.repeat(1200),
};

describe('the context gate on the production path (Conversation, offline provider over HTTP)', function () {
  this.timeout(60_000);
  let dir: string;
  let server: OfflineServer;
  let scenario: Scenario;
  let settings: ChatSettings;
  let events: ChatEvent[];
  let traces: RequestTrace[];
  let system: string;
  const identity = { provider: 'offline', model: 'candor-offline' };
  /**
   * The estimator's counts, the same as the server's: these tests are about
   * the gate's decisions, not the estimator's error (the calibrated-heuristic
   * test below sets none).
   */
  let counter: TokenCounter | undefined;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-gate-path-'));
    server = await startOfflineServer({ scenario: () => scenario, countTokens: (text) => Math.ceil(text.length / 4) });
    settings = { contextWindow: 6000, thresholdPercent: 50, keepTurns: 1 };
    counter = { name: 'chars/4', count: async (texts) => texts.map((text) => Math.ceil(text.length / 4)) };
    events = [];
    traces = [];
    system = 'You are Candor.';
  });
  afterEach(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function use(json: unknown): void {
    scenario = parseScenario(json);
    server.resetCounts();
  }

  function open(session = Session.create(path.join(dir, 'sessions'), 'demo'), tools: ToolHost = bigTool): Conversation {
    return openChat(session, {
      driftLog: new DriftLog(path.join(dir, 'drift.jsonl')),
      summaryModel: modelAt(server.baseUrl, { identity }),
      identity: () => identity,
      tokenizer: () => counter,
      provider: async () => modelAt(server.baseUrl, { identity, policy: { idleTimeoutMs: 5000, maxRetries: 0 } }),
      settings: () => settings,
      prompt: { systemPrompt: async () => ({ text: system, prompt: system }) },
      tools: () => tools,
      log: silentLogger,
      trace: (t) => traces.push(t),
    }, (e) => events.push(e));
  }

  const notices = (): string[] => events.flatMap((e) => (e.type === 'entry' && e.entry.kind === 'notice' ? [e.entry.text] : []));
  const drift = (): DriftRecord[] => new DriftLog(path.join(dir, 'drift.jsonl')).readDrift().events;
  const summaries = (): number => server.requests.filter((r) => r.system.startsWith('You compact')).length;
  const gauges = (): GaugeState[] => events.flatMap((e) => (e.type === 'gauge' ? [e.gauge] : []));

  it('one turn of tool rounds over the threshold: exactly one summary, one warning, and a provider silent after it is still caught', async () => {
    const call = { toolCalls: [{ name: 'read_big', arguments: {} }] };
    use({
      rules: [
        { match: { system: '^You compact' }, respond: { text: 'SUMMARY of the earlier turns.' } },
        { match: { user: '^work', lastRole: 'user' }, respond: call },
        { match: { user: '^work', lastRole: 'tool' }, respond: call, times: 2 },
        // From the fourth request of the turn on, the provider reports no usage.
        { match: { user: '^work', lastRole: 'tool' }, respond: call, usage: false, times: 4 },
        { match: { user: '^work', lastRole: 'tool' }, respond: { text: 'done' }, usage: false },
        { respond: { text: 'ok '.repeat(130) } },
      ],
    });
    const chat = open();
    for (let i = 0; i < 3; i++) await chat.send(`question ${i} ${'lorem '.repeat(266)}`);
    assert.equal(summaries(), 0, 'the earlier turns stay under the threshold');
    await chat.send('work on it');

    const turnRequests = server.requests.filter((r) => r.lastUser.startsWith('work') && !r.system.startsWith('You compact'));
    assert.equal(turnRequests.length, 8, 'seven tool rounds and the final reply');
    assert.equal(summaries(), 1, 'one compaction per growth, never one per request');
    assert.equal(chat.session.all().filter((r) => r.type === 'compaction').length, 1);
    const over = notices().filter((t) => /above the compaction threshold/.test(t));
    assert.equal(over.length, 1, 'one warning for the turn');
    assert.equal(notices().filter((t) => t.includes('did not report usage')).length, 1, 'the silence after the compaction warns');
    const losses = drift().filter((e) => e.event === 'anchor_loss');
    assert.deepEqual(losses.map((e) => e.event === 'anchor_loss' && e.reason), ['no-usage']);
  });

  it('a request over the whole window even after compacting is not sent; Retry sends it once the user has lowered keepTurns and compacted', async () => {
    use({
      rules: [
        { match: { system: '^You compact' }, respond: { text: 'SUMMARY.' } },
        { respond: { text: 'fine' } },
      ],
    });
    settings = { contextWindow: 3000, thresholdPercent: 80, keepTurns: 2 };
    const chat = open();
    await chat.send(`first ${'lorem '.repeat(100)}`);
    await chat.send(`second ${'lorem '.repeat(1100)}`); // two turns kept: ~1.8K, over 80%
    await chat.send(`third ${'lorem '.repeat(1100)}`); // the two kept turns alone are ~3.4K
    const refused = notices().filter((t) => t.startsWith('Not sent'));
    assert.equal(refused.length, 1);
    assert.match(refused[0] ?? '', /new session.*keepTurns.*Compact Context.*Retry/s);
    const sent = (): number => server.requests.filter((r) => r.lastUser.startsWith('third') && !r.system.startsWith('You compact')).length;
    assert.equal(sent(), 0, 'the request itself never went out');
    assert.ok(chat.session.all().some((r) => r.type === 'notice' && r.retryable && r.text.startsWith('Not sent')));

    settings = { ...settings, keepTurns: 1 };
    await chat.compactNow();
    await chat.retry();
    assert.equal(sent(), 1, 'Retry sent the turn');
    assert.equal(chat.session.history().at(-1)?.content, 'fine');
  });

  const WORDS = 'the config server request token context window anchor provider model session estimate history function return value error stream usage prompt summary message tool result file path change'.split(' ');
  const prose = (words: number, seed: number): string => Array.from({ length: words }, (_, i) => WORDS[(i * 7 + seed * 13 + ((i * i) % 11)) % WORDS.length]).join(' ');

  it('a condensed memory between two requests: the projection subtracts what was removed and stays within 2% of the provider; removing more than half drops the anchor', async () => {
    use({ rules: [{ respond: { text: `Answer. ${prose(50, 1)}` }, chunkChars: 400 }] });
    await server.close();
    // A real provider's count (o200k), which the calibrated heuristic has to learn: no tokenizer is known to the estimator.
    counter = undefined;
    const o200k = o200kTokenizer();
    server = await startOfflineServer({ scenario: () => scenario, countTokens: (text) => o200k.encode(text, [], []).length });
    system = `You are Candor.\n# Memory\n${prose(1400, 2)}`;
    const chat = open(undefined, { specs: () => [], run: async () => '' });
    for (let i = 0; i < 6; i++) await chat.send(`question ${i}: ${prose(60 + i * 5, i + 3)}`);

    system = `You are Candor.\n# Memory\n${prose(1100, 2)}`; // the memory was condensed
    await chat.send('and now?');
    const atSend = gauges().at(-2);
    const real = traces.at(-1)?.promptTokens ?? 0;
    assert.ok(atSend?.anchored && atSend.change?.kind === 'shrunk', 'anchored, and the tooltip can say why it shrank');
    assert.deepEqual(atSend.change?.parts, ['system']);
    assert.equal(atSend.estimator?.kind, 'calibrated heuristic');
    const error = Math.abs(atSend.projected - real) / real;
    assert.ok(error < 0.02, `projection ${atSend.projected} against the provider's ${real}: ${(error * 100).toFixed(2)}%`);
    // The trap: the bare estimate the gate used to fall back to when the estimate shrank.
    const payload: ChatMessage[] = [{ role: 'system', content: system }, ...chat.session.history().slice(0, -1)];
    const bare = payload.reduce((n, m) => n + measureMessage(m).heuristic, 0);
    assert.ok(Math.abs(bare - real) / real > 0.05, `the bare heuristic is ${((Math.abs(bare - real) / real) * 100).toFixed(1)}% off`);

    system = 'You are Candor.\n# Memory\nshort.';
    await chat.send('after a big condense');
    const dropped = gauges().at(-2);
    assert.equal(dropped?.anchored, false);
    assert.equal(dropped?.change?.kind, 'dropped');
    assert.equal(dropped?.unanchoredBecause, 'after-shrink');
    assert.equal(notices().filter((t) => t.includes('did not report usage')).length, 0, 'a legitimate drop is not a loss');
    assert.equal(gauges().at(-1)?.anchored, true, 're-anchored by the next count');
  });

  it('a provider silent for 9 requests: the drift line carries the estimates of the 10 requests of the window and their maximum; the session file keeps only the two numbers', async () => {
    use({ rules: [{ match: { user: '^quiet' }, usage: false, respond: { text: 'no numbers' } }, { respond: { text: 'with numbers' } }] });
    const chat = open(undefined, { specs: () => [], run: async () => '' });
    await chat.send('hello');
    for (let i = 0; i < 9; i++) await chat.send(`quiet ${i} ${prose(20 * (i + 1), i)}`);
    await chat.send('talk normally');
    const closing = drift().find((e) => e.event === 'anchor_drift');
    assert.ok(closing?.event === 'anchor_drift');
    assert.equal(closing.window_requests, 10, 'the nine silent requests, the first among them, and the one that measured');
    assert.equal(closing.window_ests?.length, 10);
    assert.equal(closing.window_max_est, Math.max(...(closing.window_ests ?? [])));
    const loss = drift().find((e) => e.event === 'anchor_loss');
    assert.equal(loss?.event === 'anchor_loss' && loss.window, closing.window);
    const file = fs.readFileSync(chat.session.file, 'utf8');
    assert.ok(!file.includes('window_ests') && !file.includes((closing.window_ests ?? []).slice(2, 5).join(',')), 'the session file holds no list of estimates');
  });

  it('disposed with a window open: anchor_loss_open is written, and the reopened session closes that window without counting it twice', async () => {
    use({ rules: [{ match: { user: '^quiet' }, usage: false, respond: { text: 'no numbers' } }, { respond: { text: 'with numbers' } }] });
    const first = open();
    await first.send('hello');
    await first.send('quiet one');
    await first.send('quiet two'); // the window opened and warned with 'quiet one'
    first.dispose();
    await first.session.flushed();
    const open1 = drift().filter((e) => e.event === 'anchor_loss_open');
    assert.equal(open1.length, 1);
    assert.equal(new DriftLog(path.join(dir, 'drift.jsonl')).readDrift().totals.windows, 1);

    const second = open(Session.open(first.session.file));
    await second.send('quiet three');
    await second.send('talk normally');
    const read = new DriftLog(path.join(dir, 'drift.jsonl')).readDrift();
    assert.deepEqual(read.totals, { windows: 1, warned: 1, drifts: 1, abs_delta_sum: read.totals.abs_delta_sum });
    assert.equal(notices().filter((t) => t.includes('did not report usage')).length, 1, 'warned once, across the restart');
    const closing = read.events.find((e) => e.event === 'anchor_drift');
    assert.equal(closing?.event === 'anchor_drift' && closing.window_requests, 4, 'quiet one, two and three, and the one that measured');
  });

  it('a server that never reports usage in streams: one window, one plain notice, never one per request', async () => {
    use({ rules: [{ rejectStreamOptions: true, usage: false, respond: { text: 'no usage, ever' } }] });
    const chat = open(undefined, { specs: () => [], run: async () => '' });
    for (let i = 0; i < 6; i++) await chat.send(`message ${i}`);
    const said = notices().filter((t) => t.includes('never reports usage'));
    assert.equal(said.length, 1);
    assert.equal(notices().filter((t) => t.includes('did not report usage')).length, 0);
    assert.deepEqual(drift().map((e) => e.event === 'anchor_loss' && e.reason), ['no-usage']);
    assert.equal(gauges().at(-1)?.warningKind, 'usage-unsupported');
  });

  it('a prompt_tokens far below the estimate is not an anchor: the chat says once that the server may have truncated the prompt', async () => {
    use({ rules: [{ match: { user: '^long' }, promptTokens: 40, respond: { text: 'truncated' } }, { respond: { text: 'fine' } }] });
    const chat = open(undefined, { specs: () => [], run: async () => '' });
    await chat.send('hello');
    await chat.send(`long ${prose(600, 1)}`);
    await chat.send(`long again ${prose(600, 2)}`);
    const said = notices().filter((t) => t.includes('truncated or under-counted'));
    assert.equal(said.length, 1);
    assert.deepEqual(drift().map((e) => e.event === 'anchor_loss' && e.reason), ['suspect-usage']);
    assert.equal(gauges().at(-1)?.anchored, false);
    await chat.send('short');
    assert.deepEqual(drift().map((e) => e.event), ['anchor_loss', 'anchor_drift']);
  });

  // How long the send path takes is measured in bench/gate.bench.ts, not asserted here.
  it('a reloaded 10,000-message session: the first request goes out at once, the heuristic standing in for the counts not ready yet, and its log line gives the send path', async () => {
    use({ rules: [{ respond: { text: 'answered' } }] });
    const gpt = { provider: 'offline', model: 'gpt-4o' };
    const file = path.join(dir, 'long.jsonl');
    const lines = [JSON.stringify({ v: 1, ts: new Date().toISOString(), type: 'meta', id: 'long' })];
    for (let i = 0; i < 10_000; i++) {
      const message = { role: i % 2 ? 'assistant' : 'user', content: `message ${i}: ${prose(8 + (i % 5), i)}` };
      lines.push(JSON.stringify({ v: 1, ts: new Date().toISOString(), type: 'message', id: `m${i}`, turn: `t${i >> 1}`, message }));
    }
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const worker = new WorkerTokenizer('o200k_base', installedTokenizerModules());
    try {
      const log = new MemoryLogger();
      // As the host's Providers do: one client while base URL, key and model are unchanged.
      const model = modelAt(server.baseUrl, { identity: gpt, policy: { idleTimeoutMs: 20_000, maxRetries: 0 } });
      const session = Session.open(file);
      const chat = openChat(session, {
        driftLog: new DriftLog(path.join(dir, 'drift.jsonl')),
        summaryModel: modelAt(server.baseUrl, { identity: gpt }),
        identity: () => gpt,
        tokenizer: () => worker,
        provider: async () => model,
        settings: () => ({ contextWindow: 1_000_000, thresholdPercent: 80, keepTurns: 4 }),
        prompt: { systemPrompt: async () => ({ text: system, prompt: system }) },
        tools: () => ({ specs: () => [], run: async () => '' }),
        log,
      }, (e) => events.push(e));
      // As the chat controller does when the view asks for the session: the gauge, before any send.
      await chat.publishGauge();
      await chat.send('one more question');
      const line = log.lines.find((l) => l.includes('send path'));
      const sendPath = Number(/send path ([\d.]+) ms/.exec(line ?? '')?.[1]);
      const atSend = gauges().at(-2);
      assert.ok((atSend?.estimator?.pending ?? 0) > 0, 'exact counts were still on their way: the heuristic stood in');
      assert.equal(atSend?.estimator?.kind, 'tokenizer');
      assert.ok(Number.isFinite(sendPath) && sendPath >= 0, line);
      assert.equal(chat.session.history().at(-1)?.content, 'answered');
    } finally {
      worker.dispose();
    }
  });
});
