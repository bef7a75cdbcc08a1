import { localBaseUrl, localServerOf, SERVER_NAMES, type LocalServer, type ServerKind } from './localServers';
import { shortModelName } from './modelName';
import { detectKind, modelList, type ListedModel } from './serverKind';

/**
 * Local model servers, found when Select Model opens: each port of
 * `candor.localServers` is asked for its model list on 127.0.0.1, all at
 * once, each cut after a short timeout, so a closed port or a stalled
 * server costs the picker at most that long. Nothing is probed at any other
 * time (docs/architecture.md, "Local model servers"). Only an answer in the
 * shape of an OpenAI model list counts: a web page, a redirect (code-server's
 * login) or any other JSON is not a model server.
 */

export interface DiscoveredServer {
  readonly server: LocalServer;
  /** What the server's answer says it is (llama.cpp's `Server` header, vLLM's `owned_by`), else the setting's kind. */
  readonly kind: ServerKind;
  /** `http://127.0.0.1:PORT/v1`: what Select Model writes to `candor.baseUrl`. */
  readonly baseUrl: string;
  readonly models: readonly string[];
  /** Each model's aliases, where the server lists them (llama.cpp's `aliases`). */
  readonly aliases: Readonly<Record<string, readonly string[]>>;
}

export interface DiscoveryOptions {
  /** Per port; 300 ms by default. */
  readonly timeoutMs?: number;
  /** Model ids kept per server. */
  readonly limit?: number;
  /**
   * The `Authorization` value for the servers the user's own settings send
   * the key to (`sendKey`); every other port is asked with no credentials.
   */
  readonly authorization?: string;
  /** The signal that cuts one port's request after `timeoutMs` (tests pass their own clock). */
  readonly timeout?: (ms: number) => AbortSignal;
}

/** The servers that answered with a model list, in the order of the setting. */
export async function discoverLocalServers(servers: readonly LocalServer[], options: DiscoveryOptions = {}): Promise<DiscoveredServer[]> {
  const found = await Promise.all(servers.map((server) => probe(server, options)));
  return found.filter((d): d is DiscoveredServer => d !== undefined);
}

async function probe(server: LocalServer, options: DiscoveryOptions): Promise<DiscoveredServer | undefined> {
  const baseUrl = localBaseUrl(server.port);
  const headers = server.sendKey && options.authorization ? { authorization: options.authorization } : undefined;
  const answer = await getModelList(`${baseUrl}/models`, (options.timeout ?? AbortSignal.timeout)(options.timeoutMs ?? 300), headers);
  if (!('models' in answer)) return undefined;
  const models = answer.models.slice(0, options.limit ?? 200);
  const kind = detectKind({ serverHeader: answer.serverHeader, list: answer.body }) ?? server.kind;
  return { server, kind, baseUrl, models: models.map((m) => m.id), aliases: aliasesOf(models) };
}

function aliasesOf(models: readonly ListedModel[]): Record<string, readonly string[]> {
  const aliases: Record<string, readonly string[]> = {};
  for (const m of models) if (m.aliases.length > 0) aliases[m.id] = m.aliases;
  return aliases;
}

/** What a GET of a model list gave: the models, or what answered instead ("HTTP 404", "no connection (ECONNREFUSED)"), for a message. */
export type ListAnswer =
  | { readonly models: readonly ListedModel[]; readonly body: unknown; readonly serverHeader: string | null }
  | { readonly failure: string };

/**
 * `GET url` for an OpenAI model list, never following a redirect. The
 * failure says what answered: nothing, an HTTP status, or something that is
 * not a model list.
 */
