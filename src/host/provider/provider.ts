import * as fs from 'node:fs';
import type { ChatModel, CompleteOptions, ModelEvent, RequestPolicy, TextModel } from '../../core/provider/chatModel';
import type { Overflow } from '../../core/provider/overflow';
import { identityOf, ModelResolver, type ModelSettings } from '../../core/provider/resolve';
import { discoverLocalServers, getModelList, type DiscoveredServer, type ListAnswer } from '../../core/provider/discovery';
import { localServerOf, sendsKeyTo, SERVER_NAMES, serverPlace, type LocalServer } from '../../core/provider/localServers';
import { requestUrl } from '../../core/provider/stream';
import { shortModelName } from '../../core/provider/modelName';
import { ServerWindows, windowInUse, type ServerFacts, type WindowInUse } from '../../core/provider/serverWindow';
import { readFamilyFacts, type FamilyFacts, type FamilyReading } from '../../core/provider/serverFamily';
import { serverPromptCount, type PromptCount } from '../../core/provider/serverCount';
import { inMemoryUsage, persistedUsage, type KeyValueState } from '../../core/provider/streamUsage';
import { parseScenario, ScenarioError, type Scenario } from '../../core/offline/scenario';
import { demoScenario } from '../../core/offline/demoScenario';
import type { Identity } from '../../core/modelIdentity';
import type { ChatMessage } from '../../core/messages';
import type { Logger } from '../../core/log';
import type { ProviderInfo } from '../../protocol/chat';
import type { CandorSettings } from '../settings/config';
import { errorMessage } from '../../core/errorMessage';
import { providerSlug } from '../../core/providerSlug';
import { isKindError } from '../../core/kindError';

const OFFLINE_LABEL = 'Offline demo — scripted replies, not a model';

/**
 * The model of each request, from the settings in force: a real
 * OpenAI-compatible endpoint, or — with no base URL — the embedded offline
 * server, started on first use. Both go through the core's one resolver and
 * its one adapter, which keeps the client while base URL, key and model stay
 * the same. As a TextModel it answers with whatever model is in force then.
 *
 * On a local server of `candor.localServers` it also keeps the context window
 * that server runs with: read before each request until a read finds it (a
 * server started after Candor, a model not loaded yet), again after every
 * completed request (the request may have loaded the model: Ollama reports
 * its context only then) and after an overflow. A window a provider states
 * in an overflow error is kept per identity until a read says otherwise
 * (docs/architecture.md, "Local model servers").
 */
export class Providers implements TextModel {
  private readonly resolver: ModelResolver;
  private readonly windows: ServerWindows;
  private readonly watched = new WeakMap<ChatModel, ChatModel>();
  /** Windows providers stated in overflow errors, per identity (`provider model`). */
  private readonly stated = new Map<string, number>();
  private scenarioCache: { file: string; mtimeMs: number; scenario: Scenario | ScenarioError } | undefined;
  /** What each local server said about each model (docs/architecture.md, "Exact counts"); a server that said nothing is asked again. */
  private readonly facts = new Map<string, { readonly facts: FamilyFacts; readonly count?: PromptCount }>();
  /** The aliases local servers listed for their models, by base URL and model: the header names a model by one. */
  private readonly aliases = new Map<string, readonly string[]>();

  constructor(
    private readonly settings: () => CandorSettings,
    private readonly apiKey: () => Promise<string | undefined>,
    countTokens: (text: string) => Promise<number>,
    private readonly log: Logger,
    /** Where what each identity does with `stream_options` is kept across restarts (globalState). */
    state?: KeyValueState,
    windows = new ServerWindows(),
  ) {
    this.windows = windows;
    const usage = state ? persistedUsage(state, (err) => this.log.warn(`stream usage memory: ${String(err)}`)) : inMemoryUsage();
    this.resolver = new ModelResolver({
      scenario: (server) => this.scenario(server),
      countTokens,
      onStart: (baseUrl) => this.log.info(`offline provider listening on ${baseUrl}`),
    }, usage);
  }

  identity(settings = this.settings()): Identity {
    return identityOf(settings);
  }

