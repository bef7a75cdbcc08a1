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

import type { SandboxMode } from '../sandbox/sandbox';
import { manifestDefault } from '../manifest';
import type { ParentFolderRule as ParentFolders } from '../git';
import { DEFAULT_LOCAL_SERVERS, mergeLocalServers, parseLocalServers, type LocalServer } from '../provider/localServers';
import { SETTING_KEYS as PROMPT_EVOLUTION_KEYS, type PromptEvolutionValues } from '../promptEvolution/settings';

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
  'evolution.remote',
  'github.apiUrl',
  'github.baseRepository',
  'git.openRepositoryInParentFolders',
  'commands.autoApprove',
  'commands.network',
  'commands.environment',
  'commands.bindIgnored',
  'mcp.autoApproveReadOnly',
  'mcp.environment',
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
  /** 0: no limit on the wait for the first chunk of a reply. */
  readonly firstTokenTimeoutSeconds: number;
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
  /** Open Pull Request: where the branch is pushed, which API opens the pull request, and how long its CI is followed. */
  readonly pullRequests: PullRequestSettings;
  readonly openRepositoryInParentFolders: ParentFolders;
  /** `candor.localServers`, with `sendKey` from the user's own settings only (see `localServersOf`). */
  readonly localServers: readonly LocalServer[];
  /** Workspace URLs that wait for the user's confirmation (nothing is sent there meanwhile). */
  readonly pendingUrls: readonly string[];
  readonly commands: CommandSettings;
  readonly mcp: McpSettings;
  /** `candor.promptEvolution.*` as set, of any type: prompt evolution's `resolveSettings` checks each and names a bad one. */
  readonly promptEvolution: PromptEvolutionValues;
}

/** `candor.commands.*`: the agent's `run_command` (the lists and the network from the user's settings only). */
export interface CommandSettings {
  readonly enabled: boolean;
  /** Prefixes that need no click (commandText.ts says when one covers a line). */
  readonly autoApprove: readonly string[];
  readonly network: boolean;
  readonly timeoutSeconds: number;
  readonly environment: readonly string[];
  readonly bindIgnored: readonly string[];
}

/** `candor.mcp.*`. */
export interface McpSettings {
  readonly enabled: boolean;
  readonly autoApproveReadOnly: boolean;
  readonly callTimeoutSeconds: number;
  readonly environment: readonly string[];
}

/** `candor.evolution.remote`, `candor.github.*` (all user settings only) and `candor.evolution.ciTimeoutMinutes`. */
export interface PullRequestSettings {
  readonly remote: string;
  /** Empty: derived from the remote (github.com only). */
  readonly apiUrl: string;
  /** `owner/repo`; empty: the remote's repository, or its parent for a fork. */
  readonly baseRepository: string;
  readonly ciTimeoutMinutes: number;
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
  const urls = { confirmed: new Set(confirmedUrls), pending: new Set<string>() };
  const read = settingReader(inspect, trusted);
  const windowSetting = inspect<unknown>('contextWindow');
  return {
    ...baseUrlOf(inspect, trusted, urls),
    model: read.str('model'),
    models: modelsOf(inspect, trusted, urls),
    contextWindow: read.atLeast('contextWindow', 1),
    contextWindowSet: [windowSetting?.workspaceFolderValue, windowSetting?.workspaceValue, windowSetting?.globalValue].some((v) => isFiniteNumber(v) && v > 0),
    maxOutputTokens: read.atLeast('maxOutputTokens', 1),
    idleTimeoutSeconds: read.atLeast('request.idleTimeoutSeconds', 1),
    firstTokenTimeoutSeconds: read.atLeast('request.firstTokenTimeoutSeconds', 0),
    maxRetries: clamp(Math.floor(read.num('request.maxRetries')), 0, 10),
    thresholdPercent: clamp(read.num('compaction.thresholdPercent'), 10, 99),
    keepTurns: Math.max(1, Math.floor(read.num('compaction.keepTurns'))),
    dataDir: read.str('dataDir'),
    memoryPath: read.str('memory.path'),
    condenseAboveBytes: read.atLeast('memory.condenseAboveBytes', 1),
    scenario: read.str('offline.scenario'),
    ...evolutionOf(read),
    openRepositoryInParentFolders: read.get('git.openRepositoryInParentFolders', (v): v is ParentFolders => v === 'always' || v === 'never'),
    localServers: localServersOf(inspect<unknown>('localServers')),
    pendingUrls: [...urls.pending],
    commands: {
      enabled: read.get('commands.enabled', isBoolean),
      autoApprove: names(read.get('commands.autoApprove', isStringList)),
      network: read.get('commands.network', isString) === 'on',
      timeoutSeconds: read.atLeast('commands.timeoutSeconds', 1),
      environment: names(read.get('commands.environment', isStringList)),
      bindIgnored: names(read.get('commands.bindIgnored', isStringList)),
    },
    mcp: {
      enabled: read.get('mcp.enabled', isBoolean),
      autoApproveReadOnly: read.get('mcp.autoApproveReadOnly', isBoolean),
      callTimeoutSeconds: read.atLeast('mcp.callTimeoutSeconds', 1),
      environment: names(read.get('mcp.environment', isStringList)),
    },
    promptEvolution: Object.fromEntries(PROMPT_EVOLUTION_KEYS.map((key) => [key, read.get(`promptEvolution.${key}`, isSet)])),
  };
}

