// What a real llama-server cannot be made to do on demand, with small HTTP
// servers that answer exactly as documented: an error object in the middle
// of a stream, OpenRouter's `reasoning`, an overflow error without numbers,
// Ollama cutting a prompt silently, a server started after Candor; and the
// two windows named once when they differ.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ChatEvent, ChatSettings } from '../../../../src/core/chat/ports';
import { noTools } from '../../../../src/core/chat/tools';
import { DriftLog } from '../../../../src/core/context';
import { readJsonLines } from '../../../../src/core/jsonl';
import type { Logger } from '../../../../src/core/log';
import type { ChatModel } from '../../../../src/core/provider/chatModel';
import { OVERFLOW_SHAPES } from '../../../../src/core/provider/overflow';
import { SecretSet, REDACTED } from '../../../../src/core/redact';
import { Session } from '../../../../src/core/session/session';
import { resolveCandorSettings, type Inspected } from '../../../../src/core/settings/resolve';
import { chatSettingsOf } from '../../../../src/host/chat/chatSettings';
import { Providers } from '../../../../src/host/provider/provider';
import { closedPort, startStandIn, type StandIn } from '../provider/standIns';
import { modelAt } from '../provider/models';
import { chunk, startScriptedServer, type Script, type ScriptedServer } from '../provider/scriptedServer';
import { openChat } from './openChat';
import { appendQueue } from '../../../../src/core/jsonl';

const KEY = 'sk-test-4f9a2c7e1b3d5f6a8c0e';