  info(): ProviderInfo {
    const settings = this.settings();
    const identity = this.identity(settings);
    const model = identity.model || '(no model)';
    const name = shortModelName(model, this.aliases.get(aliasKey(settings.baseUrl, identity.model)));
    const host = settings.baseUrl ? hostOf(settings.baseUrl) : '';
    const local = this.localServer(settings);
    const where = local ? serverPlace(local) : host;
    return {
      label: settings.baseUrl ? `${name} @ ${host}` : OFFLINE_LABEL,
      name,
      host,
      title: settings.baseUrl ? `${model}\non ${where}` : `${OFFLINE_LABEL}: ${model}. Press Model to pick a real model; a local server needs no key.`,
      model: identity.model,
      provider: identity.provider,
      offline: !settings.baseUrl,
    };
  }

  /** How a person names the provider of `slug`: its host and port when a base URL in the settings has that slug. */
  nameOf(slug: string): string {
    return settingsProviderName(slug, this.settings());
  }

  /** The ChatModel of the settings in force: the same object until they change. */
  async handle(): Promise<ChatModel> {
    const settings = await this.modelSettings();
    const model = await this.resolver.resolve(settings);
    const local = this.localServer();
    if (!local) return model;
    const reads: Promise<void>[] = [];
    if (!this.windows.known(local, model.identity.model)) reads.push(this.readWindow(local, model.identity.model));
    if (!this.facts.has(factsKey(local, model.identity.model))) reads.push(this.readFacts(local, model.identity.model));
    await Promise.all(reads);
    return this.watch(model, local);
  }

  /** What the local server in use said about a model: its family, and whether it counts prompts itself. */
  familyFacts(model: string, settings = this.settings()): FamilyFacts | undefined {
    const local = this.localServer(settings);
    return local ? this.facts.get(factsKey(local, model))?.facts : undefined;
  }

  /** The local server's own prompt count for the identity in use, when it has one. */
  promptCount(identity: Identity, settings = this.settings()): PromptCount | undefined {
    const local = this.localServer(settings);
    if (!local || identity.model !== settings.model) return undefined;
    return this.facts.get(factsKey(local, identity.model))?.count;
  }

  /**
   * The context window of the requests: the smallest of `candor.contextWindow`
   * (when the user set it) and what the server says it runs with (its
   * reading, or the window an overflow error stated); else the default.
   */
  contextWindow(settings = this.settings()): WindowInUse {
    const local = this.localServer(settings);
    const read = local ? this.windows.last(local, settings.model) : undefined;
    const stated = this.stated.get(keyOf(this.identity(settings)));
    const server = read === undefined ? stated : stated === undefined ? read : Math.min(read, stated);
    return windowInUse({ tokens: settings.contextWindow, explicit: settings.contextWindowSet }, server);
  }

  /** What the local server in use said of the model beyond its window (llama.cpp's template caps). */
  serverFacts(settings = this.settings()): ServerFacts {
    const local = this.localServer(settings);
    return local ? this.windows.facts(local, settings.model) : {};
  }

  /** The kind of local server in use, when the base URL is one of `candor.localServers`. */
  serverKind(settings = this.settings()): LocalServer['kind'] | undefined {
    return this.localServer(settings)?.kind;
  }

  /** A provider refused a request as too large: the window it stated is kept, and a local server is asked again. */
  async noteOverflow(identity: Identity, overflow: Overflow): Promise<void> {
    if (overflow.window !== null) this.stated.set(keyOf(identity), overflow.window);
    const local = this.localServer();
    if (local && identity.model) await this.readWindow(local, identity.model);
  }

  /** Asks the local server in use for its window again (after Select Model picked it). */
  async refreshWindow(): Promise<WindowInUse> {
    const settings = this.settings();
    const local = this.localServer(settings);
    if (local && settings.model) await this.readWindow(local, settings.model);
    return this.contextWindow();
  }

