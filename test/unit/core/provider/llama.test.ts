// The provider path against a real llama.cpp llama-server (test/helpers/llamaServer.ts):
// its window, a streamed reply with usage, a tool-call round trip with real
// thinking, a real overflow, a real cut, and a long prompt's progress.
import * as assert from 'node:assert/strict';
import type { ChatMessage, ToolSpec } from '../../../../src/core/messages';
import type { ModelEvent } from '../../../../src/core/provider/chatModel';
import { finalReply } from '../../../../src/core/provider/finalReply';
import { readServerFacts } from '../../../../src/core/provider/serverWindow';
import { RequestError } from '../../../../src/core/provider/requestError';
import { llamaOrSkip, startLlama, type LlamaFound, type LlamaServer } from '../../../helpers/llamaServer';
import { eventsOf, modelAt } from './models';

const listFiles: ToolSpec = { type: 'function', function: { name: 'list_files', description: 'List the files under a folder.', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };
const ask: ChatMessage[] = [{ role: 'user', content: 'What files are in this project?' }];

describe('the provider path against a real llama-server', function () {
  this.timeout(120_000);
  let found: LlamaFound;
  /** One server per set of options, shared by the tests that need the same one. */
  const servers = new Map<string, Promise<LlamaServer>>();
  before(function () {
    found = llamaOrSkip(this);
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

  it('reads the window of one slot from /props, and that this template does not take thinking back', async () => {
    const one = await serve({ ctx: 4096 });
    const split = await serve({ ctx: 4096, flags: ['-np', '2'] });
    const read = (s: LlamaServer) => readServerFacts({ kind: 'llamacpp', port: s.port }, s.modelPath, { signal: AbortSignal.timeout(5000) });
    assert.deepEqual(await read(one), { window: 4096, preserveReasoning: false });
    assert.deepEqual(await read(split), { window: 2048, preserveReasoning: false }, 'two slots of 2,048 each: the window of one request');
  });

  it('a tool-call round trip: a streamed call with usage, then real thinking apart from the answer', async () => {
    const server = await serve({ ctx: 8192, model: 'toolcall' });
    const model = modelAt(server.baseUrl, { policy: { maxOutputTokens: 256 } });
    const first = await eventsOf(model.stream({ messages: ask, tools: [listFiles] }));
    const call = lastReply(first);
    assert.equal(call.finishReason, 'tool_calls');
    assert.deepEqual(call.toolCalls.map((c) => [c.function.name, JSON.parse(c.function.arguments)]), [['list_files', {}]]);
    assert.ok(first.some((e) => e.type === 'tool-call'), 'the call arrived as deltas');
    assert.ok((call.usage?.promptTokens ?? 0) > 100, 'usage was streamed');

    const back: ChatMessage[] = [...ask, { role: 'assistant', content: null, tool_calls: call.toolCalls }, { role: 'tool', tool_call_id: call.toolCalls[0]?.id ?? '', content: 'README.md\nsrc/' }];
    const second = await eventsOf(model.stream({ messages: back, tools: [listFiles] }));
    const answer = lastReply(second);
    assert.equal(answer.finishReason, 'stop');
    assert.equal(answer.reasoning, 'The files are listed');
    assert.equal(answer.content, 'Done.');
    const order = second.flatMap((e) => (e.type === 'reasoning' || e.type === 'text' ? [e.type] : []));
    assert.ok(order.indexOf('reasoning') < order.indexOf('text'), 'the thinking streams before the answer');
  });

  it('a server that leaves thinking inline (--reasoning-format none): the leading <think> block is split off', async () => {
    const server = await serve({ ctx: 8192, model: 'toolcall', flags: ['--reasoning-format', 'none'] });
    const model = modelAt(server.baseUrl, { policy: { maxOutputTokens: 256 } });
    const call = await finalReply(model.stream({ messages: ask, tools: [listFiles] }));
    const back: ChatMessage[] = [...ask, { role: 'assistant', content: null, tool_calls: call.toolCalls }, { role: 'tool', tool_call_id: call.toolCalls[0]?.id ?? '', content: 'README.md' }];
    const raw = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ messages: back, tools: [listFiles] }) }).then((r) => r.json() as Promise<{ choices: Array<{ message: { content: string } }> }>);
    assert.match(raw.choices[0]?.message.content ?? '', /^<think>/, 'the trap: this server leaves the thinking in the content');
    const answer = await finalReply(model.stream({ messages: back, tools: [listFiles] }));
    assert.equal(answer.reasoning.trim(), 'The files are listed');
    assert.equal(answer.content, 'Done.');
  });

  it('a prompt past the window is an overflow with the server\'s own count and window', async () => {
    const server = await serve({ ctx: 2048 });
    const events = await eventsOf(modelAt(server.baseUrl).stream({ messages: [{ role: 'user', content: 'word '.repeat(2100) }] }));
    const last = events.at(-1);
    assert.ok(last?.type === 'error', JSON.stringify(last));
    assert.equal(last.error.status, 400);
    assert.deepEqual(last.error.overflow, { parser: 'llama.cpp', real: 2109, window: 2048 });
    assert.equal(events.filter((e) => e.type === 'attempt').length, 1, 'a 400 is not retried');
  });

  it('a long prompt: progress reported as the server reads it keeps a short first-token timeout from cutting it; without progress the same wait is cut', async () => {
    const server = await serve({ ctx: 16384 });
    // About 12,000 tokens: seconds of prompt processing on one thread. Two texts, so the second finds nothing in the cache.
    const long = (word: string): ChatMessage[] => [{ role: 'user', content: `${word} `.repeat(12_000) }];
    const policy = { firstTokenTimeoutMs: 1000, idleTimeoutMs: 60_000, maxOutputTokens: 4 };
    const withProgress = modelAt(server.baseUrl, { policy }, { returnProgress: true });
    const events = await eventsOf(withProgress.stream({ messages: long('alpha') }));
    assert.equal(events.at(-1)?.type, 'finish', JSON.stringify(events.at(-1)));
    const progress = events.flatMap((e: ModelEvent) => (e.type === 'progress' ? [e.progress] : []));
    assert.ok(progress.length >= 2, `progress chunks: ${progress.length}`);
    assert.equal(progress.at(-1)?.processed, progress.at(-1)?.total, 'the last one says the whole prompt is read');

    const started = Date.now();
    const err = await finalReply(modelAt(server.baseUrl, { policy }).stream({ messages: long('omega') })).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError && err.kind === 'first-token-timeout', String(err));
    assert.ok(Date.now() - started < 10_000, 'cut by the 1 s timer, long before the reply');
  });
});

function lastReply(events: readonly ModelEvent[]) {
  const last = events.at(-1);
  if (last?.type !== 'finish') throw new Error(`the request did not complete: ${JSON.stringify(last)}`);
  return last.reply;
}
