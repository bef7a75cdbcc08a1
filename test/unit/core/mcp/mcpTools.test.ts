import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Approvals } from '../../../../src/core/approvals/approvals';
import type { ToolCall } from '../../../../src/core/chat/tools';
import { mcpToolHost, type McpToolPorts } from '../../../../src/core/mcp/mcpTools';
import { McpServers } from '../../../../src/core/mcp/servers';
import type { McpServerDefinition, McpSource } from '../../../../src/core/mcp/types';
import { expandServer } from '../../../../src/core/mcp/variables';
import { SecretSet } from '../../../../src/core/redact';
import type { ApprovalRecord } from '../../../../src/core/session/records';
import { Session } from '../../../../src/core/session/session';
import { MemoryLogger } from '../../../helpers/core';
import { EVERYTHING, waitFor } from './clientServers';

const MARKED = path.resolve(__dirname, '../../../fixtures/mcp/marked.mjs');
const LIST_CHANGED = path.resolve(__dirname, '../../../fixtures/mcp/listChanged.mjs');
const SECRET = 'sk-test-0123456789abcdef';
const USER: McpSource = { kind: 'user' };
const WORKSPACE: McpSource = { kind: 'workspace', folder: '/w/app', file: '/w/app/.vscode/mcp.json' };

/**
 * The tool host over real servers (server-everything, the marked fixture)
 * started by a real McpServers, with real Approvals writing a real session.
 * The host's ports (definitions, expand, confirm, Always Allow's store, the
 * settings) are plain functions.
 */
function setup(o: { readOnly?: boolean; timeoutMs?: number } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-tools-'));
  const defs: McpServerDefinition[] = [];
  const secrets = new SecretSet([SECRET]);
  const servers = new McpServers({
    definitions: async () => ({ servers: [...defs], problems: [] }),
    expand: (def) => expandServer(def, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, allowedEnvNames: [], inputs: [], input: async () => undefined }),
    confirm: async () => true,
    log: new MemoryLogger(),
    secrets,
  });
  const session = Session.create(dir, 'app');
  const approvals = new Approvals();
  const always = new Set<string>();
  const remembered: string[][] = [];
  const settings = { readOnly: o.readOnly ?? false, timeoutMs: o.timeoutMs ?? 10_000 };
  const ports: McpToolPorts = {
    approvals,
    secrets,
    isAlwaysAllowed: (server, tool, hash) => always.has(JSON.stringify([server, tool, hash])),
    rememberAlways: async (server, tool, hash) => {
      remembered.push([server, tool, hash]);
      always.add(JSON.stringify([server, tool, hash]));
    },
    autoApproveReadOnly: () => settings.readOnly,
    callTimeoutMs: () => settings.timeoutMs,
  };
  const host = mcpToolHost(servers, ports);
  const call: ToolCall = { turn: 't1', callId: 'c1', session, show: () => undefined };
  const records = (): ApprovalRecord[] => session.all().filter((r): r is ApprovalRecord => r.type === 'approval');
  const latest = (): ApprovalRecord | undefined => records().at(-1);
  const writes = path.join(dir, 'writes');
  const pids = path.join(dir, 'pids');
  const calls = path.join(dir, 'calls');
  const marked = (name = 'marked', source: McpSource = USER): McpServerDefinition => ({
    name,
    source,
    type: 'stdio',
    command: process.execPath,
    args: [MARKED],
    env: { WRITES_FILE: writes, MARKER_FILE: pids, CALLS_FILE: calls },
  });
  const everything = (name = 'everything', source: McpSource = USER): McpServerDefinition => ({ name, source, type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: {} });
  const start = async (...list: McpServerDefinition[]): Promise<void> => {
    defs.push(...list);
    await host.prepare?.(new AbortController().signal);
  };
  const run = (name: string, args: unknown, signal = new AbortController().signal): Promise<string> => host.run(name, JSON.stringify(args), signal, call);
  const written = (): number => (fs.existsSync(writes) ? fs.readFileSync(writes, 'utf8').split('\n').filter(Boolean).length : 0);
  return { dir, defs, servers, session, approvals, always, remembered, settings, host, call, records, latest, marked, everything, start, run, written, pids, calls };
}

