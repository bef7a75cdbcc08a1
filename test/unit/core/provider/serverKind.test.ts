import * as assert from 'node:assert/strict';
import { discoverLocalServers, identifyServer, localChoices } from '../../../../src/core/provider/discovery';
import { SERVER_KINDS, type ServerKind } from '../../../../src/core/provider/localServers';
import { detectKind, modelList } from '../../../../src/core/provider/serverKind';
import { llamaOrSkip, startLlama, type LlamaServer } from '../../../helpers/llamaServer';
import { closedPort, startJsonApi, startLoginRedirect, startStandIn, startWebPage } from './standIns';

describe('local model servers: what answers on a port, and which kind it is', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  describe('the decisions, on answers as each server gives them', () => {
    const list = (owned_by: string, extra: object = {}): unknown => ({ object: 'list', data: [{ id: 'm', object: 'model', owned_by, ...extra }] });

    it('a model list is the OpenAI shape, and nothing else is', () => {
      assert.deepEqual(modelList(list('llamacpp', { aliases: ['m', 'tiny'] })), [{ id: 'm', aliases: ['m', 'tiny'] }]);
      assert.deepEqual(modelList({ object: 'list', data: [] }), [], 'a server with no model loaded is still a model server');
      for (const body of [{ data: [{ id: 'user-1' }] }, { object: 'list', data: [{ id: 1 }] }, { object: 'list', data: {} }, 'Not found.', null, [{ id: 'm' }]]) {
        assert.equal(modelList(body), undefined, JSON.stringify(body));
      }
    });

    it('each kind by what only it says of itself; anything else is generic', () => {
      const cases: Array<[ServerKind | undefined, Parameters<typeof detectKind>[0]]> = [
        ['llamacpp', { list: list('llamacpp') }],
        ['llamacpp', { list: list('someone'), serverHeader: 'llama.cpp' }],
        ['llamacpp', { list: list('someone'), props: { default_generation_settings: { n_ctx: 4096 } } }],
        ['vllm', { list: list('vllm') }],
        ['vllm', { list: list('someone', { max_model_len: 8192 }) }],
        ['ollama', { list: list('library'), ollamaVersion: { version: '0.6.5' } }],
        ['lmstudio', { list: list('organization_owner') }],
        ['lmstudio', { list: list('someone'), lmStudioModels: { object: 'list', data: [{ id: 'm', state: 'not-loaded' }] } }],
        [undefined, { list: list('library') }],
        [undefined, { list: list('system'), serverHeader: 'uvicorn', ollamaVersion: 'Not found', props: { error: 'no' } }],
      ];
      for (const [kind, evidence] of cases) assert.equal(detectKind(evidence), kind, JSON.stringify(evidence));
    });
  });

  describe('"Add a port…": identifyServer over real HTTP', () => {
    it('finds the kind of each server (stand-ins that answer as each documents)', async () => {
      for (const kind of SERVER_KINDS) {
        const server = await startStandIn(kind, { models: ['m1', 'm2'] });
        closers.push(() => server.close());
        const found = await identifyServer(server.port);
        assert.deepEqual(found, { kind, models: [{ id: 'm1', aliases: [] }, { id: 'm2', aliases: [] }] }, kind);
      }
    });

    it('never takes another program for a model server, and says what answered instead', async () => {
      const page = await startWebPage();
      const api = await startJsonApi();
      const login = await startLoginRedirect();
      closers.push(() => page.close(), () => api.close(), () => login.close());
      assert.deepEqual(await identifyServer(page.port), { failure: 'an answer that is not JSON' });
      assert.deepEqual(await identifyServer(api.port), { failure: 'JSON that is not a model list' });
      assert.deepEqual(await identifyServer(login.port), { failure: 'a redirect (HTTP 302), as a web app\'s login page answers' });
      assert.deepEqual(await identifyServer(await closedPort()), { failure: 'no connection (ECONNREFUSED)' });
      // The same programs on listed ports are not offered by Select Model either.
      const listed = [page, api, login].map((p) => ({ port: p.port, kind: 'llamacpp' as const, sendKey: false }));
      assert.deepEqual(await discoverLocalServers(listed), []);
    });

    it('the trap is armed: a looser reading (any JSON with a data list) would have offered the JSON API as a model server', async () => {
      const api = await startJsonApi();
      closers.push(() => api.close());
      const body = (await (await fetch(`http://127.0.0.1:${api.port}/v1/models`)).json()) as { data?: unknown };
      assert.ok(Array.isArray(body.data) && body.data.length > 0, 'it answers 200 with a data list of entries with an id');
    });
  });

  describe('against a real llama.cpp server', function () {
    this.timeout(120_000);
    let llama: LlamaServer | undefined;
    before(async function () {
      const found = llamaOrSkip(this);
      llama = await startLlama(found, { ctx: 2048, model: 'toolcall' });
    });
    after(async () => llama?.stop());

    it('is llama.cpp, names its model by the file\'s path, and the picker shows the file\'s base name with the path beneath', async () => {
      const server = llama as LlamaServer;
      const found = await identifyServer(server.port);
      assert.ok('kind' in found, JSON.stringify(found));
      assert.equal(found.kind, 'llamacpp');
      assert.deepEqual(found.models.map((m) => m.id), [server.modelPath]);
      const discovered = await discoverLocalServers([{ port: server.port, kind: 'openai', sendKey: false }], { timeoutMs: 5000 });
      assert.equal(discovered[0]?.kind, 'llamacpp', 'listed as a generic port, it still says llama.cpp');
      const [choice] = localChoices(discovered, '');
      assert.deepEqual(choice && { name: choice.name, description: choice.description, detail: choice.detail }, {
        name: 'tiny-qwen3tok-toolcall.gguf',
        description: `llama.cpp on 127.0.0.1:${server.port}`,
        detail: `no key sent · ${server.modelPath}`,
      });
    });
  });
});
