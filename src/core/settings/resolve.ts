/**
 * Candor's settings with the trust rules of docs/architecture.md ("Settings
 * and trust"), as a pure function over what VS Code's `inspect()` reports, so
 * that the rules are unit-tested without VS Code.
 *
 * - Restricted settings send the API key somewhere or run commands: a
 *   workspace value counts only in a trusted workspace.
 * - User-only settings never take a workspace value, trusted or not (the
 *   manifest declares them `"scope": "machine"`).
 * - A workspace URL (`baseUrl`, or a `models` entry `model @ url`) is used
 *   only after the user confirmed that URL once.
 */

import type { SandboxMode } from '../evolution/sandbox';
import { manifestDefault } from './manifest';
import type { ParentFolderRule as ParentFolders } from '../git';
import { DEFAULT_LOCAL_SERVERS, mergeLocalServers, parseLocalServers, type LocalServer } from '../provider/localServers';

/** The shape of `WorkspaceConfiguration.inspect(key)`, reduced to what the rules read. */
export interface Inspected<T> {
  readonly defaultValue?: T;
  readonly globalValue?: T;
  readonly workspaceValue?: T;
  readonly workspaceFolderValue?: T;
}

export type Inspect = <T>(key: string) => Inspected<T> | undefined;

/** Keys under `candor.` whose workspace value needs a trusted workspace (the manifest's `restrictedConfigurations`). */
export const RESTRICTED_SETTINGS: readonly string[] = [
  'baseUrl',
  'models',
  'dataDir',
  'offline.scenario',
  'evolution.testCommand',
  'evolution.buildCommand',
  'evolution.setupCommand',
  'evolution.intervalMinutes',
  'memory.path',
];

/** Keys under `candor.` read from the user's settings only (`"scope": "machine"`). */
export const USER_ONLY_SETTINGS: readonly string[] = [
  'evolution.sandbox',
  'evolution.sandboxUid',
  'evolution.environment',
  'evolution.rerunFailedGate',
  'evolution.limits.processes',
  'evolution.limits.memoryMiB',
  'evolution.limits.fileSizeMiB',
  'evolution.limits.diskMiB',
  'evolution.repository',
  'git.openRepositoryInParentFolders',
];


/** A `candor.models` entry: a model id, optionally on another provider. */
export interface ModelChoice {
  readonly model: string;
  readonly baseUrl?: string;
  /** Where the entry came from; a workspace URL is written back to workspace settings only. */
  readonly source: 'user' | 'workspace';
}

export interface CandorSettings {
  readonly baseUrl: string;
  /** Where `baseUrl` came from. */
  readonly baseUrlSource: 'user' | 'workspace';
  readonly model: string;
  readonly models: readonly ModelChoice[];
  readonly contextWindow: number;
  /** `candor.contextWindow` was set (in any layer): it wins over the window a local server reports. */
  readonly contextWindowSet: boolean;
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
  readonly sandbox: SandboxMode;
  /** The unprivileged uid evolution's commands run as when Candor runs as root. */
  readonly sandboxUid: number;
  /** Variable names passed on to evolution's commands beside the allow-list. */
  readonly evolutionEnvironment: readonly string[];
  readonly maxChangedBytes: number;
  readonly rerunFailedGate: boolean;
  readonly limits: EvolutionLimits;
  readonly repository: string;
  readonly openRepositoryInParentFolders: ParentFolders;
  /** `candor.localServers`, with `sendKey` from the user's own settings only (see `localServersOf`). */
  readonly localServers: readonly LocalServer[];
  /** Workspace URLs that wait for the user's confirmation (nothing is sent there meanwhile). */
  readonly pendingUrls: readonly string[];
}

/** `candor.evolution.limits.*`: what one evolution command may consume. */
export interface EvolutionLimits {
  readonly processes: number;
  readonly memoryMiB: number;
  readonly fileSizeMiB: number;
  readonly diskMiB: number;
}

