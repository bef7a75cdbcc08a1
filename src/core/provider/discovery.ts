import { localBaseUrl, localServerOf, SERVER_NAMES, type LocalServer } from './localServers';
import { getJson } from './serverWindow';

/**
 * Local model servers, found when Select Model opens: each port of
 * `candor.localServers` is asked for its model list on 127.0.0.1, all at
 * once, each cut after a short timeout, so a closed port or a stalled
 * server costs the picker at most that long. Nothing is probed at any other
 * time (docs/architecture.md, "Local model servers").
 */

export interface DiscoveredServer {
  readonly server: LocalServer;
  /** `http://127.0.0.1:PORT/v1`: what Select Model writes to `candor.baseUrl`. */
  readonly baseUrl: string;
  readonly models: readonly string[];
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
}

/** The servers that answered with a model list, in the order of the setting. */
export async function discoverLocalServers(servers: readonly LocalServer[], options: DiscoveryOptions = {}): Promise<DiscoveredServer[]> {
  const found = await Promise.all(servers.map((server) => probe(server, options)));
  return found.filter((d): d is DiscoveredServer => d !== undefined);
}

async function probe(server: LocalServer, options: DiscoveryOptions): Promise<DiscoveredServer | undefined> {
  const baseUrl = localBaseUrl(server.port);
  const headers = server.sendKey && options.authorization ? { authorization: options.authorization } : undefined;
  const body = await getJson(`${baseUrl}/models`, { signal: AbortSignal.timeout(options.timeoutMs ?? 300), ...(headers ? { headers } : {}) });
  const models = modelIds(body, options.limit ?? 200);
  return models === undefined ? undefined : { server, baseUrl, models };
}

/** `{"data": [{"id": …}]}`, the OpenAI list every kind serves; undefined for anything else (another program on the port). */
export function modelIds(body: unknown, limit: number): string[] | undefined {
  if (body === null || typeof body !== 'object') return undefined;
  const data = (body as { data?: unknown }).data;
  if (!Array.isArray(data)) return undefined;
  const ids: string[] = [];
  for (const entry of data) {
    const id = entry !== null && typeof entry === 'object' ? (entry as { id?: unknown }).id : undefined;
    if (typeof id === 'string' && id !== '' && !ids.includes(id)) ids.push(id);
    if (ids.length >= limit) break;
  }
  return ids;
}

/** One model of a discovered server, as Select Model offers it. */
export interface LocalChoice {
  readonly model: string;
  readonly baseUrl: string;
  /** `Ollama on 127.0.0.1:11434, no key sent`. */
  readonly description: string;
}

/**
 * The picker's entries for the discovered servers, in the setting's order.
 * The server the settings already point at is left out: its models are
 * listed as the provider's.
 */
export function localChoices(found: readonly DiscoveredServer[], configuredBaseUrl: string): LocalChoice[] {
  return found
    .filter((d) => localServerOf(configuredBaseUrl, [d.server]) === undefined)
    .flatMap((d) => d.models.map((model) => ({
      model,
      baseUrl: d.baseUrl,
      description: `${SERVER_NAMES[d.server.kind]} on 127.0.0.1:${d.server.port}, ${d.server.sendKey ? 'your key is sent' : 'no key sent'}`,
    })));
}
