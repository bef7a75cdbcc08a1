import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { manifestDefault, manifestDefaults } from '../../../src/core/manifest';
import { resolveCandorSettings, type Inspect } from '../../../src/core/settings/resolve';
import { DEFAULT_SETTINGS, resolveSettings, SETTING_KEYS } from '../../../src/core/promptEvolution/settings';
import { DEFAULT_POLICY } from '../../../src/core/provider/chatModel';
import { DEFAULT_LOCAL_SERVERS, formatLocalServer } from '../../../src/core/provider/localServers';
import { DEFAULT_GATE_LIMITS } from '../../../src/core/sandbox/limits';
import { DEFAULT_SANDBOX_UID } from '../../../src/core/sandbox/gateUser';
import { DEFAULT_MAX_CHANGED_BYTES } from '../../../src/core/evolution/measure';
import type { CandorSettings } from '../../../src/core/settings/resolve';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default?: unknown }> } };
};
const properties = manifest.contributes.configuration.properties;

describe('defaults: read from the manifest in one place', () => {
  it('manifestDefault is what package.json declares', () => {
    for (const [key, property] of Object.entries(properties)) assert.deepEqual(manifestDefault(key.replace(/^candor\./, '')), property.default, key);
    assert.equal(manifestDefault('no.such.setting'), undefined);
  });

  it('with nothing set, the CLI resolves exactly the manifest\'s defaults, and every key read has one', () => {
    const read: string[] = [];
    const recording: Inspect = <T>(key: string) => {
      read.push(key);
      return manifestDefaults<T>(key);
    };
    const s = resolveCandorSettings({ inspect: recording, trusted: true, confirmedUrls: [] });
    for (const key of read) assert.ok(`candor.${key}` in properties, `candor.${key} is read but the manifest declares no such setting`);
    assert.equal(s.testCommand, properties['candor.evolution.testCommand']?.default);
    assert.equal(s.maxChangedLines, properties['candor.evolution.maxChangedLines']?.default);
    assert.equal(s.maxChangedFiles, properties['candor.evolution.maxChangedFiles']?.default);
    assert.equal(s.contextWindow, properties['candor.contextWindow']?.default);
    assert.equal(s.keepTurns, properties['candor.compaction.keepTurns']?.default);
  });

  it('prompt evolution\'s defaults are the manifest\'s, and the host reads every candor.promptEvolution.* setting the manifest declares', () => {
    const declared = Object.keys(properties).filter((k) => k.startsWith('candor.promptEvolution.')).map((k) => k.slice('candor.promptEvolution.'.length));
    assert.deepEqual([...SETTING_KEYS].sort(), declared.sort());
    for (const key of SETTING_KEYS) assert.equal(DEFAULT_SETTINGS[key], properties[`candor.promptEvolution.${key}`]?.default, key);
  });

  describe('every default of contributes.configuration is the one the code uses when the setting is absent', () => {
    // Nothing set and no default reported (the CLI, a reader of the snapshot's fallbacks), and the manifest's
    // defaults as VS Code reports them: both must give what package.json declares.
    const absent = resolveCandorSettings({ inspect: () => undefined, trusted: true, confirmedUrls: [] });
    const reported = resolveCandorSettings({ inspect: manifestDefaults, trusted: true, confirmedUrls: [] });
    const everyKey = Object.keys(properties).map((k) => k.replace(/^candor\./, ''));

    it('each setting has a reading below (a new setting gets one)', () => {
      assert.deepEqual(Object.keys(CODE_DEFAULTS).sort(), [...everyKey].sort(), 'the settings the table below reads, against package.json');
    });

    for (const key of everyKey) {
      it(`candor.${key}`, () => {
        const declared = properties[`candor.${key}`]?.default;
        const readings = CODE_DEFAULTS[key];
        assert.ok(readings !== undefined, `candor.${key} has no reading in this test`);
        assert.deepEqual(readings.snapshot(absent), declared, `candor.${key}: the settings snapshot with nothing set`);
        assert.deepEqual(readings.snapshot(reported), declared, `candor.${key}: the settings snapshot with the defaults reported`);
        for (const [name, value] of Object.entries(readings.constants ?? {})) assert.deepEqual(value(), declared, `candor.${key}: ${name}`);
      });
    }
  });
});

/**
 * Where the code keeps each setting's default, in the manifest's own form
 * (seconds, not milliseconds; the strings of a list): what the settings
 * snapshot holds, and each constant that stands for the default where no
 * snapshot is at hand (the CLI, the core's own fallbacks).
 */
interface Readings {
  readonly snapshot: (s: CandorSettings) => unknown;
  readonly constants?: Readonly<Record<string, () => unknown>>;
}

const perSecond = (ms: number | undefined): number | undefined => (ms === undefined ? undefined : ms / 1000);

