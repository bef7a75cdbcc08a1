import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEFAULT_LOCAL_SERVERS, formatLocalServer, localServerOf, parseLocalServers, sendsKeyTo } from '../../../../src/core/provider/localServers';
import { RESTRICTED_SETTINGS, resolveCandorSettings, type Inspected } from '../../../../src/core/settings/resolve';

const manifest = JSON.parse(fs.readFileSync(path.join(__dirname, '../../../../package.json'), 'utf8')) as {
  contributes: { configuration: { properties: Record<string, { default?: unknown; scope?: string }> } };
};
const properties = manifest.contributes.configuration.properties;

function read(layers: Record<string, Inspected<unknown>>, trusted = true) {
  return resolveCandorSettings({
    inspect: <T>(key: string) => ({ defaultValue: properties[`candor.${key}`]?.default, ...layers[key] }) as Inspected<T>,
    trusted,
    confirmedUrls: [],
  });
}

describe('candor.localServers and candor.contextWindow as settings', () => {
  it('the manifest declares the default ports: Ollama 11434, LM Studio 1234, llama.cpp 8080, vLLM 8000', () => {
    assert.deepEqual(parseLocalServers(properties['candor.localServers']?.default, false), DEFAULT_LOCAL_SERVERS);
    assert.deepEqual(read({}).localServers.map((s) => [s.kind, s.port, s.sendKey]), [['ollama', 11434, false], ['lmstudio', 1234, false], ['llamacpp', 8080, false], ['vllm', 8000, false]]);
  });

  it('not a restricted setting: an untrusted workspace\'s ports are probed (keyless, loopback only)', () => {
    assert.ok(!RESTRICTED_SETTINGS.includes('localServers'));
    assert.equal(properties['candor.localServers']?.scope, undefined, 'not user-only either');
    const s = read({ localServers: { workspaceValue: [{ port: 9999, kind: 'vllm' }] } }, false);
    assert.ok(s.localServers.some((x) => x.port === 9999 && x.kind === 'vllm'));
  });

  it('sendKey counts from the user\'s settings only; a workspace can add ports but not drop the user\'s or turn a key on', () => {
    const s = read({
      localServers: {
        globalValue: [{ port: 8000, kind: 'vllm', sendKey: true }, { port: 11434, kind: 'ollama' }],
        workspaceValue: [{ port: 11434, kind: 'ollama', sendKey: true }, { port: 7000, kind: 'llamacpp', sendKey: true }],
      },
    });
    assert.deepEqual(s.localServers, [
      { port: 11434, kind: 'ollama', sendKey: false },
      { port: 7000, kind: 'llamacpp', sendKey: false },
      { port: 8000, kind: 'vllm', sendKey: true },
    ]);
  });

  it('the string form the Settings UI edits: "PORT [KIND] [sendKey]"; sendKey only from the user\'s settings', () => {
    assert.deepEqual(parseLocalServers(['18200 llamacpp', ' 8081 openai sendKey ', '9000', '9001 sendKey', '9002 nonsense'], true), [
      { port: 18200, kind: 'llamacpp', sendKey: false },
      { port: 8081, kind: 'openai', sendKey: true },
      { port: 9000, kind: 'openai', sendKey: false },
      { port: 9001, kind: 'openai', sendKey: true },
      { port: 9002, kind: 'openai', sendKey: false },
    ]);
    assert.deepEqual(parseLocalServers(['8081 openai sendKey'], false), [{ port: 8081, kind: 'openai', sendKey: false }], 'a workspace cannot send the key');
    for (const server of DEFAULT_LOCAL_SERVERS) assert.deepEqual(parseLocalServers([formatLocalServer(server)], true), [server], 'what Add a port writes reads back the same');
  });

  it('the manifest\'s schema is one the Settings UI edits as a list: string items, a pattern that takes every entry Candor writes', () => {
    const schema = properties['candor.localServers'] as { items?: { type?: string; pattern?: string } };
    assert.equal(schema.items?.type, 'string', 'VS Code edits an array in its Settings UI only when its items have one simple type');
    const pattern = new RegExp(schema.items?.pattern ?? '^$');
    for (const entry of ['18200 llamacpp', '8081 openai sendKey', '9000', ...DEFAULT_LOCAL_SERVERS.map(formatLocalServer)]) assert.match(entry, pattern);
    for (const entry of ['port 9000', '9000 llama', 'sendKey']) assert.doesNotMatch(entry, pattern);
  });

  it('entries that do not fit are dropped; a bare port is a generic server; the forms of earlier versions still read', () => {
    assert.deepEqual(parseLocalServers([8081, '8082', 0, 70000, 1.5, { port: 8083, kind: 'nonsense' }, { kind: 'ollama' }, null, 8081, 'port 9000', '70000 vllm', '9001 ollama extra'], true), [
      { port: 8081, kind: 'openai', sendKey: false },
      { port: 8082, kind: 'openai', sendKey: false },
      { port: 8083, kind: 'openai', sendKey: false },
    ]);
    assert.equal(parseLocalServers('11434', true), undefined);
  });

  it('which base URLs get the key: not a listed loopback port, unless sendKey', () => {
    const servers = [{ port: 11434, kind: 'ollama' as const, sendKey: false }, { port: 8000, kind: 'vllm' as const, sendKey: true }];
    for (const url of ['http://127.0.0.1:11434/v1', 'http://localhost:11434/v1', 'http://[::1]:11434/v1', 'http://127.0.0.2:11434/v1']) {
      assert.equal(sendsKeyTo(url, servers), false, url);
      assert.equal(localServerOf(url, servers)?.kind, 'ollama', url);
    }
    for (const url of ['http://127.0.0.1:8000/v1', 'http://127.0.0.1:9999/v1', 'https://api.openai.com/v1', 'http://ollama.example:11434/v1', 'not a url']) {
      assert.equal(sendsKeyTo(url, servers), true, url);
    }
  });

  it('contextWindow counts as set when any layer gives it, not when only the default does', () => {
    assert.equal(read({}).contextWindowSet, false);
    assert.equal(read({}).contextWindow, 128000);
    assert.equal(read({ contextWindow: { globalValue: 32000 } }).contextWindowSet, true);
    assert.equal(read({ contextWindow: { workspaceValue: 8192 } }).contextWindowSet, true);
    assert.equal(read({ contextWindow: { globalValue: 'big' } }).contextWindowSet, false);
  });
});
