import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServerKind } from '../../../../src/core/provider/localServers';

/**
 * Small stand-ins for the local servers people run, on loopback ports the
 * system picks: each serves its model list (with the `owned_by` each server
 * writes there), the endpoint where that server keeps the context window it
 * runs with, what tells it from the others (Ollama's `/api/version`,
 * llama.cpp's `Server` header), and a streamed chat completion. Shapes follow
 * each server's documentation (see the README's "Local model servers").
 * Every request is recorded with its Authorization header.
 */
export interface StandIn {
  readonly kind: ServerKind;
  readonly port: number;
  readonly baseUrl: string;
  /** Every request: method, path and the Authorization header ('' when none was sent). */
  readonly seen: Array<{ method: string; path: string; authorization: string }>;
  /** Ollama and LM Studio load a model on its first request; the others have it loaded from the start. */
  loaded: boolean;
  close(): Promise<void>;
}

export interface StandInOptions {
  readonly models?: readonly string[];
  /** The window the server runs with. */
  readonly window?: number;
  /** What the model was trained for (LM Studio's max_context_length): never the window in use. */
  readonly trained?: number;
  /** LM Studio 0.3 only has the v0 REST API. */
  readonly lmStudioV0Only?: boolean;
  /** The prompt_tokens its replies report (12 by default): Ollama reports the prompt it kept after cutting it to its window. */
  readonly promptTokens?: number;
  /** Listen on this port (a server that starts after Candor asked it). */
  readonly port?: number;
}

/** What each server writes as `owned_by` in its model list. */
const OWNED_BY: Readonly<Record<ServerKind, string>> = {
  ollama: 'library',
  lmstudio: 'organization_owner',
  llamacpp: 'llamacpp',
  vllm: 'vllm',
  openai: 'system',
};

export async function startStandIn(kind: ServerKind, options: StandInOptions = {}): Promise<StandIn> {
  const models = options.models ?? ['local-model'];
  const window = options.window ?? 4096;
  const trained = options.trained ?? 131072;
  const seen: StandIn['seen'] = [];
  const state = { loaded: kind === 'llamacpp' || kind === 'vllm' || kind === 'openai' };

  const routes: Record<string, () => unknown> = {
    'GET /v1/models': () => ({
      object: 'list',
      data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: OWNED_BY[kind], ...(kind === 'vllm' ? { max_model_len: window, root: id } : {}),
        ...(kind === 'llamacpp' ? { meta: { n_ctx_train: trained, n_vocab: 128256 } } : {}) })),
    }),
  };
  if (kind === 'ollama') {
    routes['GET /api/version'] = () => ({ version: '0.6.5' });
    // An architecture with no vocabulary size: no family Candor has a tokenizer of.
    routes['POST /api/show'] = () => ({ details: { format: 'gguf', family: 'llama' }, model_info: { 'general.architecture': 'llama' } });
    routes['GET /api/ps'] = () => ({
      models: state.loaded ? [{ name: `${models[0]}`, model: `${models[0]}`, size: 1, details: { format: 'gguf' }, expires_at: '2099-01-01T00:00:00Z', size_vram: 1, context_length: window }] : [],
    });
  }
  if (kind === 'llamacpp') {
    routes['GET /props'] = () => ({ default_generation_settings: { id: 0, n_ctx: window, params: {} }, total_slots: 1, model_path: `/models/${models[0]}.gguf` });
  }
  if (kind === 'lmstudio') {
    if (!options.lmStudioV0Only) {
      routes['GET /api/v1/models'] = () => ({
        models: models.map((key, i) => ({
          type: 'llm', key, display_name: key, max_context_length: trained,
          loaded_instances: state.loaded && i === 0 ? [{ id: key, config: { context_length: window } }] : [],
        })),
      });
    }
    routes['GET /api/v0/models'] = () => ({
      object: 'list',
      data: models.map((id, i) => ({
        id, object: 'model', type: 'llm', state: state.loaded && i === 0 ? 'loaded' : 'not-loaded', max_context_length: trained,
        ...(state.loaded && i === 0 ? { loaded_context_length: window } : {}),
      })),
    });
  }

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    seen.push({ method: req.method ?? '', path: url.pathname, authorization: req.headers.authorization ?? '' });
    req.resume();
    req.on('end', () => {
      if (req.method === 'POST' && url.pathname === '/v1/chat/completions') {
        state.loaded = true;
        streamReply(res, models[0] ?? 'm', options.promptTokens ?? 12);
        return;
      }
      const route = routes[`${req.method} ${url.pathname}`];
      if (!route) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'not found' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', ...(kind === 'llamacpp' ? { server: 'llama.cpp' } : {}) });
      res.end(JSON.stringify(route()));
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    kind,
    port,
    baseUrl: `http://127.0.0.1:${port}/v1`,
    seen,
    get loaded() { return state.loaded; },
    set loaded(value: boolean) { state.loaded = value; },
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

function streamReply(res: http.ServerResponse, model: string, promptTokens: number): void {
  res.writeHead(200, { 'content-type': 'text/event-stream' });
  const chunk = (body: object): string => `data: ${JSON.stringify({ id: 'c', object: 'chat.completion.chunk', created: 0, model, ...body })}\n\n`;
  res.write(chunk({ choices: [{ index: 0, delta: { role: 'assistant', content: 'hello from a local server' }, finish_reason: null }] }));
  res.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
  res.write(chunk({ choices: [], usage: { prompt_tokens: promptTokens, completion_tokens: 5, total_tokens: promptTokens + 5 } }));
  res.end('data: [DONE]\n\n');
}

/** A program on a port that is no model server: a web page for every path. */
export async function startWebPage(): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end('<html><body>a dev server</body></html>');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

/** A port that accepts connections and never answers. */
export async function startStall(): Promise<{ port: number; requests: () => number; close(): Promise<void> }> {
  let requests = 0;
  const server = http.createServer(() => void requests++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, requests: () => requests, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}

/** A loopback port with nothing listening: bound once to learn a free number, then closed. */
export async function closedPort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** A program that answers every path with JSON of its own, a `data` list included, that is no model list. */
export async function startJsonApi(): Promise<{ port: number; close(): Promise<void> }> {
  return startAnswering((_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ data: [{ id: 'user-1', name: 'Ada' }], page: 1 }));
  });
}

/** A web app behind a login: every path redirects there, as code-server with a password does. */
export async function startLoginRedirect(): Promise<{ port: number; close(): Promise<void> }> {
  return startAnswering((_req, res) => {
    res.writeHead(302, { location: '/login' });
    res.end();
  });
}

async function startAnswering(handler: http.RequestListener): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }) };
}
