import * as assert from 'node:assert/strict';
import { finalReply } from '../../../../src/core/provider/finalReply';
import { gaugeTooltip, type GaugeState } from '../../../../src/core/context/gauge';
import { silentLogger } from '../../../../src/core/log';
import type { ServerKind } from '../../../../src/core/provider/localServers';
import {
  llamaCppWindow, lmStudioV0Window, lmStudioWindow, ollamaWindow, readServerFacts, ServerWindows, vllmWindow, windowInUse,
} from '../../../../src/core/provider/serverWindow';
import { resolveCandorSettings, type Inspected } from '../../../../src/core/settings/resolve';
import { Providers } from '../../../../src/host/provider/provider';
import { closedPort, startStandIn, type StandIn } from './standIns';

const countTokens = (text: string): number => Math.ceil(text.length / 4);
const hello = [{ role: 'user' as const, content: 'hi' }];
const read = async (s: StandIn, model: string): Promise<number | undefined> => (await readServerFacts(s, model, { signal: AbortSignal.timeout(2000) })).window;

describe('the context window a local server runs with (stand-ins on loopback)', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function standIn(kind: ServerKind, options: Parameters<typeof startStandIn>[1] = {}): Promise<StandIn> {
    const s = await startStandIn(kind, options);
    closers.push(() => s.close());
    return s;
  }

  for (const [kind, where] of [
    ['ollama', '/api/ps context_length'],
    ['llamacpp', '/props default_generation_settings.n_ctx'],
    ['vllm', '/v1/models max_model_len'],
    ['lmstudio', '/api/v1/models loaded_instances[].config.context_length'],
  ] as const) {
    it(`${kind}: read from ${where}, not the trained maximum`, async () => {
      const s = await standIn(kind, { models: ['the-model', 'another'], window: 6144, trained: 131072 });
      s.loaded = true;
      assert.equal(await read(s, 'the-model'), 6144);
    });
  }

  it('LM Studio 0.3 (v0 REST API only): loaded_context_length of the loaded model', async () => {
    const s = await standIn('lmstudio', { models: ['qwen'], window: 8192, lmStudioV0Only: true });
    assert.equal(await read(s, 'qwen'), undefined, 'not loaded: no window, and never max_context_length');
    s.loaded = true;
    assert.equal(await read(s, 'qwen'), 8192);
    assert.deepEqual(s.seen.map((r) => r.path), ['/api/v1/models', '/api/v0/models', '/api/v1/models', '/api/v0/models']);
  });

  it('Ollama reports nothing before the model is loaded, and the loaded window after', async () => {
    const s = await standIn('ollama', { models: ['llama3.2:latest'], window: 4096 });
    assert.equal(await read(s, 'llama3.2:latest'), undefined);
    s.loaded = true;
    assert.equal(await read(s, 'llama3.2'), 4096, 'llama3.2 and llama3.2:latest are one model');
    assert.equal(await read(s, 'qwen'), undefined, 'another model is not the one loaded');
  });

  it('answers that are not the documented shape give no window', () => {
    for (const body of [undefined, null, 'text', [], { models: 'x' }, { models: [{ model: 'm', context_length: '4096' }] }, { models: [{ model: 'm', context_length: -1 }] }]) {
      assert.equal(ollamaWindow(body, 'm'), undefined, JSON.stringify(body));
    }
    assert.equal(llamaCppWindow({ n_ctx: 4096 }), undefined, 'the field is under default_generation_settings');
    assert.equal(vllmWindow({ data: [{ id: 'other', max_model_len: 4096 }] }, 'm'), undefined);
    assert.equal(lmStudioWindow({ models: [{ key: 'm', max_context_length: 32768, loaded_instances: [] }] }, 'm'), undefined, 'not loaded');
    assert.equal(lmStudioV0Window({ data: [{ id: 'm', state: 'not-loaded', max_context_length: 32768 }] }, 'm'), undefined);
    assert.equal(lmStudioWindow({ models: [{ key: 'm', loaded_instances: [{ id: 'm:2', config: { context_length: 2048 } }, { id: 'm', config: { context_length: 9000 } }] }] }, 'm'), 9000);
  });

  it('a generic server reports no window; a dead port reads as none, never an error, and is not remembered as an answer', async () => {
    const s = await standIn('openai');
    assert.equal(await read(s, 'local-model'), undefined);
    const windows = new ServerWindows();
    await s.close();
    assert.equal(await windows.refresh({ kind: 'ollama', port: s.port }, 'm'), undefined);
    assert.equal(windows.known({ kind: 'ollama', port: s.port }, 'm'), false, 'a failed read is asked again at the next request');
  });

  it('the window is the smaller of the user\'s candor.contextWindow and the server\'s; the default yields to the server', () => {
    assert.deepEqual(windowInUse({ tokens: 32000, explicit: true }, 4096), { tokens: 4096, source: 'server', server: 4096, setting: 32000 });
    assert.deepEqual(windowInUse({ tokens: 16000, explicit: true }, 32768), { tokens: 16000, source: 'settings', server: 32768, setting: 16000 });
    assert.deepEqual(windowInUse({ tokens: 128000, explicit: false }, 4096), { tokens: 4096, source: 'server', server: 4096 });
    assert.deepEqual(windowInUse({ tokens: 128000, explicit: false }, undefined), { tokens: 128000, source: 'default' });
  });

  describe('through the host', () => {
    function providersFor(user: Record<string, unknown>): Providers {
      const settings = () => resolveCandorSettings({
        inspect: <T>(name: string) => ({ defaultValue: name === 'contextWindow' ? 128000 : undefined, globalValue: user[name] }) as Inspected<T>,
        trusted: true,
        confirmedUrls: [],
      });
      const p = new Providers(settings, async () => undefined, async (t) => countTokens(t), silentLogger);
      closers.push(async () => p.dispose());
      return p;
    }

    it('Ollama on the first try: the default until the first reply loads the model, then the server\'s window', async () => {
      const s = await standIn('ollama', { models: ['llama3.2'], window: 4096 });
      const p = providersFor({ baseUrl: s.baseUrl, model: 'llama3.2', localServers: [{ port: s.port, kind: 'ollama' }] });
      assert.deepEqual(p.contextWindow(), { tokens: 128000, source: 'default' });
      const model = await p.handle();
      assert.deepEqual(p.contextWindow(), { tokens: 128000, source: 'default' }, 'asked before the first request: not loaded yet');
      await finalReply(model.stream({ messages: hello }));
      assert.deepEqual(p.contextWindow(), { tokens: 4096, source: 'server', server: 4096 }, 'read again once the reply completed');
      assert.equal(await p.handle(), model, 'the same model object while nothing changed');
    });

    it('a contextWindow the user set larger than the server\'s yields to it, a smaller one wins, and the tooltip names both', async () => {
      const s = await standIn('vllm', { models: ['m'], window: 16384 });
      const user: Record<string, unknown> = { baseUrl: s.baseUrl, model: 'm', localServers: [{ port: s.port, kind: 'vllm' }] };
      const p = providersFor(user);
      assert.deepEqual(await p.refreshWindow(), { tokens: 16384, source: 'server', server: 16384 });
      user.contextWindow = 32000;
      assert.deepEqual(p.contextWindow(), { tokens: 16384, source: 'server', server: 16384, setting: 32000 });
      user.contextWindow = 8000;
      assert.deepEqual(p.contextWindow(), { tokens: 8000, source: 'settings', server: 16384, setting: 8000 });

      const gauge: GaugeState = { projected: 1000, window: 32000, thresholdPercent: 80, anchored: true, warning: false, estimate: 1000 };
      assert.ok(!gaugeTooltip(gauge).includes('Window:'), 'no source, no line');
      assert.match(gaugeTooltip({ ...gauge, windowSource: 'settings' }), /^Window: 32,000 tokens, from candor\.contextWindow$/m);
      assert.match(gaugeTooltip({ ...gauge, window: 16384, windowSource: 'server' }), /^Window: 16,384 tokens, as the server reports it runs$/m);
      assert.match(gaugeTooltip({ ...gauge, window: 128000, windowSource: 'default' }), /^Window: 128,000 tokens, the default of candor\.contextWindow$/m);
      assert.match(gaugeTooltip({ ...gauge, window: 16384, windowSource: 'server', windowOther: { setting: 32000, server: 16384 } }), /^Window: 16,384 tokens, as the server reports it runs \(smaller than candor\.contextWindow, 32,000\)$/m);
      assert.match(gaugeTooltip({ ...gauge, window: 8000, windowSource: 'settings', windowOther: { setting: 8000, server: 16384 } }), /^Window: 8,000 tokens, from candor\.contextWindow \(the server runs 16,384\)$/m);
    });

    it('a server that answers with no family is asked once, not again at every request', async () => {
      const s = await standIn('ollama', { models: ['llama3.2'] });
      const p = providersFor({ baseUrl: s.baseUrl, model: 'llama3.2', localServers: [{ port: s.port, kind: 'ollama' }] });
      for (let i = 0; i < 3; i++) await finalReply((await p.handle()).stream({ messages: hello }));
      assert.equal(p.familyFacts('llama3.2')?.family, undefined, 'the server named no family Candor knows');
      assert.equal(s.seen.filter((r) => r.path === '/api/show').length, 1, 'three requests, one question');
    });

    it('a server that was not up is asked again at the next request', async () => {
      const port = await closedPort();
      const p = providersFor({ baseUrl: `http://127.0.0.1:${port}/v1`, model: 'llama3.2', localServers: [{ port, kind: 'ollama' }] });
      await p.handle();
      const s = await standIn('ollama', { models: ['llama3.2'], port });
      await p.handle();
      assert.equal(s.seen.filter((r) => r.path === '/api/show').length, 1, 'asked once it is up');
    });

    it('a provider that is not a listed local server is never asked for a window', async () => {
      const s = await standIn('vllm', { models: ['m'], window: 16384 });
      const p = providersFor({ baseUrl: s.baseUrl, model: 'm', localServers: [] });
      await finalReply((await p.handle()).stream({ messages: hello }));
      assert.deepEqual(p.contextWindow(), { tokens: 128000, source: 'default' });
      assert.deepEqual(s.seen.map((r) => `${r.method} ${r.path}`), ['POST /v1/chat/completions']);
    });
  });
});
