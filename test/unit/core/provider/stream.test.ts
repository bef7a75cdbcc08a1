import * as assert from 'node:assert/strict';
import * as net from 'node:net';
import { PartialReplyError, RequestError } from '../../../../src/core/provider/requestError';
import { finalReply } from '../../../../src/core/provider/finalReply';
import type { ModelEvent } from '../../../../src/core/provider/chatModel';
import type { Timers } from '../../../../src/core/provider/watchdog';
import { countTokens, eventsOf, modelAt, useOfflineServer } from './models';

const user = (content: string) => [{ role: 'user' as const, content }];

describe('streaming requests over real HTTP to the offline provider', () => {
  const offline = useOfflineServer();
  const use = (json: unknown): void => offline.use(json);

  it('a completed request streams text in pieces and reports prompt_tokens', async () => {
    use({ rules: [{ respond: { text: 'hello there, general kenobi' }, chunkChars: 5 }] });
    const pieces: string[] = [];
    const result = await finalReply(modelAt(offline.server.baseUrl).stream({ messages: user('hi') }), { onText: (d) => pieces.push(d) });
    assert.equal(result.content, 'hello there, general kenobi');
    assert.ok(pieces.length >= 5, `expected several deltas, got ${pieces.length}`);
    assert.equal(result.finishReason, 'stop');
    // As OpenAI counts: 3 per message, the role, the content, and 3 for the reply's priming.
    assert.equal(result.usage?.promptTokens, 3 + 3 + countTokens('user') + countTokens('hi'));
  });

  it('usage:false completes without usage (the anchor-loss case)', async () => {
    use({ rules: [{ respond: { text: 'ok' }, usage: false }] });
    const result = await finalReply(modelAt(offline.server.baseUrl).stream({ messages: user('hi') }));
    assert.equal(result.finishReason, 'stop');
    assert.equal(result.usage, undefined);
  });

  it('tool calls arrive whole, with finish_reason tool_calls', async () => {
    use({ rules: [{ respond: { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] } }] });
    const result = await finalReply(modelAt(offline.server.baseUrl).stream({ messages: user('list') }));
    assert.equal(result.finishReason, 'tool_calls');
    assert.equal(result.toolCalls.length, 1);
    assert.equal(result.toolCalls[0]?.function.name, 'list_files');
    assert.deepEqual(JSON.parse(result.toolCalls[0]?.function.arguments ?? ''), { path: '.' });
  });

  for (const [status, kind, retryable] of [[401, 'http', false], [404, 'http', false], [429, 'http', true], [500, 'http', true]] as const) {
    it(`HTTP ${status} is a RequestError of kind ${kind}, retryable=${retryable}`, async () => {
      use({ rules: [{ respond: { error: { status, message: 'scripted' } } }] });
      const err = await finalReply(modelAt(offline.server.baseUrl).stream({ messages: user('hi') })).then(
        () => assert.fail('should have failed'),
        (e: unknown) => e,
      );
      assert.ok(err instanceof RequestError);
      assert.equal(err.kind, kind);
      assert.equal(err.status, status);
      assert.equal(err.retryable, retryable);
    });
  }

  it('a stream cut mid-reply is "cut" and keeps the partial text', async () => {
    use({ rules: [{ respond: { text: 'a'.repeat(200) }, cutAfterChars: 30, chunkChars: 10 }] });
    const err = await finalReply(modelAt(offline.server.baseUrl).stream({ messages: user('hi') })).catch((e: unknown) => e);
    assert.ok(err instanceof PartialReplyError, `got ${String(err)}`);
    assert.equal(err.kind, 'cut');
    assert.equal(err.partial, 'a'.repeat(30));
  });

  it('a malformed SSE chunk is reported, not swallowed', async () => {
    use({ rules: [{ respond: { text: 'b'.repeat(50) }, malformedAfterChars: 10, chunkChars: 10 }] });
    const err = await finalReply(modelAt(offline.server.baseUrl).stream({ messages: user('hi') })).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError, `got ${String(err)}`);
    assert.ok(['malformed', 'cut'].includes(err.kind), err.kind);
    assert.notEqual((err as RequestError).kind, 'cancelled');
  });

  it('a stall past the idle timeout, once the reply has started, is "idle-timeout"', async () => {
    // The first piece is live text; the next comes only after 5 s. On this clock the
    // idle limit runs out as soon as it is armed: had the timer not cut the request,
    // the reply would complete after the stall, with no error.
    use({ rules: [{ respond: { text: 'late reply' }, chunkChars: 2, chunkDelayMs: 5000 }] });
    const clock = limitRunsOut(300);
    const model = modelAt(offline.server.baseUrl, { policy: { idleTimeoutMs: 300, firstTokenTimeoutMs: 60_000 } }, { timers: clock.timers });
    const pieces: string[] = [];
    const err = await finalReply(model.stream({ messages: user('hi') }), { onText: (d) => pieces.push(d) }).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError, String(err));
    assert.equal(err.kind, 'idle-timeout');
    assert.deepEqual(pieces, ['la'], 'cut during the stall after the first piece');
    assert.deepEqual(clock.armed, [60_000, 300], 'the first-token limit, then the idle limit once the reply started');
  });

  it('a wait past the first-token timeout before anything live is "first-token-timeout"; the role-only first chunk does not count', async () => {
    // The offline server sends a role-only chunk at once, then holds 5 s, well over
    // 10x the 300 ms limit: had the timer not cut the request, or had the role-only
    // chunk switched to the 60 s idle limit, the reply would complete with no error.
    use({ rules: [{ respond: { text: 'late' }, holdMs: 5000 }] });
    const err = await finalReply(modelAt(offline.server.baseUrl, { policy: { idleTimeoutMs: 60_000, firstTokenTimeoutMs: 300 } }).stream({ messages: user('hi') })).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError, String(err));
    assert.equal(err.kind, 'first-token-timeout');
    assert.match(err.describe(), /candor\.request\.firstTokenTimeoutSeconds/);
  });

  it('Stop (abort) is "cancelled" and keeps what arrived', async () => {
    use({ rules: [{ respond: { text: 'c'.repeat(400) }, chunkChars: 10, chunkDelayMs: 20 }] });
    const controller = new AbortController();
    let seen = 0;
    const err = await finalReply(modelAt(offline.server.baseUrl).stream({ messages: user('hi') }, { signal: controller.signal }), {
      onText: (d) => {
        seen += d.length;
        if (seen >= 50) controller.abort();
      },
    }).catch((e: unknown) => e);
    assert.ok(err instanceof PartialReplyError);
    assert.equal(err.kind, 'cancelled');
    assert.ok(err.partial.length >= 50 && err.partial.length < 400);
  });

  it('connection refused is "connection" and retryable', async () => {
    const port = await freePort();
    const err = await finalReply(modelAt(`http://127.0.0.1:${port}/v1`).stream({ messages: user('hi') })).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError);
    assert.equal(err.kind, 'connection');
    assert.equal(err.retryable, true);
  });

  it("the model's retry policy retries a 500 then succeeds, announcing each retry and reporting each attempt", async () => {
    use({ rules: [{ respond: { error: { status: 500 } }, times: 2 }, { respond: { text: 'recovered' } }] });
    const model = modelAt(offline.server.baseUrl, { policy: { maxRetries: 2 } }, { sleep: async () => undefined });
    const events = await eventsOf(model.stream({ messages: user('hi') }));
    const log = events.flatMap((e: ModelEvent) => {
      if (e.type === 'attempt') return ['attempt'];
      if (e.type === 'finish') return ['completed'];
      if (e.type === 'error') return [`failed ${e.error.status ?? ''}`];
      if (e.type === 'retry') return [`retry ${e.notice.attempt} of ${e.notice.of} in ${e.notice.delayMs} ms`];
      return [];
    });
    assert.equal(events.at(-1)?.type === 'finish' && events.at(-1)?.type === 'finish' ? (events.at(-1) as { reply: { content: string } }).reply.content : '', 'recovered');
    assert.deepEqual(log, [
      'attempt', 'failed 500', 'retry 1 of 2 in 500 ms',
      'attempt', 'failed 500', 'retry 2 of 2 in 1000 ms',
      'attempt', 'completed',
    ]);
    assert.equal(offline.server.requests.length, 3);
  });

  it('a policy without retries makes one request and fails with the error', async () => {
    use({ rules: [{ respond: { error: { status: 500 } }, times: 1 }, { respond: { text: 'too late' } }] });
    const err = await finalReply(modelAt(offline.server.baseUrl, { policy: { maxRetries: 0 } }).stream({ messages: user('hi') })).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError && err.status === 500, String(err));
    assert.equal(offline.server.requests.length, 1);
  });

  it('Retry-After is honoured and capped at 30 s; 401 is never retried', async () => {
    use({ rules: [{ respond: { error: { status: 429, retryAfterSeconds: 120 } }, times: 1 }, { respond: { error: { status: 401 } } }] });
    const delays: number[] = [];
    const slept: number[] = [];
    const model = modelAt(offline.server.baseUrl, { policy: { maxRetries: 5 } }, { sleep: async (ms) => void slept.push(ms) });
    const err = await finalReply(model.stream({ messages: user('hi') }), { onRetry: (n) => delays.push(n.delayMs) }).catch((e: unknown) => e);
    assert.deepEqual(slept, delays, 'each announced wait is the one waited');
    assert.deepEqual(delays, [30_000]);
    assert.ok(err instanceof RequestError && err.status === 401);
    assert.equal(offline.server.requests.length, 2);
  });
});

/** A watchdog clock on which a timer armed for `limitMs` runs out at once and any other never does; `armed` lists each limit armed. */
function limitRunsOut(limitMs: number): { timers: Timers; armed: number[] } {
  const armed: number[] = [];
  const timers: Timers = {
    set: (fire, ms) => {
      armed.push(ms);
      return ms === limitMs ? setImmediate(fire) : undefined;
    },
    clear: (handle) => {
      if (handle !== undefined) clearImmediate(handle as NodeJS.Immediate);
    },
  };
  return { timers, armed };
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}
