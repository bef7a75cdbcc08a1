import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { manifestDefault, manifestDefaults } from '../../../../src/core/settings/manifest';
import { resolveCandorSettings, type Inspect } from '../../../../src/core/settings/resolve';
import { DEFAULT_SETTINGS, SETTING_KEYS } from '../../../../src/core/promptEvolution/settings';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../../package.json'), 'utf8')) as {
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
});
