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
import type { ParentFolderRule as ParentFolders } from '../git';

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
  readonly repository: string;
  readonly openRepositoryInParentFolders: ParentFolders;
  /** Workspace URLs that wait for the user's confirmation (nothing is sent there meanwhile). */
  readonly pendingUrls: readonly string[];
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

  /** The value in force: folder over workspace over user over default, within the rules. */
  function get<T>(key: string, valid: (value: unknown) => value is T, fallback: T): T {
    const i = inspect<unknown>(key);
    const workspaceAllowed = !userOnly.has(key) && (trusted || !restricted.has(key));
    const layers = workspaceAllowed ? [i?.workspaceFolderValue, i?.workspaceValue, i?.globalValue, i?.defaultValue] : [i?.globalValue, i?.defaultValue];
    for (const value of layers) if (valid(value)) return value;
    return fallback;
  }
  const num = (key: string, fallback: number): number => get(key, isFiniteNumber, fallback);
  const str = (key: string, fallback: string): string => get(key, isString, fallback).trim();

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

  return {
    baseUrl,
    baseUrlSource,
    model: str('model', ''),
    models,
    contextWindow: positive(num('contextWindow', 128000), 128000),
    maxOutputTokens: positive(num('maxOutputTokens', 4096), 4096),
    idleTimeoutSeconds: positive(num('request.idleTimeoutSeconds', 60), 60),
    maxRetries: clamp(Math.floor(num('request.maxRetries', 2)), 0, 10),
    thresholdPercent: clamp(num('compaction.thresholdPercent', 80), 10, 99),
    keepTurns: Math.max(1, Math.floor(num('compaction.keepTurns', 4))),
    dataDir: str('dataDir', ''),
    memoryPath: str('memory.path', ''),
    condenseAboveBytes: positive(num('memory.condenseAboveBytes', 65536), 65536),
    scenario: str('offline.scenario', ''),
    testCommand: get('evolution.testCommand', isString, 'npm test'),
    buildCommand: get('evolution.buildCommand', isString, ''),
    setupCommand: get('evolution.setupCommand', isString, ''),
    maxChangedLines: positive(num('evolution.maxChangedLines', 200), 200),
    maxChangedFiles: positive(num('evolution.maxChangedFiles', 10), 10),
    intervalMinutes: Math.max(0, num('evolution.intervalMinutes', 0)),
    sandbox: get('evolution.sandbox', (v): v is SandboxMode => v === 'required' || v === 'off', 'required'),
    repository: str('evolution.repository', ''),
    openRepositoryInParentFolders: get('git.openRepositoryInParentFolders', (v): v is ParentFolders => v === 'always' || v === 'never', 'never'),
    pendingUrls: [...pending],
  };
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

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function positive(value: number, fallback: number): number {
  return value > 0 ? value : fallback;
}

function clamp(value: number, low: number, high: number): number {
  return Math.max(low, Math.min(high, value));
}