export interface ResolveInput {
  readonly inspect: Inspect;
  readonly trusted: boolean;
  readonly confirmedUrls: readonly string[];
}

export function resolveCandorSettings({ inspect, trusted, confirmedUrls }: ResolveInput): CandorSettings {
  const confirmed = new Set(confirmedUrls);
  const pending = new Set<string>();
  const restricted = new Set(RESTRICTED_SETTINGS);
  const userOnly = new Set(USER_ONLY_SETTINGS);

  /**
   * The value in force: folder over workspace over user over default, within
   * the rules; a value of the wrong type is passed over, down to the
   * manifest's default (the one place defaults are written down).
   */
  function get<T>(key: string, valid: (value: unknown) => value is T): T {
    const i = inspect<unknown>(key);
    const workspaceAllowed = !userOnly.has(key) && (trusted || !restricted.has(key));
    const layers = workspaceAllowed ? [i?.workspaceFolderValue, i?.workspaceValue, i?.globalValue, i?.defaultValue] : [i?.globalValue, i?.defaultValue];
    for (const value of layers) if (valid(value)) return value;
    return defaultOf(key, valid);
  }
  const num = (key: string): number => get(key, isFiniteNumber);
  const str = (key: string): string => get(key, isString).trim();
  /** A number the manifest bounds below: an out-of-range value falls back to the default. */
  const atLeast = (key: string, low: number): number => {
    const value = num(key);
    return value >= low ? value : defaultOf(key, isFiniteNumber);
  };

  const url = inspect<string>('baseUrl');
  const workspaceUrl = firstString(url?.workspaceFolderValue, url?.workspaceValue)?.trim();
  let baseUrl = isString(url?.globalValue) ? url.globalValue.trim() : '';
  let baseUrlSource: 'user' | 'workspace' = 'user';
  if (workspaceUrl !== undefined && trusted) {
    if (confirmed.has(workspaceUrl) || workspaceUrl === '') {
      baseUrl = workspaceUrl;
      baseUrlSource = 'workspace';
    } else pending.add(workspaceUrl);
  }

  const modelsInspected = inspect<unknown>('models');
  const models: ModelChoice[] = [];
  for (const entry of stringList(modelsInspected?.globalValue)) pushChoice(models, entry, 'user');
  if (trusted) {
    for (const entry of [...stringList(modelsInspected?.workspaceValue), ...stringList(modelsInspected?.workspaceFolderValue)]) {
      const choice = parseModelEntry(entry, 'workspace');
      if (choice === undefined) continue;
      if (choice.baseUrl !== undefined && !confirmed.has(choice.baseUrl)) {
        pending.add(choice.baseUrl);
        continue;
      }
      if (!models.some((m) => m.model === choice.model && m.baseUrl === choice.baseUrl)) models.push(choice);
    }
  }

  const windowSetting = inspect<unknown>('contextWindow');
  return {
    baseUrl,
    baseUrlSource,
    model: str('model'),
    models,
    contextWindow: atLeast('contextWindow', 1),
    contextWindowSet: [windowSetting?.workspaceFolderValue, windowSetting?.workspaceValue, windowSetting?.globalValue].some((v) => isFiniteNumber(v) && v > 0),
    maxOutputTokens: atLeast('maxOutputTokens', 1),
    idleTimeoutSeconds: atLeast('request.idleTimeoutSeconds', 1),
    maxRetries: clamp(Math.floor(num('request.maxRetries')), 0, 10),
    thresholdPercent: clamp(num('compaction.thresholdPercent'), 10, 99),
    keepTurns: Math.max(1, Math.floor(num('compaction.keepTurns'))),
    dataDir: str('dataDir'),
    memoryPath: str('memory.path'),
    condenseAboveBytes: atLeast('memory.condenseAboveBytes', 1),
    scenario: str('offline.scenario'),
    testCommand: get('evolution.testCommand', isString),
    buildCommand: get('evolution.buildCommand', isString),
    setupCommand: get('evolution.setupCommand', isString),
    maxChangedLines: atLeast('evolution.maxChangedLines', 1),
    maxChangedFiles: atLeast('evolution.maxChangedFiles', 1),
    intervalMinutes: Math.max(0, num('evolution.intervalMinutes')),
    sandbox: get('evolution.sandbox', (v): v is SandboxMode => v === 'required' || v === 'off'),
    sandboxUid: Math.floor(atLeast('evolution.sandboxUid', 1)),
    evolutionEnvironment: get('evolution.environment', isStringList).map((name) => name.trim()).filter((name) => name !== ''),
    maxChangedBytes: Math.floor(atLeast('evolution.maxChangedBytes', 1)),
    rerunFailedGate: get('evolution.rerunFailedGate', isBoolean),
    limits: {
      processes: Math.floor(atLeast('evolution.limits.processes', 16)),
      memoryMiB: Math.floor(atLeast('evolution.limits.memoryMiB', 64)),
      fileSizeMiB: Math.floor(atLeast('evolution.limits.fileSizeMiB', 1)),
      diskMiB: Math.floor(atLeast('evolution.limits.diskMiB', 16)),
    },
    repository: str('evolution.repository'),
    openRepositoryInParentFolders: get('git.openRepositoryInParentFolders', (v): v is ParentFolders => v === 'always' || v === 'never'),
    localServers: localServersOf(inspect<unknown>('localServers')),
    pendingUrls: [...pending],
  };
}

