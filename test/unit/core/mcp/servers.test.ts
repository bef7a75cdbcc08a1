import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { McpServers, type McpDefinitions, type McpServersPorts } from '../../../../src/core/mcp/servers';
import type { ExpandedServer, McpInput, McpServerDefinition, McpSource } from '../../../../src/core/mcp/types';
import { expandServer } from '../../../../src/core/mcp/variables';
import { SecretSet } from '../../../../src/core/redact';
import { MemoryLogger } from '../../../helpers/core';
import { EVERYTHING, alive, waitFor } from './clientServers';

const MARKED = path.resolve(__dirname, '../../../fixtures/mcp/marked.mjs');
const USER: McpSource = { kind: 'user' };

interface Confirmation {
  readonly name: string;
  readonly hash: string;
  readonly lines: readonly string[];
}

/**
 * The manager over real servers (server-everything and the marked fixture,
 * which writes its pid to a file when it starts). The host's ports are plain
 * functions: the definitions a list the test edits, expand the real
 * expandServer, confirm an answer the test picks and records.
 */
function setup(o: { confirm?: (name: string) => Promise<boolean>; input?: (id: string) => string | undefined; inputs?: McpInput[] } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-servers-'));
  const defs: McpServerDefinition[] = [];
  const problems: string[] = [];
  const confirmations: Confirmation[] = [];
  let asking = 0;
  let mostAtOnce = 0;
  const log = new MemoryLogger();
  const secrets = new SecretSet();
  const ports: McpServersPorts = {
    definitions: async (): Promise<McpDefinitions> => ({ servers: [...defs], problems: [...problems] }),
    expand: (def) =>
      expandServer(def, {
        workspaceFolder: dir,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        allowedEnvNames: [],
        inputs: o.inputs ?? [],
        input: async (_input, id) => o.input?.(id),
      }),
    confirm: async (def, _expanded, hash, lines) => {
      asking++;
      mostAtOnce = Math.max(mostAtOnce, asking);
      try {
        confirmations.push({ name: def.name, hash, lines });
        return await (o.confirm?.(def.name) ?? Promise.resolve(true));
      } finally {
        asking--;
      }
    },
    log,
    secrets,
  };
  const servers = new McpServers(ports);
  const marker = (name: string): string => path.join(dir, `${name}.pids`);
  const pids = (name: string): number[] => {
    try {
      return fs.readFileSync(marker(name), 'utf8').split('\n').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  /** The marked fixture as a definition: its pid goes to `<name>.pids`. */
  const marked = (name: string, x: { source?: McpSource; args?: string[]; env?: Record<string, string> } = {}): McpServerDefinition => ({
    name,
    source: x.source ?? USER,
    type: 'stdio',
    command: process.execPath,
    args: [MARKED, ...(x.args ?? [])],
    env: { MARKER_FILE: marker(name), ...x.env },
  });
  const state = (name: string): string | undefined => servers.status().find((s) => s.name === name)?.state;
  return { dir, defs, problems, confirmations, log, secrets, servers, marked, pids, state, mostAtOnce: () => mostAtOnce };
}

const everything = (name = 'everything', source: McpSource = USER, extraArgs: string[] = []): McpServerDefinition => ({
  name,
  source,
  type: 'stdio',
  command: process.execPath,
  args: [EVERYTHING, 'stdio', ...extraArgs],
  env: {},
});
const signal = (): AbortSignal => new AbortController().signal;

/** Live processes whose command line holds `word`. */
function processesWith(word: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(word) && alive(Number(pid));
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('MCP servers: started lazily, confirmed, and kept out of the turn when they fail', function () {
  this.timeout(60_000);
  let s: ReturnType<typeof setup>;
  const make = (o?: Parameters<typeof setup>[0]): ReturnType<typeof setup> => (s = setup(o));
  afterEach(async () => {
    await s.servers.dispose();
    fs.rmSync(s.dir, { recursive: true, force: true });
  });

  it('starts nothing before the first ensureStarted, then starts a defined server once', async () => {
    make();
    s.defs.push(s.marked('lazy'));
    // The yardstick: another manager starts a server of its own from its first ensureStarted to running; an eager start of ours would be as far.
    const other = setup();
    other.defs.push(other.marked('yardstick'));
    await other.servers.ensureStarted(signal());
    assert.equal(other.pids('yardstick').length, 1);
    await other.servers.dispose();
    fs.rmSync(other.dir, { recursive: true, force: true });
    assert.deepEqual(s.pids('lazy'), [], 'no process ran before a request needed the tools');
    assert.deepEqual(s.servers.status(), []);
    await s.servers.ensureStarted(signal());
    assert.equal(s.pids('lazy').length, 1);
    assert.equal(s.state('lazy'), 'running');
    await s.servers.ensureStarted(signal());
    await s.servers.ensureStarted(signal());
    assert.equal(s.pids('lazy').length, 1, 'later calls start nothing again');
    assert.equal(s.confirmations.length, 1, 'and ask nothing again');
  });

  it('starts server-everything over stdio and lists its tools, echo and get-sum among them', async () => {
    make();
    s.defs.push(everything());
    await s.servers.ensureStarted(signal());
    const [status] = s.servers.status();
    assert.equal(status?.state, 'running');
    const running = s.servers.running();
    assert.equal(running.length, 1);
    const names = running[0]?.connection.tools().map((t) => t.name) ?? [];
    assert.ok(names.includes('echo') && names.includes('get-sum'), names.join(', '));
    assert.equal(status?.tools, names.length);
    assert.equal(running[0]?.hash, status?.hash);
    assert.equal(s.confirmations[0]?.hash, status?.hash, 'the hash the user confirmed is the one the tools are keyed by');
    assert.match(s.confirmations[0]?.lines[0] ?? '', /server-everything\/dist\/index\.js stdio$/, 'the confirmation shows the command line');
  });

  it('a cancelled confirmation starts no process, offers no tools, and is not asked again until restart', async () => {
    make({ confirm: async () => false });
    s.defs.push(s.marked('declined'));
    await s.servers.ensureStarted(signal());
    assert.equal(s.state('declined'), 'cancelled');
    assert.match(s.servers.status()[0]?.reason ?? '', /not confirmed/);
    assert.deepEqual(s.servers.running(), []);
    assert.deepEqual(s.pids('declined'), [], 'no process was started');
    s.servers.invalidate();
    await s.servers.ensureStarted(signal());
    assert.equal(s.confirmations.length, 1, 'an unrelated change does not bring the dialog back');
    await s.servers.restart('declined');
    assert.equal(s.confirmations.length, 2, 'restart asks again');
    assert.deepEqual(s.pids('declined'), []);
  });

  it('a changed definition is confirmed again under its new hash and restarted; an unchanged one keeps running', async () => {
    make();
    s.defs.push(s.marked('changing', { args: ['v1'] }));
    await s.servers.ensureStarted(signal());
    const [first] = s.pids('changing');
    const firstHash = s.servers.status()[0]?.hash;
    s.servers.invalidate();
    await s.servers.ensureStarted(signal());
    assert.deepEqual(s.pids('changing'), [first], 'unchanged: the same process goes on');
    assert.equal(s.confirmations.length, 1);
    s.defs[0] = s.marked('changing', { args: ['v2'] });
    s.servers.invalidate();
    await s.servers.ensureStarted(signal());
    assert.equal(s.confirmations.length, 2, 'asked again');
    assert.notEqual(s.confirmations[1]?.hash, firstHash);
    assert.match(s.confirmations[1]?.lines[0] ?? '', / v2$/);
    const [, second] = s.pids('changing');
    assert.ok(second !== undefined && second !== first, 'a new process');
    assert.equal(alive(first ?? 0), false, 'the old one is gone');
    assert.equal(s.state('changing'), 'running');
    assert.equal(s.servers.status()[0]?.hash, s.confirmations[1]?.hash);
  });

  it('a removed definition is stopped, its process gone', async () => {
    make();
    s.defs.push(s.marked('removed'), s.marked('kept'));
    await s.servers.ensureStarted(signal());
    const [pid] = s.pids('removed');
    s.defs.splice(0, 1);
    s.servers.invalidate();
    await s.servers.ensureStarted(signal());
    assert.deepEqual(s.servers.status().map((x) => x.name), ['kept']);
    await waitFor('the removed server to go', () => !alive(pid ?? 0), 5000);
    assert.equal(s.state('kept'), 'running');
  });

  it('a server that exits at start is failed with its reason, and is not started again in a loop', async () => {
    make();
    s.defs.push(s.marked('broken', { env: { EXIT_AT_START: 'the config file is missing' } }));
    await s.servers.ensureStarted(signal());
    const [status] = s.servers.status();
    assert.equal(status?.state, 'failed');
    assert.match(status?.reason ?? '', /exited with code 2 before it finished starting.*cannot start: the config file is missing/);
    assert.doesNotMatch(status?.reason ?? '', /\n/);
    assert.deepEqual(s.servers.running(), []);
    await s.servers.ensureStarted(signal());
    await s.servers.ensureStarted(signal());
    assert.equal(s.pids('broken').length, 1, 'no retry without a change');
    s.servers.invalidate();
    await s.servers.ensureStarted(signal());
    assert.equal(s.pids('broken').length, 2, 'tried once more after a change');
    await s.servers.restart('broken');
    assert.equal(s.pids('broken').length, 3, 'and on restart');
  });

  it('a server that crashes while running is failed, its tools gone, and it is not restarted by itself', async () => {
    make();
    s.defs.push(s.marked('crashy'));
    await s.servers.ensureStarted(signal());
    let changes = 0;
    s.servers.onChanged(() => changes++);
    const connection = s.servers.running()[0]?.connection;
    await assert.rejects(connection?.call('die', {}, { signal: signal(), timeoutMs: 10_000 }) ?? Promise.reject(new Error('not running')));
    await waitFor('the status to say failed', () => s.state('crashy') === 'failed');
    assert.match(s.servers.status()[0]?.reason ?? '', /exited with code 3/);
    assert.deepEqual(s.servers.running(), []);
    assert.ok(changes > 0, 'listeners heard of it');
    await s.servers.ensureStarted(signal());
    assert.equal(s.pids('crashy').length, 1);
  });

  it('a definition whose variables may not be expanded is refused, and nothing is asked or started', async () => {
    make();
    s.defs.push(s.marked('odd', { args: ['${command:extension.pickFile}'] }));
    await s.servers.ensureStarted(signal());
    assert.equal(s.state('odd'), 'refused');
    assert.match(s.servers.status()[0]?.reason ?? '', /Candor does not expand/);
    assert.equal(s.confirmations.length, 0);
    assert.deepEqual(s.pids('odd'), []);
  });

  it('an input the user does not give cancels the server; a given password input is redacted from then on', async () => {
    const token = 'tok-0123456789abcdefXYZ';
    make({ input: (id) => (id === 'token' ? token : undefined), inputs: [{ id: 'token', description: 'token', password: true }] });
    s.defs.push(s.marked('noinput', { env: { OTHER: '${input:other}' } }), s.marked('withtoken', { env: { API_TOKEN: '${input:token}' } }));
    await s.servers.ensureStarted(signal());
    assert.equal(s.state('noinput'), 'cancelled');
    assert.match(s.servers.status().find((x) => x.name === 'noinput')?.reason ?? '', /input "other" was not given/);
    assert.equal(s.state('withtoken'), 'running');
    assert.equal(s.secrets.redact(`key ${token}`), 'key [redacted]');
    const lines = s.confirmations.find((c) => c.name === 'withtoken')?.lines.join('\n') ?? '';
    assert.doesNotMatch(lines, new RegExp(token), 'the dialog never shows the secret');
  });

  it('asks one server at a time, starts them side by side, and a stopped turn stops only the waiting', async () => {
    let release: (() => void) | undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    make({ confirm: async (name) => (name === 'slow' ? gate.then(() => true) : true) });
    s.defs.push(s.marked('slow'), s.marked('quick'));
    const stop = new AbortController();
    const waiting = s.servers.ensureStarted(stop.signal);
    await waitFor('the first question', () => s.confirmations.length === 1);
    stop.abort();
    // The turn ends while the dialog is still open (it is answered only below): the stop did not wait for it.
    await waiting;
    assert.equal(s.state('slow'), 'starting');
    assert.equal(s.confirmations.length, 1, 'the second question waits for the first');
    release?.();
    await waitFor('both to run', () => s.state('slow') === 'running' && s.state('quick') === 'running');
    assert.equal(s.mostAtOnce(), 1);
    assert.equal(s.pids('slow').length + s.pids('quick').length, 2);
  });

  it('keeps a user and a workspace definition of one name, the workspace one under its folder\'s name', async () => {
    make();
    const folder = path.join(os.tmpdir(), 'app');
    s.defs.push(s.marked('dup', { source: { kind: 'workspace', folder, file: path.join(folder, '.vscode/mcp.json') } }), s.marked('dup'));
    await s.servers.ensureStarted(signal());
    const status = s.servers.status();
    assert.deepEqual(status.map((x) => [x.name, x.source.kind, x.state]), [['dup', 'user', 'running'], ['dup (app)', 'workspace', 'running']]);
    assert.deepEqual(new Set(s.servers.running().map((r) => r.server)), new Set(['dup', 'dup (app)']));
  });

  it('stop ends the process and keeps it stopped across changes; restart starts it again', async () => {
    make();
    s.defs.push(s.marked('stoppable'));
    await s.servers.ensureStarted(signal());
    const [pid] = s.pids('stoppable');
    await s.servers.stop('stoppable');
    assert.equal(s.state('stoppable'), 'stopped');
    assert.equal(alive(pid ?? 0), false);
    s.servers.invalidate();
    await s.servers.ensureStarted(signal());
    assert.equal(s.state('stoppable'), 'stopped');
    await s.servers.restart('stoppable');
    assert.equal(s.state('stoppable'), 'running');
    assert.equal(s.pids('stoppable').length, 2);
  });

  it('tells listeners when a server\'s tool list changes (list_changed)', async () => {
    make();
    const listChanged = path.resolve(__dirname, '../../../fixtures/mcp/listChanged.mjs');
    s.defs.push({ name: 'growing', source: USER, type: 'stdio', command: process.execPath, args: [listChanged], env: {} });
    await s.servers.ensureStarted(signal());
    const before = s.servers.status()[0]?.tools ?? 0;
    const heard = new Promise<void>((resolve) => s.servers.onChanged(resolve));
    await s.servers.running()[0]?.connection.call('grow', {}, { signal: signal(), timeoutMs: 10_000 });
    await heard;
    assert.equal(s.servers.status()[0]?.tools, before + 1);
  });

  it('logs the configuration problems it is given, and a definitions port that throws starts nothing and throws nothing', async () => {
    make();
    s.problems.push('MCP server "x": "command" must be a non-empty string; the server is skipped');
    await s.servers.ensureStarted(signal());
    assert.ok(s.log.lines.includes('[warn] MCP server "x": "command" must be a non-empty string; the server is skipped'));
    const broken = new McpServers({ ...portsThatThrow(), log: s.log, secrets: s.secrets });
    await broken.ensureStarted(signal());
    assert.deepEqual(broken.status(), []);
    assert.ok(s.log.lines.some((l) => /reading the server definitions failed: settings unreadable/.test(l)));
  });

  it('stopAll (MCP turned off) ends every server now; the next start after invalidate starts them afresh', async () => {
    make();
    s.defs.push(s.marked('first'), s.marked('second'));
    await s.servers.ensureStarted(signal());
    const pids = [...s.pids('first'), ...s.pids('second')];
    assert.equal(pids.length, 2);
    await s.servers.stopAll('MCP tools were turned off (candor.mcp.enabled)');
    assert.deepEqual(pids.filter(alive), [], 'both processes are gone');
    assert.deepEqual(s.servers.running(), [], 'no tools are offered from them');
    s.servers.invalidate();
    await s.servers.ensureStarted(signal());
    assert.equal(s.state('first'), 'running', 'turned on again, they start, not stay stopped');
    assert.equal(s.pids('first').length, 2);
    assert.equal(s.pids('second').length, 2);
  });

  it('dispose ends every server, even one still starting, and leaves no process behind', async () => {
    const word = `candor-dispose-${process.pid}-${Date.now()}`;
    make();
    s.defs.push(s.marked('one', { args: [word] }), s.marked('two', { args: [word] }), everything('three', USER, [word]));
    await s.servers.ensureStarted(signal());
    assert.equal(processesWith(word).length, 3, 'all three run');
    s.defs.push(s.marked('four', { args: [word] }));
    s.servers.invalidate();
    void s.servers.ensureStarted(signal());
    await waitFor('the fourth to be spawned', () => s.pids('four').length === 1);
    await s.servers.dispose();
    assert.deepEqual(processesWith(word), [], 'no process with the marker in its command line is left');
    assert.ok(s.servers.status().every((x) => x.state === 'stopped'), JSON.stringify(s.servers.status()));
    await s.servers.ensureStarted(signal());
    assert.deepEqual(processesWith(word), [], 'nothing starts after dispose');
  });
});

function portsThatThrow(): Pick<McpServersPorts, 'definitions' | 'expand' | 'confirm'> {
  return {
    definitions: async () => {
      throw new Error('settings unreadable');
    },
    expand: async () => ({ ok: false, kind: 'refused', reason: 'unused' }),
    confirm: async (_def: McpServerDefinition, _expanded: ExpandedServer) => true,
  };
}