/** A list setting's entries, trimmed, blanks dropped. */
function names(list: readonly string[]): string[] {
  return list.map((entry) => entry.trim()).filter((entry) => entry !== '');
}

/** Workspace URLs the user confirmed, and those found that wait for it. */
interface UrlState {
  readonly confirmed: ReadonlySet<string>;
  readonly pending: Set<string>;
}

interface SettingReader {
  get<T>(key: string, valid: (value: unknown) => value is T): T;
  num(key: string): number;
  str(key: string): string;
  /** A number the manifest bounds below: an out-of-range value falls back to the default. */
  atLeast(key: string, low: number): number;
}

function settingReader(inspect: Inspect, trusted: boolean): SettingReader {
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
  return {
    get,
    num,
    str: (key) => get(key, isString).trim(),
    atLeast: (key, low) => {
      const value = num(key);
      return value >= low ? value : defaultOf(key, isFiniteNumber);
    },
  };
}

/** The user's URL, or a trusted workspace's once the user confirmed it (an unconfirmed one waits in `pending`). */
function baseUrlOf(inspect: Inspect, trusted: boolean, urls: UrlState): Pick<CandorSettings, 'baseUrl' | 'baseUrlSource'> {
  const url = inspect<string>('baseUrl');
  const workspaceUrl = firstString(url?.workspaceFolderValue, url?.workspaceValue)?.trim();
  const userUrl = isString(url?.globalValue) ? url.globalValue.trim() : '';
  if (workspaceUrl === undefined || !trusted) return { baseUrl: userUrl, baseUrlSource: 'user' };
  if (urls.confirmed.has(workspaceUrl) || workspaceUrl === '') return { baseUrl: workspaceUrl, baseUrlSource: 'workspace' };
  urls.pending.add(workspaceUrl);
  return { baseUrl: userUrl, baseUrlSource: 'user' };
}

/** The user's models, then a trusted workspace's (one naming an unconfirmed URL waits in `pending`). */
function modelsOf(inspect: Inspect, trusted: boolean, urls: UrlState): ModelChoice[] {
  const inspected = inspect<unknown>('models');
  const models: ModelChoice[] = [];
  for (const entry of stringList(inspected?.globalValue)) pushChoice(models, entry, 'user');
  if (!trusted) return models;
  for (const entry of [...stringList(inspected?.workspaceValue), ...stringList(inspected?.workspaceFolderValue)]) {
    const choice = parseModelEntry(entry, 'workspace');
    if (choice === undefined) continue;
    if (choice.baseUrl !== undefined && !urls.confirmed.has(choice.baseUrl)) {
      urls.pending.add(choice.baseUrl);
      continue;
    }
    if (!models.some((m) => m.model === choice.model && m.baseUrl === choice.baseUrl)) models.push(choice);
  }
  return models;
}

type EvolutionSettings = Pick<CandorSettings,
  | 'testCommand' | 'buildCommand' | 'setupCommand' | 'maxChangedLines' | 'maxChangedFiles' | 'intervalMinutes' | 'sandbox' | 'sandboxUid'
  | 'evolutionEnvironment' | 'maxChangedBytes' | 'rerunFailedGate' | 'limits' | 'repository' | 'pullRequests'>;

function evolutionOf(read: SettingReader): EvolutionSettings {
  return {
    testCommand: read.get('evolution.testCommand', isString),
    buildCommand: read.get('evolution.buildCommand', isString),
    setupCommand: read.get('evolution.setupCommand', isString),
    maxChangedLines: read.atLeast('evolution.maxChangedLines', 1),
    maxChangedFiles: read.atLeast('evolution.maxChangedFiles', 1),
    intervalMinutes: Math.max(0, read.num('evolution.intervalMinutes')),
    sandbox: read.get('evolution.sandbox', (v): v is SandboxMode => v === 'required' || v === 'off'),
    sandboxUid: Math.floor(read.atLeast('evolution.sandboxUid', 1)),
    evolutionEnvironment: names(read.get('evolution.environment', isStringList)),
    maxChangedBytes: Math.floor(read.atLeast('evolution.maxChangedBytes', 1)),
    rerunFailedGate: read.get('evolution.rerunFailedGate', isBoolean),
    limits: {
      processes: Math.floor(read.atLeast('evolution.limits.processes', 16)),
      memoryMiB: Math.floor(read.atLeast('evolution.limits.memoryMiB', 64)),
      fileSizeMiB: Math.floor(read.atLeast('evolution.limits.fileSizeMiB', 1)),
      diskMiB: Math.floor(read.atLeast('evolution.limits.diskMiB', 16)),
    },
    repository: read.str('evolution.repository'),
    pullRequests: {
      remote: read.str('evolution.remote') || 'origin',
      apiUrl: read.str('github.apiUrl'),
      baseRepository: read.str('github.baseRepository'),
      ciTimeoutMinutes: read.atLeast('evolution.ciTimeoutMinutes', 1),
    },
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

function isSet(value: unknown): value is unknown {
  return value !== undefined;
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
