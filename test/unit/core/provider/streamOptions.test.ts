import * as assert from 'node:assert/strict';
import type { CompletedRequest } from '../../../../src/core/provider/chatModel';
import { createClient, openAiChatModel } from '../../../../src/core/provider/openaiModel';
import { RequestError } from '../../../../src/core/provider/requestError';
import { streamAttempt } from '../../../../src/core/provider/stream';
import { finalReply } from '../../../../src/core/provider/finalReply';
import { eventsOf, useOfflineServer } from './models';
import { inMemoryUsage, persistedUsage, type StreamUsageMemory } from '../../../../src/core/provider/streamUsage';

const hello = [{ role: 'user' as const, content: 'hi' }];
const identity = { provider: '127-0-0-1-11434', model: 'llama3.2' };

describe('a server that refuses stream_options (offline provider over real HTTP)', () => {
  const offline = useOfflineServer();
  const use = (json: unknown): void => offline.use(json);

  function model(usage: StreamUsageMemory = inMemoryUsage(), who = identity) {
    return openAiChatModel(createClient(offline.server.baseUrl, 'k'), who, { idleTimeoutMs: 5000, maxRetries: 2 }, usage);
  }

  /** The stream, counting the attempts the gate would see. */
  async function stream(m: ReturnType<typeof model>): Promise<{ result: CompletedRequest; attempts: number; ends: number }> {
    const events = await eventsOf(m.stream({ messages: hello }));
    const last = events.at(-1);
    if (last?.type !== 'finish') throw new Error(`the request did not complete: ${JSON.stringify(last)}`);
    return { result: last.reply, attempts: events.filter((e) => e.type === 'attempt').length, ends: events.filter((e) => e.type === 'finish' || e.type === 'error').length };
  }

  it('the trap: the switch answers 400 naming stream_options, and one plain streamed request fails on it', async () => {
    use({ rules: [{ respond: { text: 'ok' }, rejectStreamOptions: true }] });
    const response = await fetch(`${offline.server.baseUrl}/chat/completions`, {
      method: 'POST', body: JSON.stringify({ model: 'm', messages: hello, stream: true, stream_options: { include_usage: true } }),
    });
    assert.equal(response.status, 400);
    assert.match(await response.text(), /stream_options/);
    // One attempt as the adapter makes it, without the retry around it.
    const attempt = await eventsOf(streamAttempt(createClient(offline.server.baseUrl, 'k'), { model: 'm', messages: hello }, { idleTimeoutMs: 5000, firstTokenTimeoutMs: 5000 }));
    const err = attempt.at(-1)?.type === 'error' ? (attempt.at(-1) as { error: RequestError }).error : undefined;
    assert.ok(err instanceof RequestError && err.status === 400 && /stream_options/.test(err.message), String(err));
    // The adapter's request completes.
    assert.equal((await finalReply(model().stream({ messages: hello }))).content, 'ok');
  });

  it('one retry without stream_options; a stream without usage makes the identity "no usage in streams", said on the result', async () => {
    use({ rules: [{ respond: { text: 'answer' }, rejectStreamOptions: true, usage: false }] });
    const memory = inMemoryUsage();
    const m = model(memory);
    const first = await stream(m);
    assert.equal(first.result.content, 'answer');
    assert.equal(first.result.usage, undefined);
    assert.equal(first.result.usageUnsupported, true);
    assert.deepEqual({ attempts: first.attempts, ends: first.ends }, { attempts: 1, ends: 1 }, 'the refused call is part of one request for the gate');
    assert.deepEqual(offline.server.requests.map((r) => r.streamOptions), [true, false]);
    assert.equal(memory.get(identity), 'no-usage-in-streams');

    const second = await stream(m);
    assert.equal(second.result.usageUnsupported, true);
    assert.deepEqual(offline.server.requests.map((r) => r.streamOptions), [true, false, false], 'from then on without stream_options, no 400 first');
  });

  it('a server that refuses the option but reports usage anyway: remembered, anchored, not flagged', async () => {
    use({ rules: [{ respond: { text: 'answer' }, rejectStreamOptions: true }] });
    const memory = inMemoryUsage();
    const m = model(memory);
    const { result } = await stream(m);
    assert.ok(result.usage && result.usage.promptTokens > 0);
    assert.equal(result.usageUnsupported, undefined);
    assert.equal(memory.get(identity), 'rejects-stream-options');
    await stream(m);
    assert.deepEqual(offline.server.requests.map((r) => r.streamOptions), [true, false, false]);
  });

  it('exactly one retry: a retry refused again fails, with two requests in all', async () => {
    use({ rules: [{ respond: { error: { status: 400, message: 'stream_options: extra inputs are not permitted' } } }] });
    const memory = inMemoryUsage();
    const err = await finalReply(model(memory).stream({ messages: hello })).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError && err.status === 400, String(err));
    assert.equal(offline.server.requests.length, 2);
    assert.equal(memory.get(identity), undefined, 'nothing learnt from a failure');
  });

  it('a 400 about something else is no reason to drop stream_options', async () => {
    use({ rules: [{ respond: { error: { status: 400, message: 'messages: too long' } } }] });
    const memory = inMemoryUsage();
    const err = await finalReply(model(memory).stream({ messages: hello })).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError && err.status === 400);
    assert.equal(offline.server.requests.length, 1);
    assert.equal(memory.get(identity), undefined);
  });

  it('a server that accepts stream_options keeps getting it and is never remembered', async () => {
    use({ rules: [{ respond: { text: 'fine' }, usage: false }] });
    const memory = inMemoryUsage();
    const { result } = await stream(model(memory));
    assert.equal(result.usageUnsupported, undefined, 'no usage, but nothing says the server never reports it: the gate warns as before');
    assert.deepEqual(offline.server.requests.map((r) => r.streamOptions), [true]);
    assert.equal(memory.get(identity), undefined);
  });

  it('what was learnt outlives the process (a persisted store), per provider and model', async () => {
    use({ rules: [{ respond: { text: 'answer' }, rejectStreamOptions: true, usage: false }] });
    const store = new Map<string, unknown>();
    const state = { get: (key: string) => store.get(key), update: async (key: string, value: unknown) => void store.set(key, value) };
    await stream(model(persistedUsage(state)));
    assert.deepEqual(store.get('candor.streamUsage'), { '127-0-0-1-11434 llama3.2': 'no-usage-in-streams' });

    const restarted = await stream(model(persistedUsage(state)));
    assert.equal(restarted.result.usageUnsupported, true);
    const other = { ...identity, model: 'qwen' };
    await stream(model(persistedUsage(state), other));
    assert.deepEqual(offline.server.requests.map((r) => r.streamOptions), [true, false, false, true, false], 'another model is asked afresh');
  });

  it('a server remembered as silent that starts reporting usage is anchored again, and remembered so', async () => {
    use({ rules: [{ respond: { text: 'answer' }, rejectStreamOptions: true }] });
    const memory = inMemoryUsage();
    memory.remember(identity, 'no-usage-in-streams');
    const { result } = await stream(model(memory));
    assert.ok(result.usage);
    assert.equal(result.usageUnsupported, undefined);
    assert.equal(memory.get(identity), 'rejects-stream-options');
  });
});
