import type OpenAI from 'openai';
import type { Identity } from '../modelIdentity';
import { providerSlug } from '../providerSlug';
import type { Scenario } from '../offline/scenario';
import { startOfflineServer, type OfflineServer } from '../offline/server';
import type { ChatModel, RequestPolicy } from './chatModel';
import { localServerOf, sendsKeyTo, type LocalServer } from './localServers';
import { createClient, listModels, openAiChatModel } from './openaiModel';
import { inMemoryUsage, type StreamUsageMemory } from './streamUsage';
import { KindError } from '../kindError';

/** The model the offline provider answers as when none is set. */
const OFFLINE_MODEL = 'candor-offline';
/** What the SDK sends the offline provider as a key: it checks none, and the user's key never goes there. */
const OFFLINE_KEY = 'offline';

/** What decides the model: the extension reads it from settings, the CLI from its flags. */
export interface ModelSettings {
  /** An OpenAI-compatible endpoint; empty for the embedded offline provider. */
  readonly baseUrl: string;
  /** Unused for the offline provider. */
  readonly apiKey: string;
  /** Required with a base URL; the offline provider defaults to `candor-offline`. */
  readonly model: string;
  readonly policy: RequestPolicy;
  /**
   * `candor.localServers`: a base URL on one of these loopback ports gets no
   * key unless the user's own settings say `sendKey` for it.
   */
  readonly localServers?: readonly LocalServer[];
}

export interface OfflineProvider {
  /** The scenario in force, asked per request; `server.resetCounts()` when it changed. */
  readonly scenario: (server: OfflineServer) => Scenario;
  /** Token counts for the usage it reports. */
  readonly countTokens: (text: string) => number | Promise<number>;
  /** Told once the server listens. */
  readonly onStart?: (baseUrl: string) => void;
}

export class ModelResolutionError extends KindError<'no-model' | 'offline-failed'> {
  override readonly name = 'ModelResolutionError';
}

/** `(provider slug, model)` of the settings, without starting anything. */
export function identityOf(settings: Pick<ModelSettings, 'baseUrl' | 'model'>): Identity {
  if (!settings.baseUrl.trim()) return { provider: 'offline', model: settings.model || OFFLINE_MODEL };
  return { provider: providerSlug(settings.baseUrl), model: settings.model };
}

/**
 * Settings → ChatModel, the same way for the extension and the CLI. The SDK
 * client is kept while the base URL and key stay the same, and the model
 * while nothing of its settings changed: a request costs no new client and
 * no new connection pool. Without a base URL, the embedded offline server is
 * started on first use and reached through the same adapter.
 */
export class ModelResolver {
  private offline: Promise<OfflineServer> | undefined;
  private client: { baseUrl: string; apiKey: string; client: OpenAI } | undefined;
  private model: { settings: ModelSettings; model: ChatModel } | undefined;

  constructor(
    private readonly offlineProvider: OfflineProvider,
    /** What each identity does with `stream_options`; the extension keeps it across restarts. */
    private readonly usage: StreamUsageMemory = inMemoryUsage(),
  ) {}

  async resolve(given: ModelSettings): Promise<ChatModel> {
    const identity = identityOf(given);
    // The offline provider and keyless local servers never see the user's key, so a key change is no change there.
    const settings = { ...given, apiKey: keyFor(given) };
    if (settings.baseUrl.trim() && !identity.model) {
      throw new ModelResolutionError('no-model', 'No model is set for this provider. Run "Candor: Select Model" or set candor.model.');
    }
    const client = await this.clientFor(settings);
    const cached = this.model;
    if (cached && sameSettings(cached.settings, settings) && this.client?.client === client) return cached.model;
    // llama.cpp reports prompt progress when asked: the wait for the first token then shows, and counts as the server being alive.
    const returnProgress = settings.baseUrl.trim() !== '' && localServerOf(settings.baseUrl, settings.localServers ?? [])?.kind === 'llamacpp';
    const model = openAiChatModel(client, identity, settings.policy, this.usage, { returnProgress });
    this.model = { settings, model };
    return model;
  }

  /** The model ids the endpoint lists; empty when it has no list. */
  async listModels(settings: Pick<ModelSettings, 'baseUrl' | 'apiKey' | 'localServers'>, signal: AbortSignal): Promise<string[]> {
    return listModels(await this.clientFor({ baseUrl: settings.baseUrl, apiKey: keyFor(settings) }), signal);
  }

  async close(): Promise<void> {
    const offline = this.offline;
    this.offline = undefined;
    this.client = undefined;
    this.model = undefined;
    await offline?.then((server) => server.close(), () => undefined);
  }

  private async clientFor(settings: Pick<ModelSettings, 'baseUrl' | 'apiKey'>): Promise<OpenAI> {
    const endpoint = settings.baseUrl.trim()
      ? { baseUrl: settings.baseUrl, apiKey: settings.apiKey }
      : { baseUrl: (await this.offlineServer()).baseUrl, apiKey: OFFLINE_KEY };
    if (this.client?.baseUrl !== endpoint.baseUrl || this.client.apiKey !== endpoint.apiKey) {
      this.client = { ...endpoint, client: createClient(endpoint.baseUrl, endpoint.apiKey) };
    }
    return this.client.client;
  }

  private offlineServer(): Promise<OfflineServer> {
    this.offline ??= (async () => {
      const server: OfflineServer = await startOfflineServer({
        scenario: () => this.offlineProvider.scenario(server),
        countTokens: this.offlineProvider.countTokens,
      });
      this.offlineProvider.onStart?.(server.baseUrl);
      return server;
    })().catch((err: unknown) => {
      this.offline = undefined;
      throw new ModelResolutionError('offline-failed', `The offline provider could not start: ${String(err)}`);
    });
    return this.offline;
  }
}

/** The key a request carries: none offline, none to a keyless local server. */
function keyFor(settings: Pick<ModelSettings, 'baseUrl' | 'apiKey' | 'localServers'>): string {
  if (!settings.baseUrl.trim()) return '';
  return sendsKeyTo(settings.baseUrl, settings.localServers ?? []) ? settings.apiKey : '';
}

function sameSettings(a: ModelSettings, b: ModelSettings): boolean {
  return a.baseUrl === b.baseUrl && a.apiKey === b.apiKey && a.model === b.model
    && a.policy.idleTimeoutMs === b.policy.idleTimeoutMs && a.policy.maxRetries === b.policy.maxRetries
    && a.policy.maxOutputTokens === b.policy.maxOutputTokens && a.policy.firstTokenTimeoutMs === b.policy.firstTokenTimeoutMs
    && localServerOf(a.baseUrl, a.localServers ?? [])?.kind === localServerOf(b.baseUrl, b.localServers ?? [])?.kind;
}