export async function getModelList(url: string, signal: AbortSignal, headers?: Record<string, string>): Promise<ListAnswer> {
  let response: Response;
  try {
    response = await fetch(url, { signal, headers: { accept: 'application/json', ...headers }, redirect: 'manual' });
  } catch (err) {
    return { failure: signal.aborted ? 'no answer in time' : `no connection (${causeOf(err)})` };
  }
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => undefined);
    return { failure: `a redirect (HTTP ${response.status}), as a web app's login page answers` };
  }
  if (!response.ok) {
    await response.body?.cancel().catch(() => undefined);
    return { failure: `HTTP ${response.status}` };
  }
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    return { failure: 'an answer that is not JSON' };
  }
  const models = modelList(body);
  if (models === undefined) return { failure: 'JSON that is not a model list' };
  return { models, body, serverHeader: response.headers.get('server') };
}

function causeOf(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' ? cause.code : 'refused';
}

/** What answers on a loopback port: a model server, its kind and models, or why it is not one. */
export type Identified =
  | { readonly kind: ServerKind; readonly models: readonly ListedModel[] }
  | { readonly failure: string };

/**
 * What answers on 127.0.0.1:PORT, for "Add a port…": its model list first
 * (nothing else counts as a model server), then, when the list does not say
 * which kind it is, the endpoints that tell the kinds apart (serverKind.ts),
 * all at once and within the same time limit. Never with a key.
 */
export async function identifyServer(port: number, timeoutMs = 3000): Promise<Identified> {
  const origin = `http://127.0.0.1:${port}`;
  const signal = AbortSignal.timeout(timeoutMs);
  const answer = await getModelList(`${origin}/v1/models`, signal);
  if (!('models' in answer)) return answer;
  const evidence = { list: answer.body, serverHeader: answer.serverHeader };
  const known = detectKind(evidence);
  if (known) return { kind: known, models: answer.models };
  const [ollamaVersion, lmStudioModels, props] = await Promise.all(['/api/version', '/api/v0/models', '/props'].map((p) => getBody(`${origin}${p}`, signal)));
  return { kind: detectKind({ ...evidence, ollamaVersion, lmStudioModels, props }) ?? 'openai', models: answer.models };
}

async function getBody(url: string, signal: AbortSignal): Promise<unknown> {
  try {
    const response = await fetch(url, { signal, headers: { accept: 'application/json' }, redirect: 'manual' });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return undefined;
    }
    return (await response.json()) as unknown;
  } catch {
    return undefined;
  }
}

/** One model of a discovered server, as Select Model offers it. */
export interface LocalChoice {
  readonly model: string;
  /** The short name the picker shows (see modelName.ts); `model` is the full id. */
  readonly name: string;
  readonly baseUrl: string;
  /** `llama.cpp on 127.0.0.1:18200`: fits beside a short name in the picker. */
  readonly description: string;
  /** `no key sent`, and the full id when the name is shorter. */
  readonly detail: string;
}

/**
 * The picker's entries for the discovered servers, in the setting's order.
 * The server the settings already point at is left out: its models are
 * listed as the provider's.
 */
export function localChoices(found: readonly DiscoveredServer[], configuredBaseUrl: string): LocalChoice[] {
  return found
    .filter((d) => localServerOf(configuredBaseUrl, [d.server]) === undefined)
    .flatMap((d) => d.models.map((model) => {
      const name = shortModelName(model, d.aliases[model]);
      const key = d.server.sendKey ? 'your key is sent' : 'no key sent';
      return {
        model,
        name,
        baseUrl: d.baseUrl,
        description: `${SERVER_NAMES[d.kind]} on 127.0.0.1:${d.server.port}`,
        detail: name === model ? key : `${key} · ${model}`,
      };
    }));
}

/**
 * The row Select Model shows when no port of `candor.localServers` answered:
 * which ports were tried, in the setting's order.
 */
export function nothingAnswered(servers: readonly LocalServer[]): string {
  const ports = servers.map((s) => s.port);
  if (ports.length === 0) return 'No local server is probed: candor.localServers is empty';
  return `No local server answered on port${ports.length === 1 ? '' : 's'} ${ports.join(', ')}`;
}
