import * as assert from 'node:assert/strict';
import { finalReply } from '../../../../src/core/provider/finalReply';
import OpenAI from 'openai';
import { RequestError } from '../../../../src/core/provider/requestError';
import { REDACTED } from '../../../../src/core/redact';
import { patternlessKey, startEchoServer, type EchoServer } from './echoServer';
import { modelAt } from './models';

const user = [{ role: 'user' as const, content: 'hi' }];

describe('a provider that echoes the Authorization header (real HTTP on loopback)', () => {
  let server: EchoServer;
  let key: string;

  beforeEach(async () => {
    server = await startEchoServer(401);
    key = patternlessKey();
  });
  afterEach(async () => server.close());

  it('the trap: the server echoes the key, and the SDK puts it into its error message', async () => {
    const response = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: '{}' });
    assert.equal(response.status, 401);
    assert.ok((await response.text()).includes(key), 'the body holds the key');
    const raw = new OpenAI({ baseURL: server.baseUrl, apiKey: key, maxRetries: 0 });
    const err = await raw.chat.completions.create({ model: 'm', messages: user }).catch((e: unknown) => e);
    assert.ok(err instanceof OpenAI.APIError);
    assert.ok(err.message.includes(key), 'an unredacted error message holds the key');
  });

  it('stream fails with an http RequestError whose message and description hold no key', async () => {
    const err = await finalReply(modelAt(server.baseUrl, { apiKey: key }).stream({ messages: user })).catch((e: unknown) => e);
    assert.equal(server.seen[0], `Bearer ${key}`, 'the request carried the key');
    assert.ok(err instanceof RequestError, String(err));
    assert.equal(err.kind, 'http');
    assert.equal(err.status, 401);
    for (const text of [err.message, err.describe(), String(err), err.stack ?? '']) {
      assert.ok(!text.includes(key), `the key leaked: ${text}`);
    }
    assert.ok(err.message.includes(REDACTED), 'the provider\'s words are kept, the key replaced');
  });

  for (const status of [400, 500]) {
    it(`HTTP ${status}: the description shown in the chat keeps the provider's message without the key`, async () => {
      await server.close();
      server = await startEchoServer(status);
      const err = await finalReply(modelAt(server.baseUrl, { apiKey: key }).stream({ messages: user })).catch((e: unknown) => e);
      assert.ok(err instanceof RequestError);
      assert.match(err.describe(), /Incorrect API key provided/);
      assert.ok(!err.describe().includes(key), err.describe());
    });
  }

  it('complete fails the same way: an http RequestError that keeps the provider\'s words and drops the key', async () => {
    const err = await modelAt(server.baseUrl, { apiKey: key }).complete(user).catch((e: unknown) => e);
    assert.equal(server.seen[0], `Bearer ${key}`, 'the request carried the key');
    assert.ok(err instanceof RequestError, String(err));
    assert.equal(err.kind, 'http');
    assert.equal(err.status, 401);
    for (const text of [err.message, err.describe(), String(err), err.stack ?? '']) {
      assert.ok(!text.includes(key), `the key leaked: ${text}`);
    }
    assert.match(err.message, /Incorrect API key provided/);
    assert.ok(err.message.includes(REDACTED));
  });
});