/** Answers the newest pending call as soon as it waits, as the chat's buttons do. */
async function answerWhenAsked(s: ReturnType<typeof setup>, decision: 'run' | 'deny' | 'always' | 'terminal'): Promise<void> {
  await waitFor('the call to wait for the user', () => s.latest()?.decision === 'pending');
  const pending = s.latest();
  assert.ok(pending && s.approvals.answer(pending.id, { decision }));
}

describe('MCP tools: offered to the model, approved by the user, never hanging the turn', function () {
  this.timeout(60_000);
  let s: ReturnType<typeof setup>;
  const make = (o?: Parameters<typeof setup>[0]): ReturnType<typeof setup> => (s = setup(o));
  afterEach(async () => {
    s.host.dispose();
    await s.servers.dispose();
    await s.session.flushed();
    fs.rmSync(s.dir, { recursive: true, force: true });
  });

  describe('specs', () => {
    it('names echo and get-sum mcp_everything_…, with the schemas and descriptions tools/list gave', async () => {
      make();
      assert.deepEqual(s.host.specs(), [], 'nothing before prepare');
      await s.start(s.everything());
      const listed = s.servers.running()[0]?.connection.tools() ?? [];
      const specs = s.host.specs();
      assert.equal(specs.length, listed.length);
      for (const [model, tool] of [['mcp_everything_echo', 'echo'], ['mcp_everything_get-sum', 'get-sum']] as const) {
        const spec = specs.find((x) => x.function.name === model);
        const source = listed.find((t) => t.name === tool);
        assert.ok(spec && source, `${model} is offered`);
        assert.deepEqual(spec.function.parameters, source.inputSchema);
        assert.equal(spec.function.description, source.description);
      }
      assert.deepEqual((specs.find((x) => x.function.name === 'mcp_everything_get-sum')?.function.parameters as { required?: string[] }).required, ['a', 'b']);
      assert.ok(specs.every((x) => /^[A-Za-z0-9_-]{1,64}$/.test(x.function.name) && (x.function.description ?? '').length <= 1000));
      assert.deepEqual(specs.map((x) => x.function.name), [...specs.map((x) => x.function.name)].sort(), 'in a stable, sorted order');
      assert.equal(s.host.specs(), specs, 'built once, not per request');
      assert.deepEqual([...s.host.byServer().keys()], ['everything']);
      assert.equal(s.host.byServer().get('everything')?.length, specs.length);
    });

    it('follows list_changed and a server that stops: the specs are rebuilt, per server', async () => {
      make();
      await s.start(s.everything(), { name: 'growing', source: USER, type: 'stdio', command: process.execPath, args: [LIST_CHANGED], env: {} });
      const before = s.host.byServer().get('growing')?.map((x) => x.function.name);
      assert.deepEqual(before, ['mcp_growing_a', 'mcp_growing_b', 'mcp_growing_c', 'mcp_growing_grow']);
      const growing = s.servers.running().find((r) => r.server === 'growing')?.connection;
      await growing?.call('grow', {}, { signal: new AbortController().signal, timeoutMs: 10_000 });
      await waitFor('the new tool', () => s.host.specs().some((x) => x.function.name === 'mcp_growing_added-4'));
      await s.servers.stop('growing');
      assert.ok(!s.host.specs().some((x) => x.function.name.startsWith('mcp_growing_')), 'a stopped server offers nothing');
      assert.deepEqual([...s.host.byServer().keys()], ['everything']);
      assert.match(await s.run('mcp_growing_a', {}), /^Error: there is no MCP tool "mcp_growing_a"/);
    });
  });

  describe('approval', () => {
    it('Allow: the card shows server, tool and arguments (redacted), the call runs, and the record ends with output and outcome', async () => {
      make();
      await s.start(s.marked());
      const result = s.run('mcp_marked_write', { path: 'notes.txt', key: SECRET });
      await answerWhenAsked(s, 'run');
      assert.equal(await result, 'wrote');
      assert.equal(s.written(), 1);
      const last = s.latest();
      assert.equal(last?.ask.kind, 'mcp');
      assert.deepEqual(last?.ask.kind === 'mcp' && { server: last.ask.server, tool: last.ask.tool }, { server: 'marked', tool: 'write' });
      assert.equal(last?.ask.kind === 'mcp' && last.ask.args, JSON.stringify({ path: 'notes.txt', key: '[redacted]' }, null, 2));
      assert.equal(last?.decision, 'allowed');
      assert.equal(last?.output, 'wrote');
      assert.match(last?.outcome ?? '', /^done in \d+\.\d s$/);
    });

    it('Deny: nothing runs and the model is told the user declined; a Run in Terminal answer is a Deny too', async () => {
      make();
      await s.start(s.marked());
      const denied = s.run('mcp_marked_write', {});
      await answerWhenAsked(s, 'deny');
      assert.equal(await denied, 'The user declined this call; it did not run.');
      // Tried: the webview sends Run in Terminal for an MCP card (it offers no such button).
      const terminal = s.run('mcp_marked_write', {});
      await answerWhenAsked(s, 'terminal');
      assert.equal(await terminal, 'The user declined this call; it did not run.');
      assert.equal(s.latest()?.decision, 'denied');
      assert.equal(s.written(), 0, 'the tool never ran');
    });

    it('Always Allow: remembered under the server, the tool and the confirmed hash; the next call runs without asking', async () => {
      make();
      await s.start(s.marked());
      const first = s.run('mcp_marked_write', {});
      await answerWhenAsked(s, 'always');
      assert.equal(await first, 'wrote');
      const hash = s.servers.status()[0]?.hash ?? '';
      assert.deepEqual(s.remembered, [['marked', 'write', hash]]);
      assert.equal(await s.run('mcp_marked_write', {}), 'wrote', 'answered without anyone clicking');
      assert.equal(s.latest()?.decision, 'allowed');
      assert.equal(s.latest()?.auto, 'Always Allow "marked write"');
      assert.equal(s.written(), 2);
      // Another tool of the same server still asks.
      const other = s.run('mcp_marked_look', { path: 'x' });
      await answerWhenAsked(s, 'deny');
      await other;
    });

    it('a read-only tool runs without asking only for the user\'s own server with candor.mcp.autoApproveReadOnly on', async () => {
      make({ readOnly: true });
      await s.start(s.everything(), s.everything('repo', WORKSPACE));
      assert.equal(await s.run('mcp_everything_echo', { message: 'hi' }), 'Echo: hi');
      assert.equal(s.latest()?.auto, 'read-only tool (candor.mcp.autoApproveReadOnly)');
      // The workspace server's read-only claim is the repository's word: it asks.
      const fromRepo = s.run('mcp_repo_echo', { message: 'hi' });
      await answerWhenAsked(s, 'run');
      assert.equal(await fromRepo, 'Echo: hi');
      // A tool that does not claim to be read-only asks too.
      const writes = s.run('mcp_everything_toggle-simulated-logging', {});
      await answerWhenAsked(s, 'deny');
      await writes;
      // And with the setting off, even the user's read-only tool asks.
      s.settings.readOnly = false;
      const asks = s.run('mcp_everything_echo', { message: 'again' });
      await answerWhenAsked(s, 'run');
      assert.equal(await asks, 'Echo: again');
    });

    it('Stop while the call waits for approval: it does not run, and the turn is told so at once', async () => {
      make();
      await s.start(s.marked());
      const stop = new AbortController();
      const result = s.run('mcp_marked_write', {}, stop.signal);
      await waitFor('the card', () => s.latest()?.decision === 'pending');
      stop.abort();
      assert.match(await result, /stopped the turn before answering; the tool did not run/);
      assert.equal(s.latest()?.decision, 'stopped');
      assert.equal(s.written(), 0);
    });
  });

  describe('results and failures', () => {
    it('an isError result reaches the model as the server\'s error, and the card says the server reported one', async () => {
      make({ readOnly: true });
      await s.start(s.marked());
      s.always.add(JSON.stringify(['marked', 'fails', s.servers.status()[0]?.hash]));
      assert.equal(await s.run('mcp_marked_fails', {}), 'Error (from the server): no such file: /nope');
      assert.equal(s.latest()?.outcome, 'the server reported an error');
      assert.equal(s.latest()?.output, 'no such file: /nope');
    });

    it('a server killed in the middle of a call gives a crashed error, not the timeout, for the model and on the card', async () => {
      make({ timeoutMs: 600_000 });
      await s.start(s.marked());
      s.always.add(JSON.stringify(['marked', 'hang', s.servers.status()[0]?.hash]));
      const result = s.run('mcp_marked_hang', {});
      await waitFor('the call to reach the server', () => fs.existsSync(s.calls) && fs.readFileSync(s.calls, 'utf8') === 'hang\n');
      const pid = Number(fs.readFileSync(s.pids, 'utf8').trim());
      process.kill(pid, 'SIGKILL');
      // Crashed, not timed out: the timeout is ten minutes, longer than this test may run.
      const text = await result;
      assert.match(text, /^Error: the MCP server "marked" crashed during the call: .*killed by SIGKILL/);
      assert.equal(s.latest()?.outcome, text.slice('Error: '.length));
      await waitFor('the server to show as failed', () => s.servers.status()[0]?.state === 'failed');
      assert.deepEqual(s.host.specs(), [], 'its tools are gone');
    });

    it('a server that never answers gives the timeout error after candor.mcp.callTimeoutSeconds', async () => {
      make({ timeoutMs: 300 });
      await s.start(s.marked());
      s.always.add(JSON.stringify(['marked', 'hang', s.servers.status()[0]?.hash]));
      const started = Date.now();
      const text = await s.run('mcp_marked_hang', {});
      // The timeout is the behaviour: a real-clock bound, ten times what is asked.
      assert.ok(Date.now() - started < 3000, `took ${Date.now() - started} ms`);
      assert.match(text, /^Error: the MCP server "marked" did not answer in time: hang: no answer within 300 ms/);
      assert.match(s.latest()?.outcome ?? '', /did not answer in time/);
      assert.equal(s.servers.status()[0]?.state, 'running', 'the server itself goes on');
    });

    it('a 5 MB result is bounded for the model (64 KiB) and for the card (16 KiB), with a marker', async () => {
      make();
      await s.start(s.marked());
      s.always.add(JSON.stringify(['marked', 'big', s.servers.status()[0]?.hash]));
      const text = await s.run('mcp_marked_big', { bytes: 5_000_000 });
      assert.ok(Buffer.byteLength(text) <= 64 * 1024 + 200, `${Buffer.byteLength(text)} bytes`);
      assert.match(text, /\[truncated: showed [\d,]+ of 5,000,000 bytes\]$/);
      const output = s.latest()?.output ?? '';
      assert.ok(Buffer.byteLength(output) <= 16 * 1024 + 200, `${Buffer.byteLength(output)} bytes on the card`);
      assert.match(output, /\[truncated: showed [\d,]+ of [\d,]+ bytes\]$/);
    });

    it('arguments are bounded on the card (8 KiB) and redacted; bad arguments and unknown tools are tool errors', async () => {
      make();
      await s.start(s.marked());
      // Tried: the model sends 100 KB of arguments with the key in the middle.
      const result = s.run('mcp_marked_look', { path: `${'p'.repeat(50_000)}${SECRET}${'q'.repeat(50_000)}` });
      await answerWhenAsked(s, 'deny');
      await result;
      const args = s.latest()?.ask.kind === 'mcp' ? (s.latest()?.ask as { args: string }).args : '';
      assert.ok(Buffer.byteLength(args) <= 8 * 1024 + 100, `${Buffer.byteLength(args)} bytes`);
      assert.match(args, /\[truncated: showed/);
      assert.doesNotMatch(JSON.stringify(s.records()), /sk-test/);
      assert.match(await s.host.run('mcp_marked_look', '[1, 2]', new AbortController().signal, s.call), /^Error: the arguments are not a JSON object/);
      assert.match(await s.run('mcp_nowhere_tool', {}), /^Error: there is no MCP tool "mcp_nowhere_tool".*mcp_marked_look/);
    });
  });
});
