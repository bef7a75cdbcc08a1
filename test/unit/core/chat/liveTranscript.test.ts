import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario } from '../../../../src/core/offline/scenario';
import type { ChatSettings } from '../../../../src/core/chat/ports';
import { type TranscriptEntry } from '../../../../src/core/session/transcript';
import { parseArgs, type ToolHost } from '../../../../src/core/chat/tools';
import { ViewRedaction, type StreamMessage } from '../../../../src/core/chat/viewRedaction';
import { Session } from '../../../../src/core/session/session';
import { DriftLog } from '../../../../src/core/context';
import { silentLogger } from '../../../../src/core/log';
import { SecretSet } from '../../../../src/core/redact';
import { type HostMessage } from '../../../../src/protocol/chat';
import { modelAt } from '../provider/models';
import { isReplaceTextMessage, transcriptOf } from '../../../helpers/core';
import { openChat } from './openChat';

/** What the chat webview keeps of the messages it is posted: an entry under a known id replaces it in place, deltas grow it. */
class ViewState {
  entries: TranscriptEntry[] = [];
  deltas = 0;

  apply(message: HostMessage | StreamMessage): void {
    if (message.type === 'init') this.entries = [...message.entries];
    if (message.type === 'entry') {
      const at = this.entries.findIndex((e) => e.id === message.entry.id);
      if (at === -1) this.entries.push(message.entry);
      else this.entries[at] = message.entry;
    }
    if (message.type === 'delta') {
      this.deltas++;
      this.setText(message.id, (text) => text + message.text);
    }
    if (isReplaceTextMessage(message)) this.setText(message.id, () => message.text);
  }

  private setText(id: string, change: (text: string) => string): void {
    const at = this.entries.findIndex((e) => e.id === id);
    const entry = this.entries[at];
    if (entry && 'text' in entry) this.entries[at] = { ...entry, text: change(entry.text) };
  }
}

const listFiles: ToolHost = {
  specs: () => [{ type: 'function', function: { name: 'list_files', description: 'list', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
  run: async (_name, args) => `files under ${String(parseArgs(args).path)}: a.txt b.txt`,
};

function init(entries: TranscriptEntry[], title: string): HostMessage {
  return { type: 'init', session: 's', more: false, entries, busy: false, provider: { label: '', name: 'm', host: '', title: '', model: 'm', provider: 'offline', offline: true }, trusted: true, welcome: false, sessionTitle: title };
}

describe('one mapping from session records to transcript entries', () => {
  let dir: string;
  let server: OfflineServer;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-live-'));
    const scenario = parseScenario({
      rules: [
        { match: { system: '^You compact a conversation' }, respond: { text: 'SUMMARY of the earlier turns.' } },
        { match: { lastRole: 'tool' }, respond: { text: 'Two files: a.txt and b.txt.' }, chunkChars: 5 },
        { match: { user: 'list files' }, respond: { toolCalls: [{ name: 'list_files', arguments: { path: 'src' } }] } },
        { match: { user: 'cut me' }, times: 1, respond: { text: 'x'.repeat(300) }, cutAfterChars: 40, chunkChars: 10 },
        { match: { user: 'cut me' }, times: 1, respond: { error: { status: 500, message: 'boom' } } },
        { match: { user: 'fail' }, respond: { error: { status: 500, message: 'down for good' } } },
        { respond: { text: 'An answer, streamed in pieces.' }, chunkChars: 7 },
      ],
    });
    server = await startOfflineServer({ countTokens: (text) => Math.ceil(text.length / 4), scenario: () => scenario });
  });
  afterEach(async () => {
    await server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('what the view shows live equals what a reload shows: tools, a compaction, a partial reply, a retry, notices', async () => {
    let settings: ChatSettings = { contextWindow: 100_000, thresholdPercent: 80, keepTurns: 1 };
    const identity = { provider: 'offline', model: 'candor-offline' };
    const secrets = new SecretSet();
    const redaction = new ViewRedaction(secrets);
    const view = new ViewState();
    const post = (message: HostMessage): void => redaction.messages<HostMessage>(message).forEach((m) => view.apply(m));
    const session = Session.create(path.join(dir, 'sessions'), 'demo');
    // As the chat controller relays them: every entry and event posted through the view's redaction.
    const chat = openChat(session, {
      driftLog: new DriftLog(path.join(dir, 'drift.jsonl')),
      summaryModel: modelAt(server.baseUrl, { identity }),
      identity: () => identity,
      tokenizer: () => undefined,
      provider: async () => modelAt(server.baseUrl, { identity, policy: { idleTimeoutMs: 3000, maxRetries: 1 } }),
      settings: () => settings,
      prompt: { systemPrompt: async () => ({ text: 'You are Candor.', prompt: 'You are Candor.' }) },
      tools: () => listFiles,
      log: silentLogger,
      secrets,
    }, post);
    post(init(transcriptOf(session), session.title()));

    await chat.send('list files please');
    await chat.send('and then?');
    // Past the threshold, with room left in the window for the summary's reply (summarizer.ts).
    settings = { ...settings, contextWindow: 1000, thresholdPercent: 10 };
    await chat.send('one more, past the threshold');
    settings = { ...settings, contextWindow: 100_000, thresholdPercent: 80 };
    await chat.send('cut me off');
    await chat.retry(); // a 500 first (retried, and said so), then the reply
    await chat.retry(); // nothing left to retry: a notice with no turn
    await chat.send('fail please'); // ends in an error that can still be retried
    await session.flushed();

    const reloaded = transcriptOf(Session.open(session.file));
    const shownOnReload = redaction.messages<HostMessage>(init(reloaded, '')).flatMap((m) => (m.type === 'init' ? m.entries : []));
    assert.deepEqual(view.entries, shownOnReload);

    // The session holds each thing the test means to cover, and the reply streamed.
    assert.ok(view.deltas > 3, 'replies arrived as deltas');
    const kinds = new Set(reloaded.map((e) => e.kind));
    for (const kind of ['user', 'assistant', 'tool-call', 'tool-result', 'summary', 'partial', 'notice'] as const) assert.ok(kinds.has(kind), `a ${kind} entry`);
    const notices = reloaded.filter((e): e is Extract<TranscriptEntry, { kind: 'notice' }> => e.kind === 'notice');
    assert.equal(reloaded.filter((e) => /Compacted \d+ earlier messages/.test('text' in e ? e.text : '')).length, 1, 'the compaction is one line');
    assert.ok(notices.some((n) => n.text.includes('Retrying')), 'the retry was shown');
    assert.ok(notices.some((n) => n.text === 'There is nothing to retry.'));
    assert.deepEqual(notices.filter((n) => n.retryable).map((n) => n.text.includes('down for good')), [true], 'only the newest error keeps its Retry');
    assert.ok(notices.filter((n) => !n.retryable && n.level === 'error').length >= 1, 'the cut reply\'s error lost its Retry once the retry went on');
  });
});
