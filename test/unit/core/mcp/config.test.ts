import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseMcpConfig, parseMcpConfigText } from '../../../../src/core/mcp/config';
import { parseJsonc } from '../../../../src/core/mcp/jsonc';
import type { McpSource } from '../../../../src/core/mcp/types';

const USER: McpSource = { kind: 'user' };
const WORKSPACE: McpSource = { kind: 'workspace', folder: '/w', file: '/w/.vscode/mcp.json' };

function value(text: string): unknown {
  const parsed = parseJsonc(text);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.reason);
  return parsed.value;
}

describe('parseJsonc: the text of .vscode/mcp.json', () => {
  it('reads comments of both kinds and trailing commas, as VS Code writes them', () => {
    const text = `// Servers of this project
{
  /* the one we use */
  "servers": {
    "fs": { "command": "npx", "args": ["-y", "server", ], }, // trailing commas
  },
}`;
    assert.deepEqual(value(text), { servers: { fs: { command: 'npx', args: ['-y', 'server'] } } });
  });

  it('leaves comment markers and commas inside strings alone', () => {
    const text = '{"url": "http://host/a//b", "x": "/* not a comment */", "y": "a,}", "z": "say \\"//\\", ]"}';
    assert.deepEqual(value(text), { url: 'http://host/a//b', x: '/* not a comment */', y: 'a,}', z: 'say "//", ]' });
  });

  it('accepts a byte order mark and an empty comment at the end without newline', () => {
    assert.deepEqual(value('\uFEFF{"a": 1} //'), { a: 1 });
  });

  it('reports where the text is broken, without quoting it (the file may hold a token)', () => {
    const token = 'ghp_0123456789abcdefghijkl';
    const broken = parseJsonc(`{\n  "servers": {\n    "x": { "headers": { "Authorization": "${token}" } }\n    "y": {}\n  }\n}`);
    assert.equal(broken.ok, false);
    assert.ok(!broken.ok);
    assert.match(broken.reason, /line 4, column 5/);
    assert.ok(!broken.reason.includes(token));
    const unexpected = parseJsonc(`{"token": ${token}}`);
    assert.ok(!unexpected.ok);
    assert.ok(!unexpected.reason.includes(token), unexpected.reason);
    const short = parseJsonc('{"a": ');
    assert.ok(!short.ok && /ends too early/.test(short.reason));
  });

  it('does not crash on 100 000 levels of nesting (tried: a file of nothing but brackets)', () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    assert.equal(parseJsonc(deep).ok, true);
    const config = parseMcpConfigText(`{"servers": {"deep": {"command": "x", "env": ${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}}}`, USER);
    assert.equal(config.servers.length, 1);
    assert.deepEqual(config.servers[0]?.type === 'stdio' && config.servers[0].env, {});
    assert.match(config.problems.join('\n'), /"env"\."a" is an object/);
  });

  it('parses a 10 MB file in one pass (tried: a server with a 10 MB argument list)', () => {
    const args = Array.from({ length: 400_000 }, (_, i) => `"argument-${i}"`).join(',\n // comment\n');
    const text = `{"servers": {"big": {"command": "x", "args": [${args},]}}}`;
    assert.ok(text.length > 10_000_000);
    const config = parseMcpConfigText(text, USER);
    const server = config.servers[0];
    assert.ok(server?.type === 'stdio');
    assert.equal(server.args.length, 400_000);
    assert.equal(server.args[399_999], 'argument-399999');
  });
});

