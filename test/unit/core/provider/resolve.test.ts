import * as assert from 'node:assert/strict';
import { finalReply } from '../../../../src/core/provider/finalReply';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { resolveCliModel } from '../../../../src/cli/model';
import { silentLogger } from '../../../../src/core/log';
import { demoScenario } from '../../../../src/core/offline/demoScenario';
import { parseScenario } from '../../../../src/core/offline/scenario';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { DEFAULT_POLICY, type ChatModel } from '../../../../src/core/provider/chatModel';
import { RequestError } from '../../../../src/core/provider/requestError';
import { ModelResolutionError, ModelResolver, type ModelSettings } from '../../../../src/core/provider/resolve';
import { resolveCandorSettings, type Inspected } from '../../../../src/core/settings/resolve';
import { Providers } from '../../../../src/host/provider/provider';
import { startEchoServer, type EchoServer } from './echoServer';

const countTokens = (text: string): number => Math.ceil(text.length / 4);
const hello = [{ role: 'user' as const, content: 'hi' }];

function answering(text: string): Promise<OfflineServer> {
  const scenario = parseScenario({ rules: [{ respond: { text } }] });
  return startOfflineServer({ scenario: () => scenario, countTokens });
}

describe('model resolution: one resolver for the extension and the CLI', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  function resolver(): ModelResolver {
    const r = new ModelResolver({ scenario: () => demoScenario, countTokens });
    closers.push(() => r.close());
    return r;
  }

  async function server(text: string): Promise<OfflineServer> {
    const s = await answering(text);
    closers.push(() => s.close());
    return s;
  }

  async function echo(): Promise<EchoServer> {
    const s = await startEchoServer(401);
    closers.push(() => s.close());
    return s;
  }

  it('unchanged settings give the same ChatModel; another model or policy on the same endpoint gives a new one', async () => {
    const s = await server('a');
    const r = resolver();
    const settings: ModelSettings = { baseUrl: s.baseUrl, apiKey: 'key-one-12345', model: 'm', policy: DEFAULT_POLICY };
    const first = await r.resolve(settings);
    assert.equal(await r.resolve({ ...settings, policy: { ...DEFAULT_POLICY } }), first, 'equal settings, not the same object: still the same model');
    const other = await r.resolve({ ...settings, model: 'n' });
    assert.notEqual(other, first);
    assert.deepEqual(other.identity, { provider: first.identity.provider, model: 'n' });
    const slower = await r.resolve({ ...settings, model: 'n', policy: { ...DEFAULT_POLICY, idleTimeoutMs: 90_000 } });
    assert.notEqual(slower, other);
    assert.equal(slower.policy.idleTimeoutMs, 90_000);
  });

  it('a key change gives a new ChatModel, and the new key is what the provider receives', async () => {
    const s = await echo();
    const r = resolver();
    const settings: ModelSettings = { baseUrl: s.baseUrl, apiKey: 'key-one-12345', model: 'm', policy: DEFAULT_POLICY };
    const before = await r.resolve(settings);
    await before.complete(hello).catch(() => undefined);
    const after = await r.resolve({ ...settings, apiKey: 'key-two-67890' });
    assert.notEqual(after, before);
    await after.complete(hello).catch(() => undefined);
    assert.deepEqual(s.seen, ['Bearer key-one-12345', 'Bearer key-two-67890']);
  });

  it('a base URL change gives a new ChatModel that talks to the new endpoint', async () => {
    const [a, b] = [await server('from a'), await server('from b')];
    const r = resolver();
    const first = await r.resolve({ baseUrl: a.baseUrl, apiKey: 'k', model: 'm', policy: DEFAULT_POLICY });
    assert.equal(await first.complete(hello), 'from a');
    const second = await r.resolve({ baseUrl: b.baseUrl, apiKey: 'k', model: 'm', policy: DEFAULT_POLICY });
    assert.notEqual(second, first);
    assert.equal(await second.complete(hello), 'from b');
    assert.notEqual(second.identity.provider, first.identity.provider, 'another port is another provider slug');
  });

  it('without a base URL the offline server starts once, never sees the key, and stops on close', async () => {
    const started: string[] = [];
    const scenario = parseScenario({ rules: [{ respond: { text: 'offline reply' } }] });
    const r = new ModelResolver({ scenario: () => scenario, countTokens, onStart: (url) => started.push(url) });
    closers.push(() => r.close());
    const first = await r.resolve({ baseUrl: '', apiKey: 'key-one-12345', model: '', policy: DEFAULT_POLICY });
    assert.deepEqual(first.identity, { provider: 'offline', model: 'candor-offline' });
    assert.equal(await r.resolve({ baseUrl: '', apiKey: 'key-two-67890', model: '', policy: DEFAULT_POLICY }), first, 'a key change is no change offline');
    const reply = await finalReply(first.stream({ messages: hello }));
    assert.equal(reply.content, 'offline reply');
    assert.ok(reply.usage?.promptTokens, 'the offline provider reports usage');
    const other = await r.resolve({ baseUrl: '', apiKey: '', model: 'x', policy: DEFAULT_POLICY });
    assert.deepEqual(other.identity, { provider: 'offline', model: 'x' });
    assert.equal(started.length, 1, 'one server for every model');

    await r.close();
    const err = await other.complete(hello).catch((e: unknown) => e);
    assert.ok(err instanceof RequestError && err.kind === 'connection', String(err));
  });

  it('a base URL without a model is refused before any request', async () => {
    const err = await resolver().resolve({ baseUrl: 'http://127.0.0.1:9/v1', apiKey: '', model: '', policy: DEFAULT_POLICY }).catch((e: unknown) => e);
    assert.ok(err instanceof ModelResolutionError && err.kind === 'no-model', String(err));
  });

  describe("the host's Providers", () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../../package.json'), 'utf8')) as {
      contributes: { configuration: { properties: Record<string, { default?: unknown }> } };
    };
    const user: Record<string, unknown> = {};
    let key = 'key-one-12345';
    const settings = () => resolveCandorSettings({
      inspect: <T>(name: string) => ({ defaultValue: manifest.contributes.configuration.properties[`candor.${name}`]?.default, globalValue: user[name] }) as Inspected<T>,
      trusted: true,
      confirmedUrls: [],
    });

    function providers(): Providers {
      const p = new Providers(settings, async () => key, async (text) => countTokens(text), silentLogger);
      closers.push(async () => p.dispose());
      return p;
    }

    beforeEach(() => {
      for (const name of Object.keys(user)) delete user[name];
      key = 'key-one-12345';
    });

    it('hands out the same ChatModel while base URL, key and model stay the same, a new one after a base URL or key change', async () => {
      const [a, b] = [await echo(), await echo()];
      Object.assign(user, { baseUrl: a.baseUrl, model: 'm' });
      const p = providers();
      const first = await p.handle();
      assert.equal(await p.handle(), first, 'the next request reuses it');
      assert.deepEqual(first.identity, p.identity());
      assert.deepEqual(first.policy, { idleTimeoutMs: 60_000, firstTokenTimeoutMs: 300_000, maxRetries: 2, maxOutputTokens: 4096 }, 'the manifest defaults');

      key = 'key-two-67890';
      const rekeyed = await p.handle();
      assert.notEqual(rekeyed, first);
      assert.equal(await p.handle(), rekeyed);
      await rekeyed.complete(hello).catch(() => undefined);
      assert.deepEqual(a.seen, ['Bearer key-two-67890']);

      user.baseUrl = b.baseUrl;
      const moved = await p.handle();
      assert.notEqual(moved, rekeyed);
      await p.complete(hello).catch(() => undefined);
      assert.deepEqual(b.seen, ['Bearer key-two-67890'], 'complete goes to the endpoint in force');

      user['request.maxRetries'] = 0;
      const strict = await p.handle();
      assert.notEqual(strict, moved, 'a policy change takes effect on the next request');
      assert.equal(strict.policy.maxRetries, 0);
    });

    it('with no base URL it is the offline provider, through the same adapter', async () => {
      const p = providers();
      const model = await p.handle();
      assert.deepEqual(model.identity, { provider: 'offline', model: 'candor-offline' });
      assert.equal(await p.handle(), model);
      const reply = await finalReply(model.stream({ messages: hello }));
      assert.equal(reply.finishReason, 'stop');
      assert.deepEqual(await p.listModels(AbortSignal.timeout(5000)), ['candor-offline']);
    });

    it('the CLI resolves the same identity and policy for the same endpoint and model', async () => {
      const s = await server('cli');
      Object.assign(user, { baseUrl: s.baseUrl, model: 'm' });
      const host: ChatModel = await providers().handle();
      const cli = await resolveCliModel({ baseUrl: s.baseUrl, model: 'm' }, 'key-one-12345');
      closers.push(() => cli.close());
      assert.deepEqual(cli.model.identity, host.identity);
      assert.deepEqual({ ...cli.model.policy, maxOutputTokens: 4096 }, host.policy, 'the CLI has the defaults, and no reply cap');
      assert.equal(await cli.model.complete(hello), 'cli');
    });
  });
});