const CODE_DEFAULTS: Readonly<Record<string, Readings>> = {
  baseUrl: { snapshot: (s) => s.baseUrl },
  model: { snapshot: (s) => s.model },
  models: { snapshot: (s) => s.models.map((m) => (m.baseUrl === undefined ? m.model : `${m.model} @ ${m.baseUrl}`)) },
  contextWindow: { snapshot: (s) => s.contextWindow },
  maxOutputTokens: { snapshot: (s) => s.maxOutputTokens },
  'request.idleTimeoutSeconds': { snapshot: (s) => s.idleTimeoutSeconds, constants: { 'DEFAULT_POLICY.idleTimeoutMs': () => perSecond(DEFAULT_POLICY.idleTimeoutMs) } },
  'request.firstTokenTimeoutSeconds': { snapshot: (s) => s.firstTokenTimeoutSeconds, constants: { 'DEFAULT_POLICY.firstTokenTimeoutMs': () => perSecond(DEFAULT_POLICY.firstTokenTimeoutMs) } },
  'request.maxRetries': { snapshot: (s) => s.maxRetries, constants: { 'DEFAULT_POLICY.maxRetries': () => DEFAULT_POLICY.maxRetries } },
  'compaction.thresholdPercent': { snapshot: (s) => s.thresholdPercent },
  'compaction.keepTurns': { snapshot: (s) => s.keepTurns },
  dataDir: { snapshot: (s) => s.dataDir },
  'memory.path': { snapshot: (s) => s.memoryPath },
  'memory.condenseAboveBytes': { snapshot: (s) => s.condenseAboveBytes },
  'offline.scenario': { snapshot: (s) => s.scenario },
  'evolution.testCommand': { snapshot: (s) => s.testCommand },
  'evolution.buildCommand': { snapshot: (s) => s.buildCommand },
  'evolution.setupCommand': { snapshot: (s) => s.setupCommand },
  'evolution.maxChangedLines': { snapshot: (s) => s.maxChangedLines },
  'evolution.maxChangedFiles': { snapshot: (s) => s.maxChangedFiles },
  'evolution.intervalMinutes': { snapshot: (s) => s.intervalMinutes },
  'evolution.repository': { snapshot: (s) => s.repository },
  'evolution.remote': { snapshot: (s) => s.pullRequests.remote },
  'evolution.ciTimeoutMinutes': { snapshot: (s) => s.pullRequests.ciTimeoutMinutes },
  'github.apiUrl': { snapshot: (s) => s.pullRequests.apiUrl },
  'github.baseRepository': { snapshot: (s) => s.pullRequests.baseRepository },
  'evolution.sandbox': { snapshot: (s) => s.sandbox },
  'evolution.sandboxUid': { snapshot: (s) => s.sandboxUid, constants: { DEFAULT_SANDBOX_UID: () => DEFAULT_SANDBOX_UID } },
  'evolution.environment': { snapshot: (s) => s.evolutionEnvironment },
  'evolution.maxChangedBytes': { snapshot: (s) => s.maxChangedBytes, constants: { DEFAULT_MAX_CHANGED_BYTES: () => DEFAULT_MAX_CHANGED_BYTES } },
  'evolution.rerunFailedGate': { snapshot: (s) => s.rerunFailedGate },
  'evolution.limits.processes': { snapshot: (s) => s.limits.processes, constants: { 'DEFAULT_GATE_LIMITS.processes': () => DEFAULT_GATE_LIMITS.processes } },
  'evolution.limits.memoryMiB': { snapshot: (s) => s.limits.memoryMiB, constants: { 'DEFAULT_GATE_LIMITS.memoryMiB': () => DEFAULT_GATE_LIMITS.memoryMiB } },
  'evolution.limits.fileSizeMiB': { snapshot: (s) => s.limits.fileSizeMiB, constants: { 'DEFAULT_GATE_LIMITS.fileSizeMiB': () => DEFAULT_GATE_LIMITS.fileSizeMiB } },
  'evolution.limits.diskMiB': { snapshot: (s) => s.limits.diskMiB, constants: { 'DEFAULT_GATE_LIMITS.diskMiB': () => DEFAULT_GATE_LIMITS.diskMiB } },
  'git.openRepositoryInParentFolders': { snapshot: (s) => s.openRepositoryInParentFolders },
  localServers: { snapshot: (s) => s.localServers.map(formatLocalServer), constants: { DEFAULT_LOCAL_SERVERS: () => DEFAULT_LOCAL_SERVERS.map(formatLocalServer) } },
  ...Object.fromEntries(SETTING_KEYS.map((key): [string, Readings] => [`promptEvolution.${key}`, {
    snapshot: (s) => s.promptEvolution[key],
    constants: { [`DEFAULT_SETTINGS.${key}`]: () => DEFAULT_SETTINGS[key], [`resolveSettings().${key}`]: () => resolveSettings()[key] },
  }])),
  'commands.enabled': { snapshot: (s) => s.commands.enabled },
  'commands.autoApprove': { snapshot: (s) => s.commands.autoApprove },
  'commands.network': { snapshot: (s) => (s.commands.network ? 'on' : 'off') },
  'commands.timeoutSeconds': { snapshot: (s) => s.commands.timeoutSeconds },
  'commands.environment': { snapshot: (s) => s.commands.environment },
  'commands.bindIgnored': { snapshot: (s) => s.commands.bindIgnored },
  'mcp.enabled': { snapshot: (s) => s.mcp.enabled },
  'mcp.autoApproveReadOnly': { snapshot: (s) => s.mcp.autoApproveReadOnly },
  'mcp.callTimeoutSeconds': { snapshot: (s) => s.mcp.callTimeoutSeconds },
  'mcp.environment': { snapshot: (s) => s.mcp.environment },
};
