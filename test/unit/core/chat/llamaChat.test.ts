// The chat loop against a real llama.cpp llama-server, wired as the extension
// wires it (the host's Providers, its chat settings): thinking kept and
// shown again after a reload, a real overflow compacted and retried once, a
// real cut whose calls are never run nor sent back as they came, a session
// of an older version repaired when loaded, and a summary the limit cut.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Conversation } from '../../../../src/core/chat/conversation';
import type { ChatEvent } from '../../../../src/core/chat/ports';
import type { ToolHost } from '../../../../src/core/chat/tools';
import { noTools } from '../../../../src/core/chat/tools';
import { DriftLog } from '../../../../src/core/context';
import { gaugeTooltip } from '../../../../src/core/context/gauge';
import { readJsonLines } from '../../../../src/core/jsonl';
import type { Logger } from '../../../../src/core/log';
import { CUT_CALL_RESULT, type ChatMessage, type ToolSpec } from '../../../../src/core/messages';
import type { CompleteOptions } from '../../../../src/core/provider/chatModel';
import { Session } from '../../../../src/core/session/session';
import { resolveCandorSettings, type Inspected } from '../../../../src/core/settings/resolve';
import { chatSettingsOf } from '../../../../src/host/chat/chatSettings';
import { Providers } from '../../../../src/host/provider/provider';
import { transcriptOf } from '../../../helpers/core';
import { llamaOrSkip, startLlama, type LlamaFound, type LlamaServer } from '../../../helpers/llamaServer';
import { openChat } from './openChat';
import { appendQueue } from '../../../../src/core/jsonl';

