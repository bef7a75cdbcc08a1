import * as assert from 'node:assert/strict';
import { finalReply } from '../../../../src/core/provider/finalReply';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ContextGate } from '../../../../src/core/context/gate';
import { PayloadLedger } from '../../../../src/core/context/ledger';
import { demoScenario } from '../../../../src/core/offline/demoScenario';
import { parseScenario, ScenarioError } from '../../../../src/core/offline/scenario';
import { DEFAULT_POLICY, type CompletedRequest } from '../../../../src/core/provider/chatModel';
import { createClient, openAiChatModel } from '../../../../src/core/provider/openaiModel';
import { countTokens, useOfflineServer } from '../provider/models';
import { ModelResolver } from '../../../../src/core/provider/resolve';

const hello = [{ role: 'user' as const, content: 'hi' }];
const identity = { provider: 'offline', model: 'm' };

/** What the context gate makes of a completed request: the production gate, not a copy of its rule. */
function settle(result: CompletedRequest): string {
  const gate = new ContextGate({ session: 's', sink: { record: () => undefined } });
  const ledger = new PayloadLedger();
  ledger.reset(hello, '');
  gate.beforeRequest(identity, ledger.measure('', ''));
  return gate.afterRequest({ completed: true, promptTokens: result.usage?.promptTokens }).kind;
}

/** The raw SSE lines the server sends for one streamed request. */
async function rawChunks(baseUrl: string, body: object = {}): Promise<Array<Record<string, unknown>>> {
  const response = await fetch(`${baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: hello, stream: true, ...body }) });
  const text = await response.text();
  return text.split('\n').filter((l) => l.startsWith('data: {')).map((l) => JSON.parse(l.slice(6)) as Record<string, unknown>);
}

describe('offline provider stream switches, and the usage shapes Candor already reads', () => {
  const offline = useOfflineServer();
  const use = (json: unknown): void => offline.use(json);
  const model = () => openAiChatModel(createClient(offline.server.baseUrl, 'k'), identity, { idleTimeoutMs: 5000, maxRetries: 0 });

  it('by default usage comes in a chunk of its own after the last choice', async () => {
    use({ rules: [{ respond: { text: 'hello world' } }] });
    const chunks = await rawChunks(offline.server.baseUrl);
    const last = chunks.at(-1) as { choices: unknown[]; usage?: unknown };
    assert.deepEqual(last.choices, []);
    assert.ok(last.usage);
  });

  it('usageOnContentChunk: usage rides on the last content chunk with its finish_reason, and Candor reads it there', async () => {
    use({ rules: [{ respond: { text: 'hello world, twice over' }, usageOnContentChunk: true, chunkChars: 5 }] });
    const chunks = await rawChunks(offline.server.baseUrl);
    const withUsage = chunks.filter((c) => c.usage !== undefined) as Array<{ choices: Array<{ delta: { content?: string }; finish_reason: string | null }> }>;
    assert.equal(withUsage.length, 1);
    assert.equal(withUsage[0]?.choices[0]?.finish_reason, 'stop');
    assert.equal(withUsage[0]?.choices[0]?.delta.content, 'ver', 'the last piece of text (23 characters in pieces of 5)');
    assert.ok(!chunks.some((c) => Array.isArray(c.choices) && c.choices.length === 0), 'no usage chunk of its own');

    const result = await finalReply(model().stream({ messages: hello }));
    assert.equal(result.content, 'hello world, twice over');
    assert.equal(result.usage?.promptTokens, 3 + 3 + countTokens('user') + countTokens('hi'), 'frame, role, content, priming');
    assert.equal(settle(result), 'anchored');
  });

  it('zeroUsage: every count 0, which Candor treats as no usage', async () => {
    use({ rules: [{ respond: { text: 'cached' }, zeroUsage: true }] });
    const result = await finalReply(model().stream({ messages: hello }));
    assert.deepEqual(result.usage, { promptTokens: 0, completionTokens: 0 });
    assert.equal(settle(result), 'unanchored');
  });

  it('promptTokens: the given count is reported instead of the counted one', async () => {
    use({ rules: [{ respond: { text: 'truncated' }, promptTokens: 4096 }] });
    const result = await finalReply(model().stream({ messages: hello }));
    assert.equal(result.usage?.promptTokens, 4096);
    assert.equal(settle(result), 'anchored');
  });

  it('rejectStreamOptions refuses only requests that carry the option', async () => {
    use({ rules: [{ respond: { text: 'ok' }, rejectStreamOptions: true, times: 1 }, { respond: { text: 'second rule' } }] });
    const refused = await fetch(`${offline.server.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify({ model: 'm', messages: hello, stream: true, stream_options: { include_usage: true } }) });
    assert.equal(refused.status, 400);
    const chunks = await rawChunks(offline.server.baseUrl);
    assert.equal((chunks[1] as { choices: Array<{ delta: { content: string } }> }).choices[0]?.delta.content, 'ok', 'the refusal did not use up the rule');
    assert.deepEqual(offline.server.requests.map((r) => r.streamOptions), [true, false]);
  });

  it('non-numeric prompt_tokens is no usage (a server of its own, since the scenario only takes numbers)', async () => {
    const odd = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'x' }, finish_reason: 'stop' }] })}\n\n`);
        res.write(`data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [], usage: { prompt_tokens: '120', completion_tokens: 1 } })}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    });
    await new Promise<void>((resolve) => odd.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = odd.address() as AddressInfo;
      const result = await finalReply(openAiChatModel(createClient(`http://127.0.0.1:${port}/v1`, 'k'), identity, { idleTimeoutMs: 5000, maxRetries: 0 }).stream({ messages: hello }));
      assert.equal(result.finishReason, 'stop');
      assert.equal(result.usage, undefined);
      assert.equal(settle(result), 'unanchored');
    } finally {
      odd.closeAllConnections();
      await new Promise<void>((resolve) => odd.close(() => resolve()));
    }
  });

  it('Select Model lists the endpoint\'s /v1/models', async () => {
    use({ models: ['first-model', 'second-model'], rules: [{ respond: { text: 'x' } }] });
    const resolver = new ModelResolver({ scenario: () => demoScenario, countTokens });
    try {
      assert.deepEqual(await resolver.listModels({ baseUrl: offline.server.baseUrl, apiKey: 'k' }, AbortSignal.timeout(5000)), ['first-model', 'second-model']);
      assert.deepEqual(offline.server.requests, [], 'a GET, not a chat request');
      assert.ok((await resolver.resolve({ baseUrl: offline.server.baseUrl, apiKey: 'k', model: 'first-model', policy: DEFAULT_POLICY })).identity.provider.startsWith('127-0-0-1-'));
    } finally {
      await resolver.close();
    }
  });

  it('the new switches are validated like the others', () => {
    for (const [key, bad] of [['rejectStreamOptions', 'yes'], ['usageOnContentChunk', 1], ['zeroUsage', 'true'], ['promptTokens', -1], ['promptTokens', '12']] as const) {
      assert.throws(() => parseScenario({ rules: [{ respond: { text: 'x' }, [key]: bad }] }), (err: unknown) => err instanceof ScenarioError && err.message.includes(key), `${key}: ${String(bad)}`);
    }
    assert.doesNotThrow(() => parseScenario({ rules: [{ respond: { text: 'x' }, rejectStreamOptions: true, usageOnContentChunk: false, zeroUsage: true, promptTokens: 0 }] }));
  });
});