  /** The servers of `candor.localServers` that answer on 127.0.0.1, for Select Model; their models' aliases are kept for the header. */
  async discover(timeoutMs = 300): Promise<DiscoveredServer[]> {
    const servers = this.settings().localServers;
    const key = servers.some((s) => s.sendKey) ? await this.apiKey() : undefined;
    const found = await discoverLocalServers(servers, { timeoutMs, ...(key ? { authorization: `Bearer ${key}` } : {}) });
    for (const d of found) for (const [model, aliases] of Object.entries(d.aliases)) this.aliases.set(aliasKey(d.baseUrl, model), aliases);
    return found;
  }

  /** The model list at a base URL the user typed ("Use a base URL…"), with the key only where requests to it would carry one. */
  async listModelsAt(baseUrl: string, signal: AbortSignal): Promise<ListAnswer> {
    const key = sendsKeyTo(baseUrl, this.settings().localServers) ? await this.apiKey() : undefined;
    return getModelList(requestUrl(baseUrl, '/models'), signal, key ? { authorization: `Bearer ${key}` } : undefined);
  }

  async complete(messages: readonly ChatMessage[], signal?: AbortSignal, options?: CompleteOptions): Promise<string> {
    return (await this.handle()).complete(messages, signal, options);
  }

  /** The ids the provider lists, for Select Model; empty when it has no list. */
  async listModels(signal: AbortSignal): Promise<string[]> {
    return this.resolver.listModels(await this.modelSettings(), signal);
  }

  dispose(): void {
    void this.resolver.close().catch(() => undefined);
  }

  private async modelSettings(): Promise<ModelSettings> {
    const settings = this.settings();
    // The key is read only for a real endpoint: the offline provider never sees it.
    const apiKey = settings.baseUrl ? (await this.apiKey()) ?? '' : '';
    return { baseUrl: settings.baseUrl, apiKey, model: settings.model, policy: policyOf(settings), localServers: settings.localServers };
  }

  private localServer(settings = this.settings()): LocalServer | undefined {
    return settings.baseUrl ? localServerOf(settings.baseUrl, settings.localServers) : undefined;
  }

  /**
   * The model, with a window reading after each completed request, before
   * its `finish` reaches the chat (so the gate settles the request against
   * the window the server now reports); the same object for the same model.
   */
  private watch(model: ChatModel, local: LocalServer): ChatModel {
    let watched = this.watched.get(model);
    if (!watched) {
      const readWindow = (): Promise<void> => this.readWindow(local, model.identity.model);
      watched = {
        identity: model.identity,
        policy: model.policy,
        complete: (messages, signal, options) => model.complete(messages, signal, options),
        stream: (request, options) => readingAfter(model.stream(request, options), readWindow),
      };
      this.watched.set(model, watched);
    }
    return watched;
  }

  private async readWindow(local: LocalServer, model: string): Promise<void> {
    const before = this.windows.last(local, model);
    // Only a server the user's own settings send the key to is asked with it.
    const key = local.sendKey ? await this.apiKey() : undefined;
    const after = await this.windows.refresh(local, model, key ? { authorization: `Bearer ${key}` } : undefined);
    // A window the server reports now replaces one an overflow stated before.
    if (after !== undefined) this.stated.delete(keyOf({ provider: this.identity().provider, model }));
    if (after !== before) {
      this.log.info(`${SERVER_NAMES[local.kind]} on port ${local.port} runs ${model} with ${after === undefined ? 'no reported context window' : `a context window of ${after} tokens`}`);
    }
  }

