import type { LocalServer, ServerKind } from './localServers';

/**
 * The context window a local server runs with: not the model's trained
 * maximum, which a gauge would read as 5% while the server has already cut
 * the start of the prompt. Each kind keeps it in its own place; the README's
 * "Local model servers" names the page each reader relies on.
 */

/** Where the window in use came from: the tooltip of the gauge names it. */
export type WindowSource = 'settings' | 'server' | 'default';

export interface WindowInUse {
  readonly tokens: number;
  readonly source: WindowSource;
  /** What the server reported, also when the user's setting wins. */
  readonly server?: number;
  /** What the user set, also when the server's window is smaller. */
  readonly setting?: number;
}

/**
 * The smallest of what the user set (`candor.contextWindow`, when set) and
 * what the server says it runs with; the setting's default when neither
 * says. A request larger than the server's window fails whatever the
 * setting says, and one larger than the user's is what the user asked not
 * to send (docs/architecture.md, "Local model servers").
 */
export function windowInUse(setting: { readonly tokens: number; readonly explicit: boolean }, server: number | undefined): WindowInUse {
  const reported = server !== undefined ? { server } : {};
  if (setting.explicit) {
    const set = { setting: setting.tokens, ...reported };
    return server !== undefined && server < setting.tokens ? { tokens: server, source: 'server', ...set } : { tokens: setting.tokens, source: 'settings', ...set };
  }
  if (server !== undefined) return { tokens: server, source: 'server', server };
  return { tokens: setting.tokens, source: 'default' };
}

/** What a local server says of how it runs a model. */
export interface ServerFacts {
  /** The context window of one request (per slot where the server splits its context). */
  readonly window?: number;
  /** llama.cpp's chat template keeps a reply's thinking when it is sent back (`supports_preserve_reasoning`). */
  readonly preserveReasoning?: boolean;
}

export interface ReadOptions {
  readonly signal: AbortSignal;
  /** Sent only to a server that gets the key anyway (`sendKey`). */
  readonly headers?: Record<string, string>;
}

/** A positive whole number of tokens, or undefined for anything else. */
function tokensOf(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : undefined;
}

