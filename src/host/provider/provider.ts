import * as fs from 'node:fs';
import type { ChatModel, RequestPolicy, TextModel } from '../../core/provider/chatModel';
import { identityOf, ModelResolver, type ModelSettings } from '../../core/provider/resolve';
import { parseScenario, ScenarioError, type Scenario } from '../../core/offline/scenario';
import { demoScenario } from '../../core/offline/demoScenario';
import type { Identity } from '../../core/context/driftEvents';
import type { ChatMessage } from '../../core/messages';
import type { Logger } from '../../core/log';
import type { ProviderInfo } from '../../protocol/chat';
import type { CandorSettings } from '../settings/config';

const OFFLINE_LABEL = 'Offline demo — scripted replies, not a model';

/**
 * The model of each request, from the settings in force: a real
 * OpenAI-compatible endpoint, or — with no base URL — the embedded offline
 * server, started on first use. Both go through the core's one resolver and
 * its one adapter, which keeps the client while base URL, key and model stay
 * the same. As a TextModel it answers with whatever model is in force then.
 */
export class Providers implements TextModel {
  private readonly resolver: ModelResolver;
  private scenarioCache: { file: string; mtimeMs: number; scenario: Scenario | ScenarioError } | undefined;

  constructor(
    private readonly settings: () => CandorSettings,
    private readonly apiKey: () => Promise<string | undefined>,
    countTokens: (text: string) => Promise<number>,
    private readonly log: Logger,
  ) {
    this.resolver = new ModelResolver({
      scenario: (server) => this.scenario(server),
      countTokens,
      onStart: (baseUrl) => this.log.info(`offline provider listening on ${baseUrl}`),
    });
  }

  identity(settings = this.settings()): Identity {
    return identityOf(settings);
  }

  info(): ProviderInfo {
    const settings = this.settings();
    const identity = this.identity(settings);
    return {
      label: settings.baseUrl ? `${identity.model || '(no model)'} @ ${identity.provider}` : OFFLINE_LABEL,
      model: identity.model,
      provider: identity.provider,
      offline: !settings.baseUrl,
    };
  }

  /** The ChatModel of the settings in force: the same object until they change. */
  async handle(): Promise<ChatModel> {
    return this.resolver.resolve(await this.modelSettings());
  }

  async complete(messages: readonly ChatMessage[], signal?: AbortSignal): Promise<string> {
    return (await this.handle()).complete(messages, signal);
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
    return { baseUrl: settings.baseUrl, apiKey, model: settings.model, policy: policyOf(settings) };
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
        scenario = err instanceof ScenarioError ? err : new ScenarioError(`${file}: ${err instanceof Error ? err.message : String(err)}`);
      }
      this.scenarioCache = { file, mtimeMs, scenario };
      server?.resetCounts();
      this.log.info(`offline scenario ${file} ${scenario instanceof ScenarioError ? `is invalid: ${scenario.message}` : 'loaded'}`);
    }
    const cached = this.scenarioCache.scenario;
    return cached instanceof ScenarioError ? errorScenario(`The offline scenario is invalid: ${cached.message}`) : cached;
  }
}

function errorScenario(message: string): Scenario {
  return { rules: [{ respond: { error: { status: 500, message } } }] };
}

function policyOf(settings: CandorSettings): RequestPolicy {
  return { idleTimeoutMs: settings.idleTimeoutSeconds * 1000, maxRetries: settings.maxRetries, maxOutputTokens: settings.maxOutputTokens };
}
