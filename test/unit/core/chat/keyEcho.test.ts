import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import OpenAI from 'openai';
import { modelAt } from '../provider/models';
import type { ChatSettings, RequestTrace } from '../../../../src/core/chat/ports';
import { noTools } from '../../../../src/core/chat/tools';

import { ViewRedaction, type StreamMessage } from '../../../../src/core/chat/viewRedaction';
import { Session } from '../../../../src/core/session/session';
import { DriftLog } from '../../../../src/core/context';

import { environmentSecrets, redactingLogger, REDACTED, SecretSet } from '../../../../src/core/redact';
import type { HostMessage } from '../../../../src/protocol/chat';
import { patternlessKey, startEchoServer, type EchoServer } from '../provider/echoServer';
import { MemoryLogger, transcriptOf } from '../../../helpers/core';
import { openChat } from './openChat';
import { appendQueue } from '../../../../src/core/jsonl';

/** Every file under `dir`, with its text. */
function filesUnder(dir: string): Array<{ file: string; text: string }> {
  const out: Array<{ file: string; text: string }> = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    out.push({ file, text: fs.readFileSync(file, 'latin1') });
  }
  return out;
}

/**
 * The chat loop wired to its outputs as the extension host wires it: one
 * SecretSet, the log behind `redactingLogger` (createLog), every event posted
 * through `ViewRedaction` (ChatView.post), traces redacted (ChatController).
 */
function harness(server: EchoServer, key: string, secrets: SecretSet, dataDir: string, settings: ChatSettings) {
  const sink = new MemoryLogger();
  const log = redactingLogger(sink, secrets);
  const view = new ViewRedaction(secrets);
  const posts: Array<HostMessage | StreamMessage> = [];
  const traces: RequestTrace[] = [];
  const identity = { provider: 'echo', model: 'm' };
  const model = modelAt(server.baseUrl, { apiKey: key, identity, policy: { idleTimeoutMs: 5000, maxRetries: 1 } });
  const session = Session.create(path.join(dataDir, 'sessions'), 'demo');
  const conversation = openChat(session, {
    driftLog: new DriftLog(path.join(dataDir, 'drift.jsonl')),
    summaryModel: model,
    identity: () => identity,
    tokenizer: () => undefined,
    provider: async () => model,
    settings: () => settings,
    prompt: { systemPrompt: async () => ({ text: 'You are Candor.', prompt: 'You are Candor.' }) },
    tools: () => noTools,
    log,
    trace: (trace) => traces.push(secrets.redactDeep(trace)),
    secrets,
  }, (event) => posts.push(...view.messages<HostMessage>(event)));
  return { conversation, sink, posts, traces, view };
}

