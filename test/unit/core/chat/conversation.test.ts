import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario, type Scenario } from '../../../../src/core/offline/scenario';
import { modelAt } from '../provider/models';
import type { Conversation } from '../../../../src/core/chat/conversation';
import type { ChatEvent, ChatSettings } from '../../../../src/core/chat/ports';

import { parseArgs, type ToolHost } from '../../../../src/core/chat/tools';
import type { ToolSpec } from '../../../../src/core/messages';
import { gaugeTooltip, type GaugeState } from '../../../../src/core/context/gauge';
import { Session } from '../../../../src/core/session/session';
import { DriftLog } from '../../../../src/core/context';
import { silentLogger } from '../../../../src/core/log';
import { readJsonLines } from '../../../../src/core/jsonl';
import { transcriptOf } from '../../../helpers/core';
import { waitFor } from '../../../helpers/waitFor';
import { openChat } from './openChat';
import { appendQueue } from '../../../../src/core/jsonl';

const countTokens = (text: string): number => Math.ceil(text.length / 4);

const echoTool: ToolHost = {
  specs: () => [{ type: 'function', function: { name: 'list_files', description: 'list', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
  run: async (_name, args) => `files under ${String(parseArgs(args).path)}: a.txt b.txt`,
};

describe('the chat loop against a real HTTP provider', () => {
  let dir: string;
  let server: OfflineServer;
  let scenario: Scenario;
  let settings: ChatSettings;
  let events: ChatEvent[];
  let identity = { provider: 'offline', model: 'candor-offline' };

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-chat-'));
    server = await startOfflineServer({ scenario: () => scenario, countTokens });
    settings = { contextWindow: 100_000, thresholdPercent: 80, keepTurns: 2 };
    events = [];
    identity = { provider: 'offline', model: 'candor-offline' };
  });
  afterEach(async () => {
    await server.close();
    await appendQueue.flushed(); // the session's lines land before their folder goes
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function use(json: unknown): void {
    scenario = parseScenario(json);
    server.resetCounts();
  }

  function open(session = Session.create(path.join(dir, 'sessions'), 'demo'), tools: ToolHost = echoTool): Conversation {
    return openChat(session, {
      driftLog: new DriftLog(path.join(dir, 'drift.jsonl')),
      summaryModel: modelAt(server.baseUrl, { identity }),
      identity: () => identity,
      tokenizer: () => undefined,
      provider: async () => modelAt(server.baseUrl, { identity, policy: { idleTimeoutMs: 3000, maxRetries: 2 } }),
      settings: () => settings,
      prompt: { systemPrompt: async () => ({ text: 'You are Candor.', prompt: 'You are Candor.' }) },
      tools: () => tools,
      log: silentLogger,
    }, (e) => events.push(e));
  }

  const noticeTexts = () => events.flatMap((e) => (e.type === 'entry' && e.entry.kind === 'notice' ? [e.entry.text] : []));

  it('a message gets a streamed reply, saved in the session file', async () => {
    use({ rules: [{ respond: { text: 'Hello from the offline demo, streamed in pieces.' }, chunkChars: 5 }] });
    const chat = open();
    await chat.send('hi');
    const deltas = events.filter((e) => e.type === 'delta');
    assert.ok(deltas.length > 3, 'the reply arrives as deltas');
    const reopened = Session.open(chat.session.file);
    assert.deepEqual(reopened.history().map((m) => m.role), ['user', 'assistant']);
    assert.equal(transcriptOf(reopened).find((e) => e.kind === 'assistant')?.kind, 'assistant');
    const gauge = events.filter((e) => e.type === 'gauge').pop();
    assert.ok(gauge && gauge.type === 'gauge' && gauge.gauge.anchored, 'after a reply with usage the gauge is anchored');
  });

  it('a tool call runs, its result goes back to the model, and the turn ends with text', async () => {
    use({ rules: [{ match: { lastRole: 'tool' }, respond: { text: 'done: {{toolChars}} chars' } }, { respond: { toolCalls: [{ name: 'list_files', arguments: { path: 'src' } }] } }] });
    const chat = open();
    await chat.send('list files');
    assert.deepEqual(chat.session.history().map((m) => m.role), ['user', 'assistant', 'tool', 'assistant']);
    assert.equal(server.requests.length, 2, 'two requests in one turn');
    const result = events.find((e) => e.type === 'entry' && e.entry.kind === 'tool-result');
    assert.ok(result && result.type === 'entry' && result.entry.kind === 'tool-result' && result.entry.text.includes('files under src'));
  });

  it('HTTP 500: retries are shown, then an error with Retry; Retry succeeds once the provider recovers, without repeating the message', async () => {
    use({ rules: [{ respond: { error: { status: 500, message: 'boom' } }, times: 3 }, { respond: { text: 'recovered' } }] });
    const chat = open();
    await chat.send('hello');
    const notices = noticeTexts();
    assert.equal(notices.filter((t) => t.includes('Retrying')).length, 2, 'each retry is shown');
    assert.ok(notices.some((t) => t.includes('HTTP 500')));
    assert.ok(chat.session.retryableTurn(), 'the failed turn can be retried');
    await chat.retry();
    const history = chat.session.history();
    assert.deepEqual(history.map((m) => m.role), ['user', 'assistant']);
    assert.equal(history[1]?.content, 'recovered');
    assert.equal(readJsonLines(chat.session.file).skipped.length, 0, 'the session file stays valid');
  });

  it('a stream cut mid-reply keeps the partial reply and the user message; the anchor is unchanged', async () => {
    use({ rules: [{ respond: { text: 'first reply' }, times: 1 }, { respond: { text: 'x'.repeat(300) }, cutAfterChars: 40, chunkChars: 10 }] });
    const chat = open();
    await chat.send('one');
    const anchorBefore = JSON.stringify(chat.session.lastGateState());
    await chat.send('two');
    const transcript = transcriptOf(Session.open(chat.session.file));
    const partial = transcript.find((e) => e.kind === 'partial');
    assert.ok(partial && partial.kind === 'partial' && partial.text === 'x'.repeat(40));
    assert.deepEqual(chat.session.history().map((m) => m.role), ['user', 'assistant', 'user']);
    const after = chat.session.lastGateState() as { anchor?: unknown };
    assert.deepEqual((JSON.parse(anchorBefore) as { anchor?: unknown }).anchor, after.anchor, 'a cut request leaves the anchor as it was');
    assert.equal(new DriftLog(path.join(dir, 'drift.jsonl')).readDrift().events.length, 0, 'and opens no loss window');
  });

  it('Stop cancels the stream, keeps what arrived, and offers Retry', async () => {
    use({ rules: [{ respond: { text: 'y'.repeat(2000) }, chunkChars: 10, chunkDelayMs: 15 }] });
    const chat = open();
    const done = chat.send('long please');
    await waitFor('the reply to start', () => events.some((e) => e.type === 'delta'));
    assert.equal(chat.busy, true);
    chat.stop();
    await done;
    assert.equal(chat.busy, false);
    const transcript = transcriptOf(chat.session);
    const partial = transcript.find((e) => e.kind === 'partial');
    assert.ok(partial && partial.kind === 'partial' && partial.text.length > 0 && partial.text.length < 2000);
    assert.ok(transcript.some((e) => e.kind === 'notice' && e.text === 'Stopped.' && e.retryable));
  });

  it('usage stops: the reply without usage warns once as it ends and writes anchor_loss; usage back writes anchor_drift', async () => {
    use({ rules: [{ match: { user: 'quiet' }, usage: false, respond: { text: 'no numbers' } }, { respond: { text: 'with numbers' } }] });
    const chat = open();
    await chat.send('first');
    await chat.send('quiet please');
    assert.equal(noticeTexts().filter((t) => t.includes('did not report usage')).length, 1, 'the reply without usage warns, not the next request');
    const gauge = events.filter((e) => e.type === 'gauge').pop();
    assert.ok(gauge?.type === 'gauge' && gauge.gauge.warning, 'the gauge warns before the next message');
    await chat.send('quiet again');
    await chat.send('quiet a third time');
    assert.equal(noticeTexts().filter((t) => t.includes('did not report usage')).length, 1, 'a window warns once');
    await chat.send('talk normally');
    const drift = new DriftLog(path.join(dir, 'drift.jsonl')).readDrift();
    assert.deepEqual(drift.events.map((e) => e.event), ['anchor_loss', 'anchor_drift']);
    const last = events.filter((e) => e.type === 'gauge').pop();
    assert.ok(last?.type === 'gauge' && !last.gauge.warning && last.gauge.anchored, 'the warning ends when re-anchored');
  });

  it('past the threshold, older turns are compacted once before the request and the anchor is dropped', async () => {
    use({ rules: [{ match: { system: '^You compact a conversation' }, respond: { text: 'SUMMARY: earlier chat about numbers.' } }, { respond: { text: 'r'.repeat(400) } }] });
    settings = { ...settings, contextWindow: 2000, thresholdPercent: 50, keepTurns: 1 };
    const chat = open();
    for (let i = 0; i < 8; i++) await chat.send(`message ${i} ${'z'.repeat(200)}`);
    const compactions = chat.session.all().filter((r) => r.type === 'compaction');
    assert.ok(compactions.length >= 1, 'a compaction happened');
    const history = chat.session.history();
    assert.match(String(history[0]?.content), /SUMMARY/);
    assert.ok(history.length < 16, 'older turns were replaced');
    const said = events.flatMap((e) => (e.type === 'entry' && /Compacted \d+ earlier messages/.test('text' in e.entry ? e.entry.text : '') ? [e.entry.kind] : []));
    assert.deepEqual(said, compactions.map(() => 'summary'), 'each compaction is said once, by its own entry');
  });

  it('a reload restores the history and the anchor from the session file', async () => {
    use({ rules: [{ respond: { text: 'kept' } }] });
    const chat = open();
    await chat.send('remember me');
    const reopened = open(Session.open(chat.session.file));
    events = [];
    await reopened.publishGauge();
    const gauge = events.find((e) => e.type === 'gauge');
    assert.ok(gauge?.type === 'gauge' && gauge.gauge.anchored, 'the anchor survives the reload');
    assert.deepEqual(transcriptOf(reopened.session).map((e) => e.kind), ['user', 'assistant']);
  });

  it('the gauge says what the tool definitions take and which MCP server brings how much, and warns once when they crowd the window', async () => {
    const big = (name: string): ToolSpec => ({ type: 'function', function: { name, description: 'x'.repeat(4000), parameters: { type: 'object', properties: {} } } });
    const specs = [...echoTool.specs(), big('mcp_docs_search'), big('mcp_docs_fetch')];
    const withServer: ToolHost = { specs: () => specs, groups: () => new Map([['docs', ['mcp_docs_search', 'mcp_docs_fetch']]]), run: echoTool.run };
    use({ rules: [{ respond: { text: 'ok' } }] });
    settings = { ...settings, contextWindow: 4_000 };
    const chat = open(undefined, withServer);
    await chat.send('hi');
    await chat.send('again');
    const gauge = events.flatMap((e) => (e.type === 'gauge' ? [e.gauge] : [])).at(-1);
    assert.equal(gauge?.tools?.count, 3);
    assert.equal(gauge?.tools?.servers[0]?.name, 'docs');
    assert.ok((gauge?.tools?.servers[0]?.tokens ?? 0) > 1500, `docs brings most of it: ${JSON.stringify(gauge?.tools)}`);
    assert.ok((gauge?.tools?.tokens ?? 0) > (gauge?.tools?.servers[0]?.tokens ?? 0), 'the built-in tool counts too');
    assert.match(gaugeTooltip(gauge as GaugeState), /^Tools: 3, [\d.]+K tokens; 'docs' [\d.]+K$/m);
    const crowd = noticeTexts().filter((t) => /tool definitions alone take/.test(t));
    assert.equal(crowd.length, 1, 'said once, not at every request');
    assert.match(crowd[0] ?? '', /'docs' brings/);
  });
});