/**
 * `candor.localServers` is not restricted: its ports are only ever probed on
 * 127.0.0.1 with no key, so a workspace value is read even in an untrusted
 * workspace. What could send the key, `sendKey`, is read from the user's own
 * settings only, and the user's ports stay listed whatever the workspace says:
 * a workspace can add keyless ports, never remove one or turn its key on.
 */
export function localServersOf(inspected: Inspected<unknown> | undefined): LocalServer[] {
  const users = parseLocalServers(inspected?.globalValue, true) ?? parseLocalServers(inspected?.defaultValue, false) ?? [...DEFAULT_LOCAL_SERVERS];
  const workspace = parseLocalServers(inspected?.workspaceFolderValue, false) ?? parseLocalServers(inspected?.workspaceValue, false);
  return mergeLocalServers(workspace ?? users, users);
}

/** `model` or `model @ https://host/v1`; undefined for an empty entry. */
export function parseModelEntry(entry: string, source: ModelChoice['source']): ModelChoice | undefined {
  const [model = '', baseUrl] = entry.split(/\s+@\s+/);
  if (model.trim() === '') return undefined;
  return baseUrl !== undefined && baseUrl.trim() !== '' ? { model: model.trim(), baseUrl: baseUrl.trim(), source } : { model: model.trim(), source };
}

/** Where Select Model writes a picked model: a workspace URL stays in the workspace's settings. */
export function modelWriteTarget(choice: Pick<ModelChoice, 'baseUrl' | 'source'>): 'global' | 'workspace' {
  return choice.baseUrl !== undefined && choice.source === 'workspace' ? 'workspace' : 'global';
}

function pushChoice(into: ModelChoice[], entry: string, source: ModelChoice['source']): void {
  const choice = parseModelEntry(entry, source);
  if (choice !== undefined) into.push(choice);
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter(isString) : [];
}

function firstString(...values: unknown[]): string | undefined {
  return values.find(isString);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isBoolean(value: unknown): value is boolean {
  return typeof value === 'boolean';
}

function isStringList(value: unknown): value is string[] {
  return Array.isArray(value) && value.every(isString);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}


function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(high, value));
}

/** The manifest's default of `candor.<key>`; a missing or mistyped default is a bug in the manifest. */
function defaultOf<T>(key: string, valid: (value: unknown) => value is T): T {
  const value = manifestDefault(key);
  if (!valid(value)) throw new Error(`package.json declares no valid default for candor.${key}`);
  return value;
}