describe('the key never leaves through the chat: a provider echoing Authorization (real HTTP)', () => {
  let dataDir: string;
  let server: EchoServer;
  let key: string;
  const settings: ChatSettings = { contextWindow: 100_000, thresholdPercent: 80, keepTurns: 1 };

  beforeEach(() => {
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-key-echo-'));
    key = patternlessKey();
  });
  afterEach(async () => {
    await server.close();
    await appendQueue.flushed(); // the session's lines land before their folder goes
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function assertNoKey(where: string, texts: readonly string[]): void {
    for (const text of texts) {
      const at = text.indexOf(key);
      assert.ok(at === -1, `${where} holds the key: …${text.slice(Math.max(0, at - 150), at + key.length + 50)}…`);
    }
  }

  const keySources: Array<[string, () => string, (key: string) => SecretSet]> = [
    ['from the environment', patternlessKey, (k) => environmentSecrets({ OPENAI_API_KEY: k })],
    ['from secret storage', patternlessKey, (k) => {
      const set = new SecretSet();
      set.add(k); // what ApiKeys does when it reads the stored key
      return set;
    }],
    // The case: `Bearer sk-…` echoed, with a key no SecretSet was told about.
    ['sk-… known to nobody', () => `sk-proj-${patternlessKey().replace(/-/g, '')}`, () => new SecretSet()],
  ];

  for (const status of [401, 400, 500]) {
    for (const [source, makeKey, secretsFor] of keySources) {
      it(`HTTP ${status}, key ${source}: no file, log line, posted message or trace holds it`, async () => {
        key = makeKey();
        server = await startEchoServer(status);
        const { conversation, sink, posts, traces } = harness(server, key, secretsFor(key), dataDir, settings);
        await conversation.send('hello');

        // The trap: the request carried the key, and the provider echoed it back.
        assert.ok(server.seen.length >= 1 && server.seen.every((h) => h === `Bearer ${key}`));
        const raw = await new OpenAI({ baseURL: server.baseUrl, apiKey: key, maxRetries: 0 }).chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'x' }] }).catch((e: unknown) => e);
        assert.ok(raw instanceof Error && raw.message.includes(key), 'the provider\'s error, unredacted, holds the key');

        const notices = posts.flatMap((m) => (m.type === 'entry' && m.entry.kind === 'notice' ? [m.entry.text] : []));
        assert.ok(notices.length >= 1, 'the failure is shown in the chat');
        if (status === 401) assert.match(notices.at(-1) ?? "", /refused the API key \(HTTP 401 for http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions\)/, "the notice names the URL tried");
        else assert.ok(notices.some((n) => n.includes('Incorrect API key provided') && n.includes(REDACTED)), notices.join('\n'));
        if (status === 500) assert.ok(notices.some((n) => n.includes('Retrying')), 'the retry is shown');

        assertNoKey('a posted message', posts.map((m) => JSON.stringify(m)));
        assertNoKey('a log line', sink.lines);
        assert.ok(sink.lines.some((l) => l.includes('request failed: http')), 'the failure is logged');
        assertNoKey('a trace', traces.map((t) => JSON.stringify(t)));
        assert.ok(traces.length >= 1 && traces.every((t) => !t.completed));
        const files = filesUnder(dataDir);
        assert.ok(files.some((f) => f.file.endsWith('.jsonl') && f.text.includes('"notice"')), 'the notice is in the session file');
        for (const f of files) assertNoKey(f.file, [f.text]);
        // A reload shows the same, redacted.
        const reloaded = new ViewRedaction(secretsFor(key)).messages<HostMessage>({ type: 'init', session: conversation.session.id, more: false, entries: transcriptOf(Session.open(conversation.session.file)), busy: false, provider: { label: '', name: 'm', host: '', title: '', model: 'm', provider: 'echo', offline: false }, trusted: true, welcome: false, sessionTitle: conversation.session.title() });
        assertNoKey('the init message', [JSON.stringify(reloaded)]);
      });
    }
  }

  it('a compaction whose summary request is refused says so without the key (the error is not the provider port\'s)', async () => {
    server = await startEchoServer(401);
    const secrets = environmentSecrets({ OPENAI_API_KEY: key });
    const { conversation, sink, posts } = harness(server, key, secrets, dataDir, { ...settings, contextWindow: 400, thresholdPercent: 10 });
    for (let i = 0; i < 3; i++) {
      conversation.session.addMessage(`t${i}`, { role: 'user', content: `question ${i} ${'q'.repeat(120)}` });
      conversation.session.addMessage(`t${i}`, { role: 'assistant', content: `answer ${i} ${'a'.repeat(120)}` });
    }
    await conversation.send('one more');
    const notices = posts.flatMap((m) => (m.type === 'entry' && m.entry.kind === 'notice' ? [m.entry.text] : []));
    const failed = notices.find((n) => n.startsWith('Compaction failed'));
    assert.ok(failed, notices.join('\n'));
    assert.ok(failed.includes(REDACTED), 'the SDK\'s message echoed the key, and it was replaced');
    assertNoKey('a posted message', posts.map((m) => JSON.stringify(m)));
    assertNoKey('a log line', sink.lines);
    for (const f of filesUnder(dataDir)) assertNoKey(f.file, [f.text]);
  });

  it('the user\'s own message keeps the key as typed in the session file; everything shown or logged from it is redacted', async () => {
    server = await startEchoServer(401);
    const secrets = environmentSecrets({ OPENAI_API_KEY: key });
    const { conversation, sink, posts } = harness(server, key, secrets, dataDir, settings);
    await conversation.send(`my key is ${key}, why is it refused?`);
    assert.ok(fs.readFileSync(conversation.session.file, 'utf8').includes(`my key is ${key}`), 'the session file keeps the message as typed');
    const shown = posts.find((m) => m.type === 'entry' && m.entry.kind === 'user');
    assert.ok(shown?.type === 'entry' && shown.entry.kind === 'user' && shown.entry.text === `my key is ${REDACTED}, why is it refused?`);
    assertNoKey('a posted message', posts.map((m) => JSON.stringify(m)));
    assertNoKey('a log line', sink.lines);
    const view = new ViewRedaction(secrets);
    const init = view.messages<HostMessage>({ type: 'init', session: conversation.session.id, more: false, entries: transcriptOf(Session.open(conversation.session.file)), busy: false, provider: { label: '', name: 'm', host: '', title: '', model: 'm', provider: 'echo', offline: false }, trusted: true, welcome: false, sessionTitle: conversation.session.title() });
    assert.ok(JSON.stringify(conversation.session.title()).includes(key), 'the trap: the title is made from the message');
    assertNoKey('the init message (transcript and title)', [JSON.stringify(init)]);
  });
});
