import * as vscode from 'vscode';

/**
 * Settings, with the trust rules of the contract: settings that send the API
 * key somewhere or run commands take a workspace value only in a trusted
 * workspace, and a workspace `baseUrl` only after the user confirmed it once.
 */
const RESTRICTED = new Set([
  'baseUrl',
  'dataDir',
  'offline.scenario',
  'evolution.testCommand',
  'evolution.buildCommand',
  'evolution.setupCommand',
  'memory.path',
]);

export interface CandorSettings {
  readonly baseUrl: string;
  readonly model: string;
  readonly models: readonly string[];
  readonly contextWindow: number;
  readonly maxOutputTokens: number;
  readonly idleTimeoutSeconds: number;
  readonly maxRetries: number;
  readonly thresholdPercent: number;
  readonly keepTurns: number;
  readonly dataDir: string;
  readonly memoryPath: string;
  readonly condenseAboveBytes: number;
  readonly scenario: string;
  readonly testCommand: string;
  readonly buildCommand: string;
  readonly setupCommand: string;
  readonly maxChangedLines: number;
  readonly maxChangedFiles: number;
  readonly intervalMinutes: number;
  /** A workspace baseUrl that waits for the user's confirmation (the user value is used meanwhile). */
  readonly pendingWorkspaceBaseUrl?: string;
}

export class Settings {
  constructor(private readonly state: vscode.Memento) {}

  read(): CandorSettings {
    const c = vscode.workspace.getConfiguration('candor');
    const get = <T>(key: string, fallback: T): T => this.value(c, key, fallback);
    const workspaceBaseUrl = this.workspaceValue<string>(c, 'baseUrl');
    const confirmed = workspaceBaseUrl !== undefined && this.confirmedBaseUrls().includes(workspaceBaseUrl);
    const userBaseUrl = c.inspect<string>('baseUrl')?.globalValue ?? '';
    const baseUrl = workspaceBaseUrl !== undefined && vscode.workspace.isTrusted && confirmed ? workspaceBaseUrl : userBaseUrl;
    return {
      baseUrl: baseUrl.trim(),
      model: get('model', '').trim(),
      models: get<string[]>('models', []).filter((m) => typeof m === 'string' && m.trim() !== ''),
      contextWindow: positive(get('contextWindow', 128000), 128000),
      maxOutputTokens: positive(get('maxOutputTokens', 4096), 4096),
      idleTimeoutSeconds: positive(get('request.idleTimeoutSeconds', 60), 60),
      maxRetries: Math.max(0, Math.min(10, Math.floor(get('request.maxRetries', 2)))),
      thresholdPercent: Math.max(10, Math.min(99, get('compaction.thresholdPercent', 80))),
      keepTurns: Math.max(1, Math.floor(get('compaction.keepTurns', 4))),
      dataDir: get('dataDir', '').trim(),
      memoryPath: get('memory.path', '').trim(),
      condenseAboveBytes: positive(get('memory.condenseAboveBytes', 65536), 65536),
      scenario: get('offline.scenario', '').trim(),
      testCommand: get('evolution.testCommand', 'npm test'),
      buildCommand: get('evolution.buildCommand', ''),
      setupCommand: get('evolution.setupCommand', ''),
      maxChangedLines: positive(get('evolution.maxChangedLines', 200), 200),
      maxChangedFiles: positive(get('evolution.maxChangedFiles', 10), 10),
      intervalMinutes: Math.max(0, get('evolution.intervalMinutes', 0)),
      pendingWorkspaceBaseUrl: workspaceBaseUrl !== undefined && !confirmed && vscode.workspace.isTrusted ? workspaceBaseUrl : undefined,
    };
  }

  confirmedBaseUrls(): string[] {
    return this.state.get<string[]>('candor.confirmedBaseUrls', []);
  }

  async confirmBaseUrl(url: string): Promise<void> {
    await this.state.update('candor.confirmedBaseUrls', [...new Set([...this.confirmedBaseUrls(), url])]);
  }

  private value<T>(c: vscode.WorkspaceConfiguration, key: string, fallback: T): T {
    if (RESTRICTED.has(key) && !vscode.workspace.isTrusted) {
      const inspected = c.inspect<T>(key);
      return inspected?.globalValue ?? inspected?.defaultValue ?? fallback;
    }
    return c.get<T>(key, fallback);
  }

  private workspaceValue<T>(c: vscode.WorkspaceConfiguration, key: string): T | undefined {
    const inspected = c.inspect<T>(key);
    return inspected?.workspaceFolderValue ?? inspected?.workspaceValue;
  }
}

function positive(value: number, fallback: number): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : fallback;
}