describe('parseMcpConfig: server definitions as VS Code 1.100 writes them', () => {
  it('reads a stdio server with all its fields, and a remote one of each type', () => {
    const config = parseMcpConfig(
      {
        servers: {
          files: { type: 'stdio', command: 'npx', args: ['-y', '@modelcontextprotocol/server-filesystem', '${workspaceFolder}'], env: { DEBUG: '1', PORT: 3000 }, envFile: '${workspaceFolder}/.env', cwd: 'tools' },
          remote: { type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${input:token}' } },
          legacy: { type: 'sse', url: 'http://127.0.0.1:3001/sse' },
        },
        inputs: [{ type: 'promptString', id: 'token', description: 'API token', password: true }],
      },
      WORKSPACE,
    );
    assert.deepEqual(config.problems, []);
    assert.deepEqual(config.servers, [
      {
        name: 'files',
        source: WORKSPACE,
        type: 'stdio',
        command: 'npx',
        args: ['-y', '@modelcontextprotocol/server-filesystem', '${workspaceFolder}'],
        env: { DEBUG: '1', PORT: '3000' },
        envFile: '${workspaceFolder}/.env',
        cwd: 'tools',
      },
      { name: 'remote', source: WORKSPACE, type: 'http', url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer ${input:token}' } },
      { name: 'legacy', source: WORKSPACE, type: 'sse', url: 'http://127.0.0.1:3001/sse', headers: {} },
    ]);
    assert.deepEqual(config.inputs, [{ id: 'token', description: 'API token', password: true }]);
  });

  it('infers the type: command is stdio, url is HTTP with the SSE fallback', () => {
    const config = parseMcpConfig({ servers: { local: { command: 'node', args: [1, 'x'] }, remote: { url: 'http://localhost:1/mcp' } } }, USER);
    assert.deepEqual(
      config.servers.map((s) => s.type),
      ['stdio', 'auto'],
    );
    assert.deepEqual(config.servers[0]?.type === 'stdio' && config.servers[0].args, ['1', 'x']);
  });

  it('skips a broken entry with a problem naming it, and keeps the others', () => {
    const config = parseMcpConfig(
      {
        servers: {
          good: { command: 'node' },
          noType: { args: [] },
          both: { command: 'x', url: 'http://x' },
          badType: { type: 'websocket', url: 'ws://x' },
          stdioNoCommand: { type: 'stdio', url: 'http://x' },
          httpNoUrl: { type: 'http', command: 'x' },
          badArgs: { command: 'x', args: 'not an array' },
          badArg: { command: 'x', args: ['a', { b: 1 }] },
          notObject: 'npx server',
          badEnv: { command: 'x', env: ['A=1'] },
          badHeaders: { url: 'http://x', headers: { 'Bad Name': 'v' } },
          emptyCommand: { command: '  ' },
        },
      },
      USER,
    );
    assert.deepEqual(
      config.servers.map((s) => s.name),
      ['good'],
    );
    const problems = config.problems.join('\n');
    for (const name of ['noType', 'both', 'badType', 'stdioNoCommand', 'httpNoUrl', 'badArgs', 'badArg', 'notObject', 'badEnv', 'badHeaders', 'emptyCommand']) {
      assert.match(problems, new RegExp(`MCP server "${name}": .*; the server is skipped`), name);
    }
    assert.match(problems, /"badType": "type" is "websocket"; it must be "stdio", "http" or "sse"/);
    assert.match(problems, /"badArg": "args"\[1\] is an object/);
  });

  it('turns env numbers into strings, and leaves out null and other types with a problem', () => {
    const config = parseMcpConfig({ servers: { s: { command: 'x', env: { PORT: 8080, UNSET: null, FLAG: true, 'A=B': 'x', OK: 'yes' } } } }, USER);
    assert.deepEqual(config.servers[0]?.type === 'stdio' && config.servers[0].env, { PORT: '8080', OK: 'yes' });
    const problems = config.problems.join('\n');
    assert.match(problems, /"env"\."UNSET" is null, not a string; it is left out/);
    assert.match(problems, /"env"\."FLAG" is a boolean/);
    assert.match(problems, /variable named "A=B"/);
    assert.ok(!/skipped/.test(problems));
  });

  it('ignores unknown fields, a disabled flag included (VS Code has none)', () => {
    const config = parseMcpConfig({ servers: { s: { command: 'x', disabled: true, dev: { watch: '**' } } }, other: 1 }, USER);
    assert.equal(config.servers.length, 1);
    assert.deepEqual(config.problems, []);
  });

  it('keeps server names as written, any characters, and shows hidden ones by their marks in a problem', () => {
    const config = parseMcpConfig({ servers: { 'my server/ü 🚀': { command: 'x' }, __proto__x: { command: 'y' }, 'evil\nname\u202e': { command: 5 } } }, USER);
    assert.deepEqual(
      config.servers.map((s) => s.name),
      ['my server/ü 🚀', '__proto__x'],
    );
    assert.match(config.problems[0] ?? '', /^MCP server "evil␊name⟨U\+202E⟩": /);
  });

  it('keeps a server and a variable named __proto__ as data (tried: prototype pollution through JSON)', () => {
    const config = parseMcpConfigText('{"servers": {"__proto__": {"command": "x", "env": {"__proto__": "polluted", "A": "1"}}}}', USER);
    const server = config.servers[0];
    assert.ok(server?.type === 'stdio');
    assert.equal(server.name, '__proto__');
    assert.deepEqual(Object.keys(server.env), ['__proto__', 'A']);
    assert.equal(Object.getPrototypeOf(server.env), Object.prototype);
    assert.equal(({} as Record<string, unknown>).polluted, undefined);
  });

  it('refuses a command with a newline or an invisible character (tried: hiding a second program in the dialog)', () => {
    const config = parseMcpConfig({ servers: { a: { command: 'node\nrm -rf ~' }, b: { command: 'node\u202e' }, c: { command: 'node', args: ['-e', 'console.log(1)\nprocess.exit(0)'] } } }, WORKSPACE);
    assert.deepEqual(
      config.servers.map((s) => s.name),
      ['c'],
    );
    assert.match(config.problems.join('\n'), /"a": "command" holds a control or invisible character/);
    assert.match(config.problems.join('\n'), /"b": "command" holds a control or invisible character/);
  });

  it('refuses a header value with a line break (tried: header injection)', () => {
    const config = parseMcpConfig({ servers: { h: { url: 'http://x', headers: { 'X-A': 'v\r\nX-Injected: 1' } } } }, WORKSPACE);
    assert.deepEqual(config.servers, []);
    assert.match(config.problems[0] ?? '', /"headers"\."X-A" holds a line break/);
  });

  it('reads promptString inputs, and skips other types and duplicates with a problem', () => {
    const config = parseMcpConfig(
      {
        inputs: [
          { type: 'promptString', id: 'key', description: 'Key', password: true, default: 'none' },
          { type: 'promptString', id: 'plain' },
          { type: 'pickString', id: 'choice', options: ['a'] },
          { type: 'command', id: 'cmd', command: 'x' },
          { type: 'promptString', id: 'key', description: 'again' },
          { type: 'promptString', id: 'pw', password: 'yes' },
          'nope',
        ],
      },
      USER,
    );
    assert.deepEqual(config.inputs, [
      { id: 'key', description: 'Key', password: true, default: 'none' },
      { id: 'plain', description: 'plain', password: false },
    ]);
    const problems = config.problems.join('\n');
    assert.match(problems, /MCP input "choice": "type" is "pickString"; Candor asks only for "promptString" inputs; it is skipped/);
    assert.match(problems, /MCP input "cmd": .*skipped/);
    assert.match(problems, /MCP input "key": a second input/);
    assert.match(problems, /MCP input "pw": "password" must be true or false/);
    assert.match(problems, /MCP input number 7: not an object/);
  });

  it('takes an absent setting as empty, and a value of the wrong shape as a problem, never a throw', () => {
    assert.deepEqual(parseMcpConfig(undefined, USER), { servers: [], inputs: [], problems: [] });
    assert.deepEqual(parseMcpConfig({}, USER), { servers: [], inputs: [], problems: [] });
    for (const bad of [42, 'x', [], { servers: [] }, { servers: 'x' }, { inputs: {} }]) {
      const config = parseMcpConfig(bad, USER);
      assert.equal(config.servers.length, 0);
      assert.equal(config.problems.length, 1, JSON.stringify(bad));
    }
  });

  it('never quotes a long string value in a problem (it may be a token)', () => {
    const token = 'ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
    const config = parseMcpConfig({ servers: { s: { type: token, url: 'http://x' } } }, USER);
    assert.ok(!config.problems.join('\n').includes(token));
  });

  it('reads a real mcp.json file from disk, and reports a broken one as one problem', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-config-'));
    const file = path.join(dir, 'mcp.json');
    fs.writeFileSync(file, '{\n  // VS Code puts this at the top\n  "servers": { "everything": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"] } },\n  "inputs": [],\n}\n');
    const config = parseMcpConfigText(fs.readFileSync(file, 'utf8'), { kind: 'workspace', folder: dir, file });
    assert.equal(config.servers[0]?.name, 'everything');
    fs.writeFileSync(file, '{ "servers": { ');
    const broken = parseMcpConfigText(fs.readFileSync(file, 'utf8'), USER);
    assert.deepEqual(broken.servers, []);
    assert.equal(broken.problems.length, 1);
    assert.match(broken.problems[0] ?? '', /^MCP configuration: not valid JSON/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
