import * as assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { connectMcp, type McpConnection } from '../../../../src/core/mcp/client';
import { McpError } from '../../../../src/core/mcp/errors';
import { isKindError } from '../../../../src/core/kindError';
import { SecretSet } from '../../../../src/core/redact';
import { MemoryLogger } from '../../../helpers/core';
import { NEVER, alive, fixture, inlineServer, minimalEnv, waitFor } from './clientServers';

// Servers that misbehave, each a small real process (test/fixtures/mcp):
// what the user notices is a prompt error of the right kind, a log line,
// and no process left behind.
describe('MCP client against misbehaving servers', function () {
  this.timeout(60_000);
  let log: MemoryLogger;
  let connection: McpConnection | undefined;
  let tmp: string;

  beforeEach(() => {
    log = new MemoryLogger();
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-faults-'));
  });
  afterEach(async () => {
    await connection?.close();
    connection = undefined;
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  const secrets = (): SecretSet => new SecretSet();
  const timed = async <T>(work: () => Promise<T>): Promise<{ value?: T; error?: unknown; ms: number }> => {
    const start = Date.now();
    try {
      return { value: await work(), ms: Date.now() - start };
    } catch (error) {
      return { error, ms: Date.now() - start };
    }
  };
  const kindOf = (error: unknown): string => (error instanceof McpError ? error.kind : `not an McpError: ${String(error)}`);

  describe('tool lists', () => {
    it('reads every page of tools/list, with readOnlyHint from the annotations', async () => {
      connection = await connectMcp(fixture('listChanged'), { log, secrets: secrets() });
      assert.deepEqual(connection.tools().map((t) => [t.name, t.readOnlyHint]), [['a', true], ['b', false], ['c', false], ['grow', false]]);
    });

    it('fetches the list again after notifications/tools/list_changed, then tells the listeners', async () => {
      connection = await connectMcp(fixture('listChanged'), { log, secrets: secrets() });
      let seen: string[] = [];
      const changed = new Promise<void>((resolve) => {
        connection?.onToolsChanged(() => {
          seen = connection?.tools().map((t) => t.name) ?? [];
          resolve();
        });
      });
      const result = await connection.call('grow', {}, { signal: NEVER, timeoutMs: 10_000 });
      assert.equal(result.text, 'added added-4');
      await changed;
      assert.deepEqual(seen, ['a', 'b', 'c', 'grow', 'added-4'], 'the listener already sees the new list');
    });

    it('stops reading a server that hands out cursors forever, with a warning, and still connects', async () => {
      // Tried: every tools/list page has a new nextCursor, endlessly.
      const result = await timed(() => connectMcp(fixture('listChanged', minimalEnv({ ENDLESS_PAGES: '1' })), { log, secrets: secrets() }));
      connection = result.value;
      assert.ok(connection, `connected: ${String(result.error)}`);
      assert.ok(connection.tools().length > 0);
      assert.ok(log.lines.some((l) => /\[warn\] mcp listChanged: tools\/list has more than 50 pages/.test(l)), log.lines.join('\n'));
    });
  });

  describe('calls that do not come back', () => {
    it('times out promptly, and the server hears the cancellation', async () => {
      connection = await connectMcp(fixture('neverAnswers'), { log, secrets: secrets() });
      const result = await timed(() => connection!.call('hang', {}, { signal: NEVER, timeoutMs: 300 }));
      assert.equal(kindOf(result.error), 'timeout');
      assert.match((result.error as Error).message, /^hang: no answer within 300 ms$/);
      // The timeout is the behaviour: a real-clock bound, ten times what is asked.
      assert.ok(result.ms < 3000, `took ${result.ms} ms`);
      await waitFor('the cancellation on the server', () => log.lines.some((l) => /stderr: the client cancelled request \d+/.test(l)));
      assert.equal(connection.closed, false, 'the connection stays usable');
    });

    it('is cancelled when the signal aborts, long before its timeout, and the server hears it', async () => {
      connection = await connectMcp(fixture('neverAnswers'), { log, secrets: secrets() });
      const abort = new AbortController();
      const result = timed(() => connection!.call('hang', {}, { signal: abort.signal, timeoutMs: 600_000 }));
      await waitFor('the call to reach the server', () => log.lines.some((l) => /stderr: request \d+ of hang arrived/.test(l)));
      abort.abort();
      // Cancelled, not timed out: the timeout is ten minutes, longer than this test may run.
      assert.equal(kindOf((await result).error), 'cancelled');
      await waitFor('the cancellation on the server', () => log.lines.some((l) => /stderr: the client cancelled request \d+/.test(l)));
    });

    it('is not sent at all when the signal has already aborted', async () => {
      connection = await connectMcp(fixture('neverAnswers'), { log, secrets: secrets() });
      const abort = new AbortController();
      abort.abort();
      await assert.rejects(connection.call('hang', {}, { signal: abort.signal, timeoutMs: 60_000 }), (err: unknown) => isKindError(err, McpError, 'cancelled'));
      // A second call, sent after it on the same pipe: once the server has seen that one, it would have seen the first.
      const second = new AbortController();
      const call = connection.call('hang', {}, { signal: second.signal, timeoutMs: 600_000 });
      await waitFor('the second call to reach the server', () => log.lines.some((l) => /stderr: request \d+ of hang arrived/.test(l)));
      second.abort();
      await assert.rejects(call, (err: unknown) => isKindError(err, McpError, 'cancelled'));
      assert.equal(log.lines.filter((l) => /stderr: request \d+ of hang arrived/.test(l)).length, 1, 'the server saw only the second call');
    });

    it('fails promptly as crashed when the server exits in the middle of the call, not after the timeout', async () => {
      connection = await connectMcp(fixture('exitMidCall'), { log, secrets: secrets() });
      const reasons: string[] = [];
      connection.onClosed((reason) => reasons.push(reason));
      const result = await timed(() => connection!.call('die', {}, { signal: NEVER, timeoutMs: 30_000 }));
      assert.equal(kindOf(result.error), 'crashed');
      // Crashed, not timed out: the timeout (30 s) would have said "no answer within".
      assert.match((result.error as Error).message, /die: the server exited with code 3/);
      assert.equal(connection.closed, true);
      assert.deepEqual(reasons, ['the server exited with code 3']);
      assert.ok(log.lines.some((l) => l.includes('mcp exitMidCall: stderr: dying in the middle of a call')), log.lines.join('\n'));
      await assert.rejects(connection.call('ok', {}, { signal: NEVER, timeoutMs: 1000 }), (err: unknown) => isKindError(err, McpError, 'crashed'));
    });
  });

  describe('what a server writes', () => {
    it('logs lines on stdout that are not JSON-RPC, bounded, and goes on', async () => {
      // Tried: a banner, a 200 KB line and a JSON object that is not JSON-RPC before initialize, and a line in the middle of a call.
      connection = await connectMcp(fixture('garbageStdout'), { log, secrets: secrets() });
      const result = await connection.call('noise', {}, { signal: NEVER, timeoutMs: 10_000 });
      assert.equal(result.text, 'still fine');
      const garbage = log.lines.filter((l) => l.includes('stdout line that is not JSON-RPC'));
      assert.ok(garbage.some((l) => l.includes('Welcome to the garbage server!')), log.lines.join('\n'));
      assert.ok(garbage.some((l) => l.includes('"looks": "like json"')));
      await waitFor('the line written mid-call', () => log.lines.some((l) => l.includes('noise in the middle of a call')));
      for (const line of log.lines) assert.ok(line.length < 1200, `a log line of ${line.length} characters`);
    });

    it('logs stderr line by line, prefixed with the server name, redacted and bounded', async () => {
      const secret = 'stderr-secret-0123456789abcdef';
      connection = await connectMcp(fixture('garbageStdout', minimalEnv({ SECRET_TO_PRINT: secret })), { log, secrets: new SecretSet([secret]) });
      await waitFor('the stderr line', () => log.lines.some((l) => l.includes('starting with token')));
      const line = log.lines.find((l) => l.includes('starting with token'));
      assert.equal(line, '[info] mcp garbageStdout: stderr: starting with token [redacted]');
      assert.ok(!log.lines.some((l) => l.includes(secret)));
      const long = log.lines.find((l) => l.includes('eeee'));
      assert.ok(long !== undefined && long.length <= 1100 && long.endsWith('…'), `the 50 KB line is clipped: ${long?.length}`);
    });

    it('logs at most 200 lines of a server that floods stderr', async () => {
      // Tried: 5,000 lines on stderr at once.
      connection = await connectMcp(fixture('garbageStdout', minimalEnv({ STDERR_FLOOD: '5000' })), { log, secrets: secrets() });
      await connection.call('noise', {}, { signal: NEVER, timeoutMs: 10_000 });
      // One window lets 200 lines of the server through, stdout garbage and stderr together.
      const fromServer = (): string[] => log.lines.filter((l) => /^\[(info|warn)\] mcp garbageStdout: (stderr|stdout line that is not JSON-RPC)/.test(l));
      await waitFor("the window's 200 lines", () => fromServer().length >= 200);
      const flood = log.lines.filter((l) => l.includes('stderr: flood line'));
      assert.ok(flood.length > 0, 'the flood is logged');
      assert.equal(fromServer().length, 200, 'no more than one window holds (serverLog.test.ts counts the rest on a clock of its own)');
      assert.equal(flood.at(-1), `[info] mcp garbageStdout: stderr: flood line ${flood.length - 1}`, 'the first lines, in order');
    });

    it('returns a 5 MB result bounded to 64 KiB with a marker saying how much was cut, redacted', async () => {
      const secret = 'result-secret-abcdef0123456789';
      connection = await connectMcp(fixture('bigResult'), { log, secrets: new SecretSet([secret]) });
      const bytes = 5 * 1024 * 1024;
      // Tried: the secret first, and once more straddling the 64 KiB cut.
      const result = await timed(() => connection!.call('big', { bytes, head: `${secret} `, at: secret, atOffset: 65_536 - 10 }, { signal: NEVER, timeoutMs: 30_000 }));
      const value = result.value;
      assert.ok(value, String(result.error));
      assert.equal(value.bytes, bytes);
      assert.ok(value.text.startsWith('[redacted] xxx'), value.text.slice(0, 40));
      assert.ok(!value.text.includes(secret.slice(0, 12)), 'no piece of the secret at the cut');
      assert.match(value.text, /\n\[truncated: showed [\d,]+ of 5,242,880 bytes\]$/);
      assert.ok(Buffer.byteLength(value.text) <= 64 * 1024 + 100, `${Buffer.byteLength(value.text)} bytes returned`);
    });

    it('closes the connection with a protocol error when one message passes 32 MiB', async () => {
      // Tried: a result of 40 MB, larger than anything Candor holds.
      connection = await connectMcp(fixture('bigResult'), { log, secrets: secrets() });
      const result = await timed(() => connection!.call('big', { bytes: 40 * 1024 * 1024 }, { signal: NEVER, timeoutMs: 30_000 }));
      assert.equal(kindOf(result.error), 'protocol');
      assert.match((result.error as Error).message, /larger than 32 MiB/);
      assert.equal(connection.closed, true);
    });

    it('answers sampling, elicitation and roots requests with "method not found", and logs them', async () => {
      connection = await connectMcp(fixture('asksSampling'), { log, secrets: secrets() });
      const result = await connection.call('ask', {}, { signal: NEVER, timeoutMs: 10_000 });
      const lines = result.text.split('\n');
      assert.equal(lines.length, 3);
      assert.match(lines[0] ?? '', /^sampling\/createMessage: error -32601 .*Candor does not support sampling\/createMessage/);
      assert.match(lines[1] ?? '', /^elicitation\/create: error -32601 /);
      assert.match(lines[2] ?? '', /^roots\/list: error -32601 /);
      assert.ok(log.lines.some((l) => l === '[warn] mcp asksSampling: the server asked for sampling/createMessage, which Candor does not offer; it was told so'), log.lines.join('\n'));
    });
  });

  describe('processes', () => {
    it('kills the whole process group on close: a grandchild that ignores SIGTERM is gone too', async () => {
      const pidFile = path.join(tmp, 'pids');
      connection = await connectMcp(fixture('grandchild', minimalEnv({ PID_FILE: pidFile })), { log, secrets: secrets() });
      const [server, grandchild] = fs.readFileSync(pidFile, 'utf8').split(' ').map(Number);
      assert.ok(server && grandchild && alive(server) && alive(grandchild), 'both run while connected');
      // The grandchild ignores SIGTERM: close() sends SIGKILL after the grace, and the kernel ends both.
      await connection.close();
      await waitFor('the processes to go', () => !alive(server) && !alive(grandchild));
    });

    it('ends the group of a server that crashed, grandchild included', async () => {
      // The leader exits on its own; what it started must not stay behind.
      const pidFile = path.join(tmp, 'pids');
      const script = `
        const { spawn } = require('node:child_process');
        const child = spawn(process.execPath, ['-e', "process.on('SIGTERM', () => {}); setInterval(() => {}, 1000)"], { stdio: 'ignore' });
        require('node:fs').writeFileSync(process.env.PID_FILE, String(child.pid));
        setTimeout(() => process.exit(1), 200);`;
      const result = await timed(() => connectMcp(inlineServer('crasher', script, minimalEnv({ PID_FILE: pidFile })), { log, secrets: secrets() }));
      assert.equal(kindOf(result.error), 'start');
      assert.match((result.error as Error).message, /the server exited with code 1 before it finished starting/);
      const grandchild = Number(fs.readFileSync(pidFile, 'utf8'));
      await waitFor('the grandchild to go', () => !alive(grandchild), 5000);
    });

    it('ends every server group when Candor itself exits', async () => {
      const pidFile = path.join(tmp, 'pids');
      const clientModule = path.resolve(__dirname, '../../../../src/core/mcp/client.ts');
      const grandchildServer = path.resolve(__dirname, '../../../fixtures/mcp/grandchild.mjs');
      const script = `
        const { connectMcp } = require(${JSON.stringify(clientModule)});
        const { SecretSet } = require(${JSON.stringify(path.resolve(__dirname, '../../../../src/core/redact.ts'))});
        const { silentLogger } = require(${JSON.stringify(path.resolve(__dirname, '../../../../src/core/log.ts'))});
        connectMcp({ name: 'g', type: 'stdio', command: process.execPath, args: [${JSON.stringify(grandchildServer)}], env: { PID_FILE: ${JSON.stringify(pidFile)} } }, { log: silentLogger, secrets: new SecretSet() })
          .then(() => process.exit(0), (err) => { console.error(err); process.exit(2); });`;
      await promisify(execFile)(process.execPath, ['--require', 'tsx/cjs', '-e', script], { cwd: path.resolve(__dirname, '../../../..') });
      const [server, grandchild] = fs.readFileSync(pidFile, 'utf8').split(' ').map(Number);
      assert.ok(server && grandchild);
      // The grandchild ignores SIGTERM: only the SIGKILL of the exit hook ends it.
      await waitFor('the server and its grandchild to go', () => !alive(server) && !alive(grandchild), 5000);
    });
  });

  describe('starting', () => {
    it('says a command that does not exist could not be started', async () => {
      const server = { name: 'missing', type: 'stdio' as const, command: 'candor-no-such-mcp-server', args: [], env: minimalEnv() };
      await assert.rejects(connectMcp(server, { log, secrets: secrets() }), (err: unknown) => isKindError(err, McpError, 'start') && /could not start candor-no-such-mcp-server: not found/.test((err as Error).message));
    });

    it('says a command line Node refuses (a NUL byte in an argument) could not be started', async () => {
      // Tried: an argument with a NUL byte, as a hostile definition might hold.
      const server = { ...fixture('exitMidCall'), args: ['evil\u0000arg'] } as const;
      await assert.rejects(connectMcp(server, { log, secrets: secrets() }), (err: unknown) => isKindError(err, McpError, 'start') && /could not start/.test((err as Error).message));
    });

    it('says a folder to start in that does not exist', async () => {
      const server = { ...fixture('exitMidCall'), cwd: path.join(tmp, 'gone') } as const;
      await assert.rejects(connectMcp(server, { log, secrets: secrets() }), (err: unknown) => isKindError(err, McpError, 'start') && /does not exist/.test((err as Error).message));
    });

    it('reports the exit and the last stderr of a server that dies before initialize', async () => {
      const server = inlineServer('dies', "process.stderr.write('config file missing\\n'); process.exit(2)");
      await assert.rejects(connectMcp(server, { log, secrets: secrets() }), (err: unknown) => isKindError(err, McpError, 'start') && /exited with code 2 before it finished starting; its last words on stderr: config file missing/.test((err as Error).message));
    });

    it('times out a server that never answers initialize, and leaves no process', async () => {
      const pidFile = path.join(tmp, 'pid');
      const server = inlineServer('silent', "require('fs').writeFileSync(process.env.PID_FILE, String(process.pid)); setInterval(() => {}, 1000)", minimalEnv({ PID_FILE: pidFile }));
      const result = await timed(() => connectMcp(server, { log, secrets: secrets(), connectTimeoutMs: 500 }));
      assert.equal(kindOf(result.error), 'timeout');
      assert.match((result.error as Error).message, /did not finish starting within 0.5 s/);
      // The timeout is the behaviour: a real-clock bound, ten times what is asked.
      assert.ok(result.ms < 5000, `took ${result.ms} ms`);
      const pid = Number(fs.readFileSync(pidFile, 'utf8'));
      await waitFor('the silent server to go', () => !alive(pid));
    });

    it('gives up connecting when the signal aborts, long before its timeout, and leaves no process', async () => {
      const abort = new AbortController();
      const pidFile = path.join(tmp, 'pid');
      const server = inlineServer('silent', "require('fs').writeFileSync(process.env.PID_FILE, String(process.pid)); setInterval(() => {}, 1000)", minimalEnv({ PID_FILE: pidFile }));
      const result = timed(() => connectMcp(server, { log, secrets: secrets(), signal: abort.signal, connectTimeoutMs: 600_000 }));
      await waitFor('the server to start', () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8') !== '');
      abort.abort();
      // Cancelled, not timed out: the timeout is ten minutes, longer than this test may run.
      assert.equal(kindOf((await result).error), 'cancelled');
      const pid = Number(fs.readFileSync(pidFile, 'utf8'));
      await waitFor('the server to go', () => !alive(pid));
    });
  });
});
