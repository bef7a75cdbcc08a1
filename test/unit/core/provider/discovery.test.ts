import * as assert from 'node:assert/strict';
import { finalReply } from '../../../../src/core/provider/finalReply';
import { silentLogger } from '../../../../src/core/log';
import { demoScenario } from '../../../../src/core/offline/demoScenario';
import { DEFAULT_POLICY } from '../../../../src/core/provider/chatModel';
import { discoverLocalServers, localChoices } from '../../../../src/core/provider/discovery';
import type { LocalServer, ServerKind } from '../../../../src/core/provider/localServers';
import { ModelResolver } from '../../../../src/core/provider/resolve';
import { resolveCandorSettings, type Inspected } from '../../../../src/core/settings/resolve';
import { Providers } from '../../../../src/host/provider/provider';
import { waitFor } from '../../../helpers/waitFor';
import { closedPort, startStall, startStandIn, startWebPage, type StandIn } from './standIns';

const countTokens = (text: string): number => Math.ceil(text.length / 4);
const hello = [{ role: 'user' as const, content: 'hi' }];
const KEY = 'sk-user-key-that-must-stay-home-1234';

describe('local model servers: discovery on the ports of candor.localServers (stand-ins on loopback)', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  async function standIn(kind: ServerKind, models?: string[]): Promise<StandIn> {
    const s = await startStandIn(kind, { models });
    closers.push(() => s.close());
    return s;
  }

  const listed = (s: StandIn, sendKey = false): LocalServer => ({ port: s.port, kind: s.kind, sendKey });

  it('finds each kind on its port with its models, in the order of the setting, and nothing on other ports', async () => {
    const ollama = await standIn('ollama', ['llama3.2:latest', 'qwen2.5-coder:7b']);
    const lmstudio = await standIn('lmstudio', ['qwen2-vl-7b-instruct']);
    const llamacpp = await standIn('llamacpp', ['gguf-model']);
    const vllm = await standIn('vllm', ['meta-llama/Llama-3.1-8B-Instruct']);
    const page = await startWebPage();
    closers.push(() => page.close());
    const nothing = await closedPort();

    const servers: LocalServer[] = [
      listed(vllm), { port: nothing, kind: 'ollama', sendKey: false }, listed(ollama), { port: page.port, kind: 'llamacpp', sendKey: false }, listed(llamacpp), listed(lmstudio),
    ];
    const found = await discoverLocalServers(servers);
    assert.deepEqual(found.map((d) => [d.server.kind, d.server.port, d.baseUrl, d.models]), [
      ['vllm', vllm.port, `http://127.0.0.1:${vllm.port}/v1`, ['meta-llama/Llama-3.1-8B-Instruct']],
      ['ollama', ollama.port, `http://127.0.0.1:${ollama.port}/v1`, ['llama3.2:latest', 'qwen2.5-coder:7b']],
      ['llamacpp', llamacpp.port, `http://127.0.0.1:${llamacpp.port}/v1`, ['gguf-model']],
      ['lmstudio', lmstudio.port, `http://127.0.0.1:${lmstudio.port}/v1`, ['qwen2-vl-7b-instruct']],
    ]);
    for (const s of [ollama, lmstudio, llamacpp, vllm]) assert.deepEqual(s.seen.map((r) => `${r.method} ${r.path}`), ['GET /v1/models'], 'one GET, nothing else');
  });

  it('a port that accepts and never answers costs the picker the timeout, not more', async () => {
    const stall = await startStall();
    closers.push(() => stall.close());
    const ollama = await standIn('ollama');
    // Each port's timer is one the test runs out, once both ports have the request.
    const timers: Array<{ ms: number; runOut: () => void }> = [];
    const timeout = (ms: number): AbortSignal => {
      const controller = new AbortController();
      timers.push({ ms, runOut: () => controller.abort(new DOMException('timed out', 'TimeoutError')) });
      return controller.signal;
    };
    let settled = false;
    const finding = discoverLocalServers([{ port: stall.port, kind: 'vllm', sendKey: false }, listed(ollama)], { timeoutMs: 200, timeout });
    void finding.finally(() => { settled = true; });
    await waitFor('both ports asked', () => stall.requests() === 1 && ollama.seen.length === 1);
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(settled, false, 'the picker waits for the stalled port until its timer runs out');
    assert.deepEqual(timers.map((t) => t.ms), [200, 200], 'every port asked at once, each with the timeout');
    timers[0]?.runOut();
    const found = await finding;
    assert.deepEqual(found.map((d) => d.server.port), [ollama.port]);
  });

  it('the picker leaves out the server the settings already use, and says no key is sent to the others', async () => {
    const ollama = await standIn('ollama', ['llama3.2']);
    const vllm = await standIn('vllm', ['m']);
    const found = await discoverLocalServers([listed(ollama), listed(vllm, true)]);
    assert.deepEqual(localChoices(found, `http://localhost:${ollama.port}/v1`), [
      { model: 'm', name: 'm', baseUrl: vllm.baseUrl, description: `vLLM on 127.0.0.1:${vllm.port}`, detail: 'your key is sent' },
    ]);
    assert.deepEqual(localChoices(found, 'https://api.openai.com/v1').map((c) => [c.description, c.detail]), [
      [`Ollama on 127.0.0.1:${ollama.port}`, 'no key sent'],
      [`vLLM on 127.0.0.1:${vllm.port}`, 'your key is sent'],
    ]);
  });

  describe('no Authorization header reaches a discovered server', () => {
    function resolver(): ModelResolver {
      const r = new ModelResolver({ scenario: () => demoScenario, countTokens });
      closers.push(() => r.close());
      return r;
    }

    it('the trap: the same server, not listed in candor.localServers, receives the key like any provider', async () => {
      const server = await standIn('ollama');
      const model = await resolver().resolve({ baseUrl: server.baseUrl, apiKey: KEY, model: 'local-model', policy: DEFAULT_POLICY, localServers: [] });
      await finalReply(model.stream({ messages: hello }));
      assert.deepEqual(server.seen.map((r) => r.authorization), [`Bearer ${KEY}`]);
    });

    it('listed, it gets no header on requests, model lists or probes, even with OPENAI_API_KEY set', async () => {
      const server = await standIn('ollama');
      const before = process.env.OPENAI_API_KEY;
      process.env.OPENAI_API_KEY = `env-${KEY}`;
      closers.push(async () => {
        if (before === undefined) delete process.env.OPENAI_API_KEY;
        else process.env.OPENAI_API_KEY = before;
      });
      const settings = { baseUrl: server.baseUrl, apiKey: KEY, model: 'local-model', policy: DEFAULT_POLICY, localServers: [listed(server)] };
      const r = resolver();
      const model = await r.resolve(settings);
      const reply = await finalReply(model.stream({ messages: hello }));
      assert.equal(reply.content, 'hello from a local server');
      await model.complete(hello).catch(() => undefined);
      assert.deepEqual(await r.listModels(settings, AbortSignal.timeout(5000)), ['local-model']);
      await discoverLocalServers([listed(server)], { authorization: `Bearer ${KEY}` });
      assert.ok(server.seen.length >= 4, `${server.seen.length} requests`);
      assert.deepEqual(server.seen.filter((r) => r.authorization !== ''), [], 'no request carried an Authorization header');
    });

    it('through the host: pick, request, window reads — the key never arrives; sendKey in the user\'s settings sends it', async () => {
      const server = await standIn('ollama');
      const user: Record<string, unknown> = { baseUrl: server.baseUrl, model: 'local-model', localServers: [{ port: server.port, kind: 'ollama' }] };
      const workspace: Record<string, unknown> = {};
      const settings = () => resolveCandorSettings({
        inspect: <T>(name: string) => ({ globalValue: user[name], workspaceValue: workspace[name] }) as Inspected<T>,
        trusted: true,
        confirmedUrls: [],
      });
      const providers = new Providers(settings, async () => KEY, async (t) => countTokens(t), silentLogger);
      closers.push(async () => providers.dispose());

      assert.equal((await providers.discover()).length, 1);
      const model = await providers.handle();
      await finalReply(model.stream({ messages: hello }));
      assert.ok(server.seen.some((r) => r.path === '/api/ps'), 'the window was read');
      assert.deepEqual(server.seen.filter((r) => r.authorization !== ''), []);

      // A workspace cannot turn the key on for a listed port.
      workspace.localServers = [{ port: server.port, kind: 'ollama', sendKey: true }];
      await finalReply((await providers.handle()).stream({ messages: hello }));
      assert.deepEqual(server.seen.filter((r) => r.authorization !== ''), []);

      // The user's own settings can.
      user.localServers = [{ port: server.port, kind: 'ollama', sendKey: true }];
      delete workspace.localServers;
      const seenBefore = server.seen.length;
      await finalReply((await providers.handle()).stream({ messages: hello }));
      assert.deepEqual([...new Set(server.seen.slice(seenBefore).map((r) => r.authorization))], [`Bearer ${KEY}`]);
    });
  });
});
