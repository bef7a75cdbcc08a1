import * as fs from 'node:fs';
import type OpenAI from 'openai';
import { createClient } from '../../core/provider/stream';
import { startOfflineServer, type OfflineServer } from '../../core/offline/server';
import { parseScenario, ScenarioError, type Scenario } from '../../core/offline/scenario';
import { demoScenario } from '../../core/offline/demoScenario';
import { providerSlug } from '../../core/context/slug';
import type { Logger } from '../../core/log';
import type { Identity, ProviderHandle } from '../../core/chat/conversation';
import type { ProviderInfo } from '../../protocol/chat';
import type { CandorSettings } from '../settings/config';

export const OFFLINE_LABEL = 'Offline demo — scripted replies, not a model';
export const OFFLINE_MODEL = 'candor-offline';

export class ProviderError extends Error {
  constructor(readonly kind: 'no-model' | 'offline-failed', message: string) {
    super(message);
  }
}

/**
 * Resolves the provider of each request from the settings in force: a real
 * OpenAI-compatible endpoint, or — with no base URL — the embedded offline
 * server, started on first use. Both are reached through the same SDK.
 */
export class Providers {
  private offline: Promise<OfflineServer> | undefined;
  private scenarioCache: { file: string; mtimeMs: number; scenario: Scenario | ScenarioError } | undefined;

  constructor(
    private readonly settings: () => CandorSettings,
    private readonly apiKey: () => Promise<string | undefined>,
    private readonly countTokens: (text: string) => Promise<number>,
    private readonly log: Logger,
  ) {}

  identity(settings = this.settings()): Identity {
    if (!settings.baseUrl) return { provider: 'offline', model: settings.model || OFFLINE_MODEL };
    return { provider: providerSlug(settings.baseUrl), model: settings.model };
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

  async handle(): Promise<ProviderHandle> {
    const settings = this.settings();
    const identity = this.identity(settings);
    if (!settings.baseUrl) {
      const server = await this.offlineServer();
      return { client: createClient(server.baseUrl, 'offline'), identity };
    }
    if (!identity.model) {
      throw new ProviderError('no-model', 'No model is set for this provider. Run "Candor: Select Model" or set candor.model.');
    }
    return { client: createClient(settings.baseUrl, (await this.apiKey()) ?? ''), identity };
  }

  /** Base URL and a client for one-off requests (summaries, model lists). */
  async client(): Promise<{ client: OpenAI; baseUrl: string }> {
    const settings = this.settings();
    if (!settings.baseUrl) {
      const server = await this.offlineServer();
      return { client: createClient(server.baseUrl, 'offline'), baseUrl: server.baseUrl };
    }
    return { client: createClient(settings.baseUrl, (await this.apiKey()) ?? ''), baseUrl: settings.baseUrl };
  }

  dispose(): void {
    void this.offline?.then((s) => s.close()).catch(() => undefined);
  }

  private offlineServer(): Promise<OfflineServer> {
    this.offline ??= (async () => {
      const server: OfflineServer = await startOfflineServer({ scenario: () => this.scenario(server), countTokens: this.countTokens });
      this.log.info(`offline provider listening on ${server.baseUrl}`);
      return server;
    })().catch((err: unknown) => {
      this.offline = undefined;
      throw new ProviderError('offline-failed', `The offline provider could not start: ${String(err)}`);
    });
    return this.offline;
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
