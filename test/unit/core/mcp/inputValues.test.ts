import * as assert from 'node:assert/strict';
import { InputValues, type InputStore } from '../../../../src/core/mcp/inputValues';
import type { McpInput, McpSource } from '../../../../src/core/mcp/types';

/** A store that keeps what it is given in a Map, as SecretStorage would across windows. */
function mapStore(): InputStore & { readonly kept: Map<string, string> } {
  const kept = new Map<string, string>();
  return { kept, get: async (key) => kept.get(key), store: async (key, value) => void kept.set(key, value) };
}

describe('MCP input values: stored only once the server is confirmed', () => {
  const workspace: McpSource = { kind: 'workspace', folder: '/work/repo', file: '/work/repo/.vscode/mcp.json' };
  const user: McpSource = { kind: 'user' };
  const token: McpInput = { id: 'token', description: 'Your GitHub token', password: true };

  it('a value typed for a workspace server whose start is then cancelled is never stored, and is asked for again', async () => {
    // What was tried: a hostile workspace's server asks for "Your GitHub token"; the user types it, then refuses the server.
    const store = mapStore();
    const asked: string[] = [];
    const values = new InputValues(store, async (server) => {
      asked.push(server);
      return 'ghp_typed_secret';
    });
    assert.equal(await values.value(workspace, 'evil', token, 'token'), 'ghp_typed_secret');
    values.forget(workspace, 'evil');
    assert.deepEqual([...store.kept.values()], [], 'nothing typed for a refused server reaches storage');
    await values.value(workspace, 'evil', token, 'token');
    assert.deepEqual(asked, ['evil', 'evil'], 'the next start asks again');
  });

  it('a confirmed start stores what was typed, per configuration: the workspace never reads the user\'s value', async () => {
    const store = mapStore();
    let typed = 0;
    const values = new InputValues(store, async () => `value-${++typed}`);
    assert.equal(await values.value(user, 'github', token, 'token'), 'value-1');
    assert.equal(await values.value(user, 'github', token, 'token'), 'value-1', 'asked once per start, held meanwhile');
    await values.confirmed(user, 'github');
    assert.deepEqual([...store.kept], [['candor.mcp.input:user:token', 'value-1']]);
    assert.equal(await values.value(user, 'other', token, 'token'), 'value-1', "another of the user's servers reads the stored value");
    assert.equal(await values.value(workspace, 'copycat', token, 'token'), 'value-2', "a workspace's server with the same input id is asked, never given the user's");
    await values.confirmed(workspace, 'copycat');
    assert.equal(store.kept.get('candor.mcp.input:/work/repo:token'), 'value-2');
    assert.equal(store.kept.get('candor.mcp.input:user:token'), 'value-1');
  });

  it('an input box that is dismissed stores nothing and returns undefined', async () => {
    const store = mapStore();
    const values = new InputValues(store, async () => undefined);
    assert.equal(await values.value(user, 'github', token, 'token'), undefined);
    await values.confirmed(user, 'github');
    assert.equal(store.kept.size, 0);
  });
});