function record(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

function list(value: unknown): Record<string, unknown>[] {
  return Array.isArray(value) ? value.map(record).filter((r): r is Record<string, unknown> => r !== undefined) : [];
}

/** Ollama names `llama3.2` and `llama3.2:latest` the same model. */
function sameModel(a: unknown, model: string): boolean {
  if (typeof a !== 'string') return false;
  const plain = (name: string): string => name.replace(/:latest$/, '');
  return a === model || plain(a) === plain(model);
}

/** Ollama: `GET /api/ps`, `models[].context_length` of the model while it is loaded. */
export function ollamaWindow(body: unknown, model: string): number | undefined {
  const loaded = list(record(body)?.models).find((m) => sameModel(m.model, model) || sameModel(m.name, model));
  return tokensOf(loaded?.context_length);
}

/** llama.cpp: `GET /props`, `default_generation_settings.n_ctx` (the context of one slot). */
export function llamaCppWindow(body: unknown): number | undefined {
  return tokensOf(record(record(body)?.default_generation_settings)?.n_ctx);
}

/** llama.cpp's `/props`: the window per slot, and whether its template takes thinking back (`chat_template_caps`). */
export function llamaCppFacts(body: unknown): ServerFacts {
  const window = llamaCppWindow(body);
  const caps = record(record(body)?.chat_template_caps);
  return { ...(window !== undefined ? { window } : {}), preserveReasoning: caps?.supports_preserve_reasoning === true };
}

/** vLLM: `GET /v1/models`, `data[].max_model_len` of the served model. */
export function vllmWindow(body: unknown, model: string): number | undefined {
  return tokensOf(list(record(body)?.data).find((m) => m.id === model)?.max_model_len);
}

/** LM Studio 0.4+: `GET /api/v1/models`, `models[].loaded_instances[].config.context_length`. */
export function lmStudioWindow(body: unknown, model: string): number | undefined {
  const entry = list(record(body)?.models).find((m) => m.key === model || list(m.loaded_instances).some((i) => i.id === model));
  const instances = list(entry?.loaded_instances);
  const instance = instances.find((i) => i.id === model) ?? instances[0];
  return tokensOf(record(instance?.config)?.context_length);
}

/** LM Studio 0.3: `GET /api/v0/models`, `data[].loaded_context_length` of a model whose state is "loaded". */
export function lmStudioV0Window(body: unknown, model: string): number | undefined {
  const entry = list(record(body)?.data).find((m) => m.id === model && m.state === 'loaded');
  return tokensOf(entry?.loaded_context_length);
}

/** The JSON a GET answers with; undefined for a failure, a non-2xx status or a body that is not JSON. */
export async function getJson(url: string, options: ReadOptions): Promise<unknown> {
  try {
    const response = await fetch(url, { signal: options.signal, headers: { accept: 'application/json', ...options.headers }, redirect: 'error' });
    if (!response.ok) return undefined;
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

type Reader = (origin: string, model: string, options: ReadOptions) => Promise<ServerFacts>;

const windowOnly = (window: number | undefined): ServerFacts => (window !== undefined ? { window } : {});

const READERS: Readonly<Record<ServerKind, Reader>> = {
  ollama: async (origin, model, o) => windowOnly(ollamaWindow(await getJson(`${origin}/api/ps`, o), model)),
  llamacpp: async (origin, _model, o) => llamaCppFacts(await getJson(`${origin}/props`, o)),
  vllm: async (origin, model, o) => windowOnly(vllmWindow(await getJson(`${origin}/v1/models`, o), model)),
  lmstudio: async (origin, model, o) =>
    windowOnly(lmStudioWindow(await getJson(`${origin}/api/v1/models`, o), model) ?? lmStudioV0Window(await getJson(`${origin}/api/v0/models`, o), model)),
  // A generic server documents no window.
  openai: () => Promise.resolve({}),
};

/** What the server at 127.0.0.1 says of how it runs `model`; no window when it reports none (e.g. not loaded). */
export function readServerFacts(server: Pick<LocalServer, 'kind' | 'port'>, model: string, options: ReadOptions): Promise<ServerFacts> {
  return READERS[server.kind](`http://127.0.0.1:${server.port}`, model, options);
}


/**
 * The last window each local server reported, per model, with what else it
 * said (llama.cpp's template caps). Reads are short (a loopback GET, cut
 * after `timeoutMs`) and one at a time per server and model. A read that
 * finds no window (the server is not up yet, the model is not loaded, the
 * answer is garbage) is no answer: it leaves the last good reading as it
 * was, and `known` stays false until one succeeds, so the next request asks
 * again.
 */
export class ServerWindows {
  private readonly readings = new Map<string, ServerFacts>();
  private readonly pending = new Map<string, Promise<number | undefined>>();

  constructor(
    private readonly read: typeof readServerFacts = readServerFacts,
    private readonly timeoutMs = 300,
  ) {}

  /** What the server last reported for the model; undefined before a reading with a window. */
  last(server: Pick<LocalServer, 'kind' | 'port'>, model: string): number | undefined {
    return this.readings.get(keyOf(server, model))?.window;
  }

  /** Everything the last good reading said. */
  facts(server: Pick<LocalServer, 'kind' | 'port'>, model: string): ServerFacts {
    return this.readings.get(keyOf(server, model)) ?? {};
  }

  /** Whether a read of this server and model has found its window. */
  known(server: Pick<LocalServer, 'kind' | 'port'>, model: string): boolean {
    return this.readings.has(keyOf(server, model));
  }

  /** Asks the server again; resolves to the window it reports now (undefined: none), never rejects. */
  refresh(server: Pick<LocalServer, 'kind' | 'port'>, model: string, headers?: Record<string, string>): Promise<number | undefined> {
    const key = keyOf(server, model);
    const running = this.pending.get(key);
    if (running) return running;
    const reading = this.read(server, model, { signal: AbortSignal.timeout(this.timeoutMs), ...(headers ? { headers } : {}) })
      .catch((): ServerFacts => ({}))
      .then((facts) => {
        if (facts.window !== undefined) this.readings.set(key, facts);
        return facts.window;
      })
      .finally(() => this.pending.delete(key));
    this.pending.set(key, reading);
    return reading;
  }
}

function keyOf(server: Pick<LocalServer, 'kind' | 'port'>, model: string): string {
  return `${server.kind}|${server.port}|${model}`;
}
