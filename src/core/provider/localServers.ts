import { manifestStrings } from '../manifest';

/**
 * `candor.localServers`: the loopback ports Select Model probes, each with
 * the kind of server expected there. The kind says where that server keeps
 * the context window it runs with (`serverWindow.ts`). The host is never part
 * of the setting: Candor only ever looks at 127.0.0.1 (docs/architecture.md,
 * "Local model servers").
 */

export type ServerKind = 'ollama' | 'lmstudio' | 'llamacpp' | 'vllm' | 'openai';

export const SERVER_KINDS: readonly ServerKind[] = ['ollama', 'lmstudio', 'llamacpp', 'vllm', 'openai'];

/** What each kind is called where the user reads it. */
export const SERVER_NAMES: Readonly<Record<ServerKind, string>> = {
  ollama: 'Ollama',
  lmstudio: 'LM Studio',
  llamacpp: 'llama.cpp',
  vllm: 'vLLM',
  openai: 'OpenAI-compatible server',
};

export interface LocalServer {
  readonly port: number;
  readonly kind: ServerKind;
  /** The user's API key goes to this server: only ever from the user's own settings. */
  readonly sendKey: boolean;
}

/**
 * One layer of the setting. An entry is a string `"PORT [KIND] [sendKey]"`
 * (`"18200 llamacpp"`: the form the Settings UI edits as a list, and the one
 * Select Model writes), or, as earlier versions wrote them, a port (a generic
 * server) or `{ "port", "kind", "sendKey" }`. What does not fit is dropped;
 * `sendKey` is kept only when `keyAllowed` (the user's own settings).
 */
export function parseLocalServers(value: unknown, keyAllowed: boolean): LocalServer[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const servers: LocalServer[] = [];
  for (const entry of value) {
    const server = parseEntry(entry, keyAllowed);
    if (server && !servers.some((s) => s.port === server.port)) servers.push(server);
  }
  return servers;
}

function parseEntry(entry: unknown, keyAllowed: boolean): LocalServer | undefined {
  if (isPort(entry)) return { port: entry, kind: 'openai', sendKey: false };
  if (typeof entry === 'string') return parseText(entry, keyAllowed);
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
  const { port, kind, sendKey } = entry as Record<string, unknown>;
  if (!isPort(port)) return undefined;
  const known = SERVER_KINDS.find((k) => k === kind) ?? 'openai';
  return { port, kind: known, sendKey: keyAllowed && sendKey === true };
}

/** `"18200"`, `"18200 llamacpp"`, `"8081 openai sendKey"`: the string form, word for word (an unknown kind is a generic server). */
const ENTRY_TEXT = /^\s*(\d{1,5})(?:\s+([a-z]+))?(?:\s+(sendKey))?\s*$/;

function parseText(text: string, keyAllowed: boolean): LocalServer | undefined {
  const match = ENTRY_TEXT.exec(text);
  const port = Number(match?.[1]);
  if (!match || !isPort(port)) return undefined;
  const kind = SERVER_KINDS.find((k) => k === match[2]) ?? 'openai';
  return { port, kind, sendKey: keyAllowed && match[3] !== undefined };
}

/** The string form of an entry: what Select Model's "Add a port…" writes. */
export function formatLocalServer(server: LocalServer): string {
  return `${server.port} ${server.kind}${server.sendKey ? ' sendKey' : ''}`;
}

/** "llama.cpp on 127.0.0.1:18200": a server as the picker and the messages name it. */
export function serverPlace(server: Pick<LocalServer, 'kind' | 'port'>): string {
  return `${SERVER_NAMES[server.kind]} on 127.0.0.1:${server.port}`;
}

function isPort(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value > 0 && value < 65536;
}

/**
 * The list in force, and the user's own list on top of it: a workspace may add
 * ports (probing a loopback port sends nothing secret, and a listed port only
 * ever gets less: no key), but never drops the user's ports or turns their
 * `sendKey` on.
 */
export function mergeLocalServers(inForce: readonly LocalServer[], users: readonly LocalServer[]): LocalServer[] {
  const merged = inForce.map((server) => {
    const own = users.find((u) => u.port === server.port);
    return { ...server, sendKey: own?.sendKey === true };
  });
  for (const own of users) if (!merged.some((s) => s.port === own.port)) merged.push(own);
  return merged;
}

/** `http://127.0.0.1:PORT/v1`: what every kind serves its OpenAI-compatible API under. */
export function localBaseUrl(port: number): string {
  return `http://127.0.0.1:${port}/v1`;
}

/** The listed server a base URL points at: loopback host and a listed port; undefined otherwise. */
export function localServerOf(baseUrl: string, servers: readonly LocalServer[]): LocalServer | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' || !isLoopbackHost(url.hostname)) return undefined;
  const port = Number(url.port || '80');
  return servers.find((s) => s.port === port);
}

/**
 * Whether Candor sends the user's key to a base URL: not to a listed local
 * server unless the user's own settings say `"sendKey": true` for its port.
 */
export function sendsKeyTo(baseUrl: string, servers: readonly LocalServer[]): boolean {
  const server = localServerOf(baseUrl, servers);
  return server === undefined || server.sendKey;
}

/** 127.0.0.0/8, `localhost` or `::1`: the hosts a local server is reached on. */
export function isLoopbackHost(hostname: string): boolean {
  const host = hostname.toLowerCase();
  return host === 'localhost' || host === '[::1]' || host === '::1' || /^127(?:\.\d{1,3}){3}$/.test(host);
}

/** The manifest's default, for readers that get no value at all (parsed as a workspace's: no key is sent). */
export const DEFAULT_LOCAL_SERVERS: readonly LocalServer[] = parseLocalServers(manifestStrings('localServers'), false) ?? [];