  private async readFacts(local: LocalServer, model: string): Promise<void> {
    const key = local.sendKey ? await this.apiKey() : undefined;
    const headers = key ? { authorization: `Bearer ${key}` } : undefined;
    const origin = `http://127.0.0.1:${local.port}`;
    const reading = await readFamilyFacts(local.kind, origin, model, { signal: AbortSignal.timeout(300), ...(headers ? { headers } : {}) }).catch((): FamilyReading => ({ facts: {}, answered: false }));
    // No answer: asked again next time (the server may not be up yet). An answer
    // without a family is remembered as one with a family is: asking at every request costs each one a round trip.
    if (!reading.answered) return;
    const { facts } = reading;
    this.facts.set(factsKey(local, model), { facts, ...(facts.counting ? { count: serverPromptCount(facts.counting, origin, model, headers) } : {}) });
    this.log.info(`${SERVER_NAMES[local.kind]} on port ${local.port}: ${model} is ${facts.family ? `of the ${facts.family} family (from the server's metadata)` : 'of a family Candor has no tokenizer of'}${facts.counting ? '; the server counts prompts itself' : ''}`);
  }

  /** The scenario in force, re-read when its file changes. A broken file is an error the chat shows, never a silent fallback. */
  private scenario(server: { resetCounts(): void } | undefined): Scenario {
    const file = this.settings().scenario;
    if (!file) return demoScenario;
    let mtimeMs = -1;
    try {
      mtimeMs = fs.statSync(file).mtimeMs;
    } catch {
      return errorScenario(`The offline scenario file ${file} (candor.offline.scenario) cannot be read.`);
    }
    if (!this.scenarioCache || this.scenarioCache.file !== file || this.scenarioCache.mtimeMs !== mtimeMs) {
      let scenario: Scenario | ScenarioError;
      try {
        scenario = parseScenario(JSON.parse(fs.readFileSync(file, 'utf8')), file);
      } catch (err) {
        scenario = isKindError(err, ScenarioError) ? err : new ScenarioError(`${file}: ${errorMessage(err)}`);
      }
      this.scenarioCache = { file, mtimeMs, scenario };
      server?.resetCounts();
      this.log.info(`offline scenario ${file} ${isKindError(scenario, ScenarioError) ? `is invalid: ${scenario.message}` : 'loaded'}`);
    }
    const cached = this.scenarioCache.scenario;
    return isKindError(cached, ScenarioError) ? errorScenario(`The offline scenario is invalid: ${cached.message}`) : cached;
  }
}

/**
 * A provider as a person names it: `127.0.0.1:18081` for the slug
 * `127-0-0-1-18081`, when one of `baseUrls` has that slug; the slug
 * otherwise (it cannot be turned back into a host). The slug stays the
 * identity in every data file (docs/architecture.md, "Context gate").
 */
function providerName(slug: string, baseUrls: readonly string[]): string {
  if (slug === 'offline') return 'the offline demo';
  const url = baseUrls.find((u) => u.trim() !== '' && providerSlug(u) === slug);
  return url === undefined ? slug : hostOf(url);
}

/**
 * `providerName` over the URLs of the settings snapshot: the base URL and the
 * `models` entries' URLs as the trust rules let them through (an untrusted
 * or unconfirmed workspace URL is not among them, so its slug stays a slug).
 */
export function settingsProviderName(slug: string, settings: Pick<CandorSettings, 'baseUrl' | 'models'>): string {
  return providerName(slug, [settings.baseUrl, ...settings.models.flatMap((m) => (m.baseUrl ? [m.baseUrl] : []))]);
}

function factsKey(local: LocalServer, model: string): string {
  return `${local.kind}|${local.port}|${model}`;
}

/** The host and port of a base URL, as the address bar shows them (`https://api.openai.com/v1` → `api.openai.com`). */
function hostOf(baseUrl: string): string {
  try {
    return new URL(baseUrl.trim()).host || baseUrl;
  } catch {
    return baseUrl;
  }
}

/** The events of a request, with `read` awaited before a `finish` is passed on. */
async function* readingAfter(events: AsyncIterable<ModelEvent>, read: () => Promise<void>): AsyncGenerator<ModelEvent> {
  for await (const event of events) {
    if (event.type === 'finish') await read();
    yield event;
  }
}

function keyOf(identity: Identity): string {
  return `${identity.provider} ${identity.model}`;
}

function aliasKey(baseUrl: string, model: string): string {
  return `${baseUrl.trim().replace(/\/+$/, '')}|${model}`;
}

function errorScenario(message: string): Scenario {
  return { rules: [{ respond: { error: { status: 500, message } } }] };
}

function policyOf(settings: CandorSettings): RequestPolicy {
  return {
    idleTimeoutMs: settings.idleTimeoutSeconds * 1000,
    firstTokenTimeoutMs: settings.firstTokenTimeoutSeconds * 1000,
    maxRetries: settings.maxRetries,
    maxOutputTokens: settings.maxOutputTokens,
  };
}