describe('the chat against servers that do what a real llama-server cannot be made to do on demand', () => {
  let dir: string;
  const closers: Array<() => Promise<void>> = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-fakes-'));
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await appendQueue.flushed(); // the session's lines land before their folder goes
    fs.rmSync(dir, { recursive: true, force: true });
  });

  async function scripted(scripts: readonly Script[]): Promise<ScriptedServer> {
    const server = await startScriptedServer(scripts);
    closers.push(() => server.close());
    return server;
  }

  function open(model: () => Promise<ChatModel>, settings: () => ChatSettings, session = Session.create(path.join(dir, 'sessions'), 'demo')) {
    const lines: string[] = [];
    const log: Logger = { trace: () => undefined, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
    const events: ChatEvent[] = [];
    const secrets = new SecretSet();
    secrets.add(KEY, 'OPENAI_API_KEY');
    const chat = openChat(session, {
      driftLog: new DriftLog(path.join(dir, 'drift.jsonl')),
      summaryModel: { complete: async (messages, signal, options) => (await model()).complete(messages, signal, options) },
      identity: () => ({ provider: 'test', model: 'm' }),
      tokenizer: () => undefined,
      provider: model,
      settings,
      prompt: { systemPrompt: async () => ({ text: 'You are Candor.', prompt: 'You are Candor.' }) },
      tools: () => noTools,
      log,
      secrets,
    }, (e) => events.push(e));
    return { chat, log: lines, events, notices: () => chat.session.all().flatMap((r) => (r.type === 'notice' ? [r.text] : [])) };
  }
  const settings = (over: Partial<ChatSettings> = {}) => (): ChatSettings => ({ contextWindow: 100_000, thresholdPercent: 80, keepTurns: 1, maxOutputTokens: 4096, ...over });

  it('an error object in the middle of the stream ends the request with the server\'s own message, redacted, in the chat and the log', async () => {
    const message = `Failed to parse tool call arguments as JSON (request carried ${KEY})`;
    const server = await scripted([{ stream: [chunk({ role: 'assistant', content: 'Part of a ' }), chunk({ content: 'reply' }), { error: { code: 500, message, type: 'server_error' } }], done: false }]);
    const c = open(async () => modelAt(server.baseUrl, { apiKey: KEY, policy: { maxRetries: 2 } }), settings());
    await c.chat.send('hi');
    const said = c.notices().find((n) => n.startsWith('The provider reported an error in the middle of its reply'));
    assert.ok(said, c.notices().join('\n'));
    assert.ok(said.includes('Failed to parse tool call arguments as JSON') && said.includes(REDACTED) && !said.includes(KEY), said);
    assert.ok(c.log.some((l) => l.startsWith('request failed: stream-error') && l.includes('Failed to parse tool call arguments as JSON') && !l.includes(KEY)), c.log.join('\n'));
    assert.ok(c.chat.session.all().some((r) => r.type === 'partial' && r.text === 'Part of a reply'), 'what arrived is kept as an incomplete reply');
    assert.equal(server.bodies.length, 1, 'not retried: the server said why it stopped');
  });

  it('OpenRouter\'s `reasoning` deltas are thinking, kept apart from the answer', async () => {
    const server = await scripted([{ stream: [chunk({ role: 'assistant', reasoning: 'Weighing ' }), chunk({ reasoning: 'the options.' }), chunk({ content: 'The answer.' }), chunk({}, 'stop')] }]);
    const c = open(async () => modelAt(server.baseUrl), settings());
    await c.chat.send('hi');
    const reply = c.chat.session.all().find((r) => r.type === 'message' && r.message.role === 'assistant');
    assert.ok(reply?.type === 'message');
    assert.equal(reply.reasoning, 'Weighing the options.');
    assert.equal(reply.message.content, 'The answer.');
  });

  it('an overflow error without numbers (OpenAI\'s): compacted, and retried once because the projection now fits; recorded with null figures', async () => {
    const overflow = OVERFLOW_SHAPES.find((s) => s.name === 'openai')?.example.body;
    const summary = { id: 's', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'The user asked two long questions.' } }] };
    const server = await scripted([{ status: 400, body: overflow }, { status: 200, body: summary }, { stream: [chunk({ role: 'assistant', content: 'Fits now.' }), chunk({}, 'stop')] }]);
    const session = Session.create(path.join(dir, 'sessions'), 'demo');
    for (let i = 0; i < 2; i++) {
      session.addMessage(`t${i}`, { role: 'user', content: `question ${i} ${'q '.repeat(500)}` });
      session.addMessage(`t${i}`, { role: 'assistant', content: `answer ${i}` });
    }
    const c = open(async () => modelAt(server.baseUrl), settings(), session);
    await c.chat.send('and now?');
    const events = (readJsonLines(path.join(dir, 'drift.jsonl')).records as Array<Record<string, unknown>>).filter((e) => e.event === 'overflow');
    assert.deepEqual(events.map((e) => [e.event, e.parser, e.real, e.window, e.action]), [['overflow', 'openai', null, null, 'compacted-and-retried']]);
    assert.equal(server.bodies.length, 3, 'the refused request, the summary, and the one retry');
    assert.equal(c.chat.session.history().at(-1)?.content, 'Fits now.');
    assert.ok(c.notices().some((n) => n.includes('its error gives no numbers; Candor projected')), c.notices().join('\n'));
  });

  it('a second overflow after the retry stops: no third request, never a loop', async () => {
    const overflow = OVERFLOW_SHAPES.find((s) => s.name === 'vllm-input')?.example.body;
    const summary = { id: 's', object: 'chat.completion', created: 0, model: 'm', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'short' } }] };
    // The window it states (1,536) is what the projection is checked against: the retry is sent only because the server's count anchors it.
    const server = await scripted([{ status: 400, body: { error: { message: "This model's maximum context length is 100000 tokens. However, your request has 100500 input tokens.", type: 'BadRequestError', code: 400 } } }, { status: 200, body: summary }, { status: 400, body: overflow }]);
    const session = Session.create(path.join(dir, 'sessions'), 'demo');
    for (let i = 0; i < 2; i++) {
      session.addMessage(`t${i}`, { role: 'user', content: `question ${i} ${'q '.repeat(500)}` });
      session.addMessage(`t${i}`, { role: 'assistant', content: `answer ${i}` });
    }
    const c = open(async () => modelAt(server.baseUrl), settings(), session);
    await c.chat.send('and now?');
    const events = (readJsonLines(path.join(dir, 'drift.jsonl')).records as Array<Record<string, unknown>>).filter((e) => e.event === 'overflow');
    assert.deepEqual(events.map((e) => [e.parser, e.action]), [['vllm-input', 'compacted-and-retried'], ['vllm-input', 'stopped']]);
    assert.equal(server.bodies.length, 3);
    assert.ok(c.notices().some((n) => /already the one retry after compacting/.test(n)), c.notices().join('\n'));
  });

  it('when the user\'s window and the server\'s differ, the chat says which one counts, once', async () => {
    const server = await scripted([{ stream: [chunk({ role: 'assistant', content: 'ok' }), chunk({}, 'stop')] }]);
    const c = open(async () => modelAt(server.baseUrl), settings({ contextWindow: 2048, windowSource: 'server', serverWindow: 2048, windowSetting: 32768 }));
    await c.chat.send('one');
    await c.chat.send('two');
    const said = c.notices().filter((n) => n.includes('candor.contextWindow'));
    assert.deepEqual(said, ['The server runs a context window of 2,048 tokens, smaller than candor.contextWindow (32,768): Candor counts against 2,048.']);
    const gauge = c.events.filter((e) => e.type === 'gauge').at(-1);
    assert.ok(gauge?.type === 'gauge');
    assert.deepEqual(gauge.gauge.windowOther, { setting: 32768, server: 2048 }, 'the tooltip names both');
  });

  describe('through the host (Providers)', () => {
    function providersFor(user: Record<string, unknown>): { providers: Providers; settings: () => ReturnType<typeof resolveCandorSettings> } {
      const settings = () => resolveCandorSettings({ inspect: <T>(name: string) => ({ globalValue: user[name] }) as Inspected<T>, trusted: true, confirmedUrls: [] });
      const providers = new Providers(settings, async () => undefined, async (t) => Math.ceil(t.length / 4), { trace: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined });
      closers.push(async () => providers.dispose());
      return { providers, settings };
    }
    async function standIn(kind: Parameters<typeof startStandIn>[0], options: Parameters<typeof startStandIn>[1]): Promise<StandIn> {
      const s = await startStandIn(kind, options);
      closers.push(() => s.close());
      return s;
    }

    it('Ollama cutting a prompt to its window: its window is read again before the reply settles, and the notice names OLLAMA_CONTEXT_LENGTH and PARAMETER num_ctx', async () => {
      // Ollama loads the model on the first request and only then reports its context (2,048); it cut the prompt to that.
      const ollama = await standIn('ollama', { models: ['llama3.2'], window: 2048, promptTokens: 2048 });
      const { providers, settings } = providersFor({ baseUrl: ollama.baseUrl, model: 'llama3.2', localServers: [{ port: ollama.port, kind: 'ollama' }] });
      const c = open(() => providers.handle(), () => chatSettingsOf(providers, settings()));
      assert.equal(providers.contextWindow().tokens, 128000, 'not loaded: nothing reported yet');
      await c.chat.send(`a long question: ${'word '.repeat(3000)}`);
      const suspect = c.notices().find((n) => n.startsWith('The server reported 2,048 prompt tokens'));
      assert.ok(suspect, c.notices().join('\n'));
      assert.match(suspect, /exactly its context window/);
      assert.match(suspect, /OLLAMA_CONTEXT_LENGTH/);
      assert.match(suspect, /PARAMETER num_ctx/);
      const paths = ollama.seen.map((r) => `${r.method} ${r.path}`);
      assert.deepEqual(paths.slice(paths.indexOf('POST /v1/chat/completions')), ['POST /v1/chat/completions', 'GET /api/ps'], '/api/ps read again once the first request loaded the model');
      const loss = (readJsonLines(path.join(dir, 'drift.jsonl')).records as Array<Record<string, unknown>>).find((e) => e.event === 'anchor_loss');
      assert.equal(loss?.reason, 'suspect-usage');
    });

    it('a server started after Candor: the failed read is no answer, and the next request asks again', async () => {
      const port = await closedPort();
      const { providers } = providersFor({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'm', localServers: [{ port, kind: 'llamacpp' }] });
      await providers.handle();
      assert.equal(providers.contextWindow().tokens, 128000, 'nothing there yet');
      await standIn('llamacpp', { models: ['m'], window: 4096, port });
      await providers.handle();
      assert.deepEqual(providers.contextWindow(), { tokens: 4096, source: 'server', server: 4096 });
    });
  });
});