const listFilesSpec: ToolSpec = { type: 'function', function: { name: 'list_files', description: 'List the files under a folder.', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };

/** list_files, counting its runs. */
function listFiles(): ToolHost & { runs: string[] } {
  const runs: string[] = [];
  return { runs, specs: () => [listFilesSpec], run: async (_name, args) => (runs.push(args), 'README.md\nsrc/') };
}

interface Chat {
  readonly chat: Conversation;
  readonly providers: Providers;
  readonly events: ChatEvent[];
  readonly log: string[];
  readonly drift: string;
  readonly summaries: CompleteOptions[];
  readonly user: Record<string, unknown>;
  notices(): string[];
  requests(): number;
}

describe('the chat loop against a real llama-server', function () {
  this.timeout(180_000);
  let found: LlamaFound;
  let dir: string;
  const servers = new Map<string, Promise<LlamaServer>>();
  before(function () {
    found = llamaOrSkip(this);
  });
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-llama-chat-'));
  });
  afterEach(async () => {
    await appendQueue.flushed(); // the session's lines land before their folder goes
    fs.rmSync(dir, { recursive: true, force: true });
  });
  after(async () => {
    await Promise.all([...servers.values()].map(async (s) => (await s).stop()));
  });
  function serve(options: Parameters<typeof startLlama>[1]): Promise<LlamaServer> {
    const key = JSON.stringify(options);
    let server = servers.get(key);
    if (!server) servers.set(key, (server = startLlama(found, options)));
    return server;
  }

  /** A conversation as the chat controller builds it, on `server`; `listed`: the port is in candor.localServers as llama.cpp. */
  function open(server: LlamaServer, options: { listed?: boolean; user?: Record<string, unknown>; tools?: ToolHost; session?: Session } = {}): Chat {
    const user: Record<string, unknown> = {
      baseUrl: server.baseUrl, model: server.modelPath, 'request.maxRetries': 0, 'compaction.keepTurns': 1,
      localServers: options.listed === false ? [] : [{ port: server.port, kind: 'llamacpp' }],
      ...options.user,
    };
    const settings = () => resolveCandorSettings({ inspect: <T>(name: string) => ({ globalValue: user[name] }) as Inspected<T>, trusted: true, confirmedUrls: [] });
    const lines: string[] = [];
    const log: Logger = { trace: () => undefined, info: (m) => lines.push(m), warn: (m) => lines.push(m), error: (m) => lines.push(m) };
    const providers = new Providers(settings, async () => undefined, async (t) => Math.ceil(t.length / 4), log);
    const events: ChatEvent[] = [];
    const summaries: CompleteOptions[] = [];
    const drift = path.join(dir, 'drift.jsonl');
    const session = options.session ?? Session.create(path.join(dir, 'sessions'), 'demo');
    const chat = openChat(session, {
      driftLog: new DriftLog(drift),
      summaryModel: { complete: (messages, signal, o) => (summaries.push(o ?? {}), providers.complete(messages, signal, o)) },
      identity: () => providers.identity(),
      tokenizer: () => undefined,
      provider: () => providers.handle(),
      settings: () => chatSettingsOf(providers, settings()),
      prompt: { systemPrompt: async () => ({ text: 'You are Candor.', prompt: 'You are Candor.' }) },
      tools: () => options.tools ?? noTools,
      log,
      onOverflow: (identity, overflow) => providers.noteOverflow(identity, overflow),
    }, (e) => events.push(e));
    return {
      chat, providers, events, log: lines, drift, summaries, user,
      notices: () => chat.session.all().flatMap((r) => (r.type === 'notice' ? [r.text] : [])),
      requests: () => lines.filter((l) => l.startsWith('request: ')).length,
    };
  }

  it('thinking streams apart from the answer, is kept in the session, shown again after a reload, and not sent back (this template does not keep it)', async () => {
    const server = await serve({ ctx: 8192, model: 'toolcall' });
    const tools = listFiles();
    const c = open(server, { tools });
    await c.chat.send('What files are in this project?');
    assert.deepEqual(tools.runs, ['{}'], 'the real tool call ran once');
    const reply = c.chat.session.all().filter((r) => r.type === 'message' && r.message.role === 'assistant').at(-1);
    assert.ok(reply?.type === 'message');
    assert.equal(reply.reasoning, 'The files are listed');
    assert.equal(reply.message.content, 'Done.');
    assert.equal((reply.message as { reasoning_content?: string }).reasoning_content, undefined, 'not in what is sent (and counted) again');
    assert.ok(c.events.some((e) => e.type === 'delta' && e.part === 'reasoning'), 'the thinking streamed live');
    assert.ok(c.events.some((e) => e.type === 'busy' && /^processing the prompt: \d+%$/.test(e.status ?? '')), 'llama.cpp was asked for its progress, and it was shown');
    const shown = transcriptOf(Session.open(c.chat.session.file)).filter((e) => e.kind === 'assistant').at(-1);
    assert.deepEqual(shown, { id: reply.id, kind: 'assistant', text: 'Done.', reasoning: 'The files are listed' });
    const gauge = c.events.filter((e) => e.type === 'gauge').at(-1);
    assert.ok(gauge?.type === 'gauge' && gauge.gauge.window === 8192 && gauge.gauge.windowSource === 'server', 'the window read from /props');
  });

  it('candor.contextWindow larger than the window the server runs: the smaller counts, and the chat and the tooltip say both', async () => {
    const server = await serve({ ctx: 2048, model: 'toolcall' });
    const c = open(server, { user: { contextWindow: 32768 } });
    await c.chat.send('hi');
    await c.chat.send('again');
    assert.deepEqual(c.notices().filter((n) => n.includes('candor.contextWindow')), ['The server runs a context window of 2,048 tokens, smaller than candor.contextWindow (32,768): Candor counts against 2,048.']);
    const gauge = c.events.filter((e) => e.type === 'gauge').at(-1);
    assert.ok(gauge?.type === 'gauge');
    assert.equal(gauge.gauge.window, 2048);
    assert.match(gaugeTooltip(gauge.gauge), /^Window: 2,048 tokens, as the server reports it runs \(smaller than candor\.contextWindow, 32,768\)$/m);
  });

  it('a real overflow: the server\'s count and window are recorded, the history compacted once, the request sent once more, and the window taken', async () => {
    const server = await serve({ ctx: 2048, model: 'toolcall' });
    // Not a listed local server: nothing tells Candor the window before the server refuses.
    const c = open(server, { listed: false });
    for (let i = 0; i < 2; i++) {
      c.chat.session.addMessage(`old${i}`, { role: 'user', content: `older question ${i}: ${'word '.repeat(400)}` });
      c.chat.session.addMessage(`old${i}`, { role: 'assistant', content: `older answer ${i}.` });
    }
    await c.chat.send(`and now: ${'word '.repeat(1300)}`);
    const [overflow, ...more] = readJsonLines(c.drift).records.filter((r) => (r as { event?: string }).event === 'overflow') as Array<Record<string, unknown>>;
    assert.equal(more.length, 0, 'one overflow');
    assert.equal(overflow?.parser, 'llama.cpp');
    assert.equal(overflow?.window, 2048);
    assert.ok(typeof overflow?.real === 'number' && overflow.real > 2048, JSON.stringify(overflow));
    assert.ok(typeof overflow?.projected === 'number' && typeof overflow.est === 'number');
    assert.equal(overflow?.action, 'compacted-and-retried');
    assert.equal(c.requests(), 2, 'the refused request and its one retry');
    assert.ok(c.chat.session.all().some((r) => r.type === 'compaction'), 'compacted once');
    assert.equal(c.chat.session.all().filter((r) => r.type === 'compaction').length, 1);
    assert.equal(c.chat.session.history().at(-1)?.role, 'assistant', 'the retry was answered');
    assert.ok(c.notices().some((n) => n.includes(`it counted ${(overflow.real as number).toLocaleString('en-US')} prompt tokens against its 2,048-token window (llama.cpp)`)), c.notices().join('\n'));
    assert.equal(c.providers.contextWindow().tokens, 2048, 'the window the server stated is the window from now on');
  });

  it('an overflow that compaction cannot fix stops with the numbers, sends nothing more, and never loops', async () => {
    const server = await serve({ ctx: 2048, model: 'toolcall' });
    const c = open(server, { listed: false });
    await c.chat.send(`one huge message: ${'word '.repeat(2500)}`);
    const overflow = readJsonLines(c.drift).records.find((r) => (r as { event?: string }).event === 'overflow') as Record<string, unknown> | undefined;
    assert.equal(overflow?.action, 'stopped');
    assert.equal(c.requests(), 1, 'never sent again');
    const stop = c.notices().find((n) => n.startsWith('The provider refused the request as too large'));
    assert.match(stop ?? '', /against its 2,048-token window.*nothing older than the newest turn to summarize/s);
    await c.chat.retry();
    assert.equal(c.requests(), 1, 'Retry finds the window the server stated: the send gate refuses before the server must');
  });

  for (const maxTokens of [10, 12]) {
    it(`a reply cut at max_tokens ${maxTokens}: its call is not run, the history keeps it in a shape the server takes back, and the chat says why`, async () => {
      const server = await serve({ ctx: 8192, model: 'toolcall' });
      const tools = listFiles();
      const c = open(server, { tools, user: { maxOutputTokens: maxTokens } });
      await c.chat.send('What files are in this project?');
      assert.deepEqual(tools.runs, [], 'no call of a cut reply runs, whether or not its arguments parse');
      const reply = c.chat.session.all().find((r) => r.type === 'message' && r.message.role === 'assistant');
      assert.ok(reply?.type === 'message' && reply.message.role === 'assistant');
      assert.equal(reply.cut, `Cut at the output limit: ${maxTokens} tokens (candor.maxOutputTokens). Raise the setting for longer replies. Its tool call was not run.`);
      const asCame = reply.cutCalls?.[0]?.arguments ?? '';
      assert.equal(asCame, maxTokens === 10 ? '{' : '{}', 'what the server sent');
      assert.deepEqual(reply.message.tool_calls?.map((t) => t.function.arguments), ['{}']);
      assert.equal(c.chat.session.history().at(-1)?.content, CUT_CALL_RESULT);
      const transcript = transcriptOf(c.chat.session);
      assert.ok(transcript.some((e) => e.kind === 'tool-call' && e.cut === true && e.args === asCame), 'the view shows the call as it came, marked cut');
      assert.ok(transcript.some((e) => e.kind === 'notice' && e.text === reply.cut), 'shown on the reply');

      if (maxTokens === 10) {
        // The trap: the call sent back as it came poisons the session.
        const raw: ChatMessage[] = c.chat.session.history().map((m) => (m.role === 'assistant' && m.tool_calls ? { ...m, tool_calls: m.tool_calls.map((t) => ({ ...t, function: { ...t.function, arguments: asCame } })) } : m));
        const refused = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: raw, tools: [listFilesSpec] }) });
        assert.equal(refused.status, 500);
        assert.match(await refused.text(), /Failed to parse tool call arguments as JSON/);
      }
      c.user.maxOutputTokens = 256;
      await c.chat.send('Go on.');
      assert.equal(c.chat.session.history().at(-1)?.role, 'assistant', 'the next request of the session is answered');
      assert.ok(!c.notices().some((n) => /HTTP 500/.test(n)), c.notices().join('\n'));
    });
  }

  it('a session of an older version holding a malformed call is repaired when loaded, and the server takes it', async () => {
    const server = await serve({ ctx: 8192, model: 'toolcall' });
    const file = path.join(dir, 'sessions', 'old.jsonl');
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const ts = new Date().toISOString();
    const lines = [
      { v: 1, ts, type: 'meta', id: 'old' },
      { v: 1, ts, type: 'message', id: 'm1', turn: 't1', message: { role: 'user', content: 'What files are in this project?' } },
      { v: 1, ts, type: 'message', id: 'm2', turn: 't1', message: { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'list_files', arguments: '{' } }] } },
      { v: 1, ts, type: 'message', id: 'm3', turn: 't1', message: { role: 'tool', tool_call_id: 'call_1', content: 'Error: the arguments are not a JSON object' } },
    ];
    fs.writeFileSync(file, `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`);
    const raw = lines.slice(1).map((l) => (l as { message: ChatMessage }).message);
    const refused = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: [...raw, { role: 'user', content: 'again' }], tools: [listFilesSpec] }) });
    assert.equal(refused.status, 500, 'the trap: as the file holds it, every later request of the session fails');
    const c = open(server, { session: await Session.load(file), tools: listFiles() });
    await c.chat.send('again');
    assert.ok(!c.notices().some((n) => /HTTP 500/.test(n)), c.notices().join('\n'));
    assert.equal(c.chat.session.history().at(-1)?.role, 'assistant');
  });

  it('a summary cut at its max_tokens is refused: the history stays as it was, and the chat says why', async () => {
    // The random model never stops early: every summary runs into its limit.
    const server = await serve({ ctx: 4096 });
    const c = open(server, { user: { 'compaction.thresholdPercent': 10, maxOutputTokens: 8 } });
    for (let i = 0; i < 2; i++) {
      c.chat.session.addMessage(`old${i}`, { role: 'user', content: `older question ${i}: ${'word '.repeat(300)}` });
      c.chat.session.addMessage(`old${i}`, { role: 'assistant', content: `older answer ${i}.` });
    }
    const before = c.chat.session.history().length;
    await c.chat.send('and now?');
    assert.equal(c.summaries.length, 1);
    assert.deepEqual(c.summaries[0], { maxTokens: 1024, whole: true }, 'max_tokens sized to the 4,096-token window (a quarter of it)');
    assert.ok(!c.chat.session.all().some((r) => r.type === 'compaction'), 'no summary replaced anything');
    assert.equal(c.chat.session.history().length, before + 2, 'the history as it was, plus the new turn');
    assert.ok(c.notices().some((n) => /^Compaction failed, the history is unchanged: the summary was cut at the output limit \(1,024 tokens\)/.test(n)), c.notices().join('\n'));
  });
});
