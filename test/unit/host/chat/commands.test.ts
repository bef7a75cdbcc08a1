import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { WEBVIEW_COMMANDS } from '../../../../src/protocol/chat';
import { REPO_ROOT, commandRegistrations, sourcesUnder } from '../../../helpers/sources';

interface Manifest {
  readonly contributes: {
    readonly commands: ReadonlyArray<{ readonly command: string; readonly title: string; readonly category?: string }>;
    readonly keybindings?: ReadonlyArray<{ readonly command: string }>;
  };
}

/** The extension's sources; the scan must see the file that activates it. */
const sources = (): ReturnType<typeof sourcesUnder> => sourcesUnder('src', ['src/extension.ts'], /\.ts$/);

/** Commands the host runs itself, found in the sources: a status bar item's command, and `executeCommand` calls. */
function commandsRunInSources(): string[] {
  const ids = new Set<string>();
  for (const { code } of sources()) {
    for (const match of code.matchAll(/(?:executeCommand\(|\.command = )\s*['"](candor\.[A-Za-z]+)['"]/g)) ids.add(match[1] ?? '');
  }
  return [...ids].sort();
}

describe('package.json commands and the commands the host registers', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')) as Manifest;
  const declared = manifest.contributes.commands.map((c) => c.command).sort();

  it('each declared command is registered, and each registered one is declared', () => {
    const registered = commandRegistrations();
    assert.ok(registered.length >= 10, `the scan finds the registrations (${registered.length})`);
    assert.deepEqual([...new Set(registered.map((r) => r.id))].sort(), declared);
  });

  it('no command is registered by two features (VS Code would refuse the second at activation)', () => {
    const registered = commandRegistrations();
    assert.ok(registered.length >= 10, `the scan finds the registrations (${registered.length})`);
    const where = new Map<string, Set<string>>();
    for (const { id, file } of registered) where.set(id, (where.get(id) ?? new Set()).add(file));
    for (const [id, files] of where) assert.equal(files.size, 1, `${id} is registered in ${[...files].join(' and ')}`);
  });

  it('every command the host runs, and every keybinding, names a declared command', () => {
    const run = commandsRunInSources();
    assert.ok(run.includes('candor.showDrift'), `the scan finds the gauge's command (${run.join(', ')})`);
    for (const id of [...new Set([...WEBVIEW_COMMANDS, ...run])]) assert.ok(declared.includes(id), `${id} is run but not declared`);
    const bindings = manifest.contributes.keybindings ?? [];
    assert.ok(bindings.length > 0, 'package.json binds keys');
    for (const binding of bindings) assert.ok(declared.includes(binding.command), `a keybinding runs ${binding.command}`);
  });

  it('every command shows as "Candor: <title>" in the palette', () => {
    for (const c of manifest.contributes.commands) {
      assert.equal(c.category, 'Candor', c.command);
      assert.ok(c.title.length > 0 && !c.title.startsWith('Candor'), c.command);
    }
  });
});
