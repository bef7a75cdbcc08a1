import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connectMcp, type McpConnection } from '../../../../src/core/mcp/client';
import { SecretSet } from '../../../../src/core/redact';
import { MemoryLogger } from '../../../helpers/core';
import { FILESYSTEM, NEVER, everythingStdio, minimalEnv } from './clientServers';

// The reference servers of the MCP project, started from node_modules over
// stdio: what Candor's client sees of them is what a user would get.
describe('MCP client over stdio: server-everything and server-filesystem', function () {
  this.timeout(60_000);
  const SECRET = 'secret-value-for-the-echo-test-0123';
  let log: MemoryLogger;
  let connection: McpConnection | undefined;
  let savedKey: string | undefined;

  beforeEach(() => {
    log = new MemoryLogger();
    savedKey = process.env.OPENAI_API_KEY;
    process.env.OPENAI_API_KEY = 'sk-test-key-that-must-not-reach-the-server-000';
  });
  afterEach(async () => {
    await connection?.close();
    connection = undefined;
    if (savedKey === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = savedKey;
  });

  it('lists the tools server-everything offers, with their schemas and readOnlyHint', async () => {
    connection = await connectMcp(everythingStdio(), { log, secrets: new SecretSet() });
    const names = connection.tools().map((t) => t.name);
    for (const name of ['echo', 'get-sum', 'get-env', 'get-tiny-image']) assert.ok(names.includes(name), `${name} in ${names.join(', ')}`);
    const echo = connection.tools().find((t) => t.name === 'echo');
    assert.equal(echo?.description, 'Echoes back the input string');
    assert.equal(echo?.readOnlyHint, true);
    assert.deepEqual(Object.keys((echo?.inputSchema.properties ?? {}) as object), ['message']);
    assert.equal(connection.server, 'everything');
    assert.equal(connection.closed, false);
    assert.ok(log.lines.some((l) => /mcp everything: connected over stdio, \d+ tools/.test(l)), log.lines.join('\n'));
  });

  it('offers none of the tools that need a client capability (Candor declares none)', async () => {
    connection = await connectMcp(everythingStdio(), { log, secrets: new SecretSet() });
    const names = connection.tools().map((t) => t.name);
    for (const name of ['trigger-sampling-request', 'trigger-elicitation-request', 'get-roots-list']) assert.ok(!names.includes(name), `${name} is offered: ${names.join(', ')}`);
  });

  it('calls echo and get-sum and returns their text', async () => {
    connection = await connectMcp(everythingStdio(), { log, secrets: new SecretSet() });
    const echo = await connection.call('echo', { message: 'hello from Candor' }, { signal: NEVER, timeoutMs: 10_000 });
    assert.deepEqual(echo, { isError: false, text: 'Echo: hello from Candor', bytes: Buffer.byteLength('Echo: hello from Candor') });
    const sum = await connection.call('get-sum', { a: 2, b: 40 }, { signal: NEVER, timeoutMs: 10_000 });
    assert.equal(sum.text, 'The sum of 2 and 40 is 42.');
  });

  it('redacts a known secret the server echoes back', async () => {
    connection = await connectMcp(everythingStdio(), { log, secrets: new SecretSet([SECRET]) });
    const echo = await connection.call('echo', { message: `the key is ${SECRET}` }, { signal: NEVER, timeoutMs: 10_000 });
    assert.equal(echo.text, 'Echo: the key is [redacted]');
  });

  it('gives the server exactly the environment it was given: FOO and PATH, not OPENAI_API_KEY of Candor', async () => {
    connection = await connectMcp(everythingStdio(minimalEnv({ FOO: 'bar' })), { log, secrets: new SecretSet() });
    const result = await connection.call('get-env', {}, { signal: NEVER, timeoutMs: 10_000 });
    const env = JSON.parse(result.text) as Record<string, string>;
    assert.equal(env.FOO, 'bar');
    assert.equal(env.PATH, process.env.PATH);
    assert.equal(env.OPENAI_API_KEY, undefined);
    assert.equal(result.text.includes('sk-test-key'), false);
    assert.deepEqual(Object.keys(env).sort(), ['FOO', 'PATH'], 'nothing of the test process (HOME, USER, …) leaks in');
  });

  it('names an image with its type and decoded size instead of passing its bytes', async () => {
    connection = await connectMcp(everythingStdio(), { log, secrets: new SecretSet() });
    const result = await connection.call('get-tiny-image', {}, { signal: NEVER, timeoutMs: 10_000 });
    assert.match(result.text, /^Here's the image you requested:\n\[image image\/png, \d+\.\d KB\]\n/);
    assert.ok(!result.text.includes('iVBOR'), 'no base64 in the text');
    assert.ok(result.bytes > 1000, `bytes ${result.bytes} counts the decoded image`);
  });

  it('names resource links with their uri', async () => {
    connection = await connectMcp(everythingStdio(), { log, secrets: new SecretSet() });
    const result = await connection.call('get-resource-links', { count: 2 }, { signal: NEVER, timeoutMs: 10_000 });
    assert.match(result.text, /\[resource link demo:\/\/resource\/dynamic\/\w+\/1 \(.+\), text\/plain\]/);
    assert.equal(result.text.split('[resource link').length - 1, 2);
  });

  it('returns a call the server rejects (bad arguments) as isError, not thrown', async () => {
    connection = await connectMcp(everythingStdio(), { log, secrets: new SecretSet() });
    const result = await connection.call('get-sum', { a: 'two' }, { signal: NEVER, timeoutMs: 10_000 });
    assert.equal(result.isError, true);
    assert.match(result.text, /invalid|expected/i);
  });

  it('lists a folder through server-filesystem', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-fs-'));
    try {
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'hello');
      fs.mkdirSync(path.join(dir, 'sub'));
      const server = { name: 'files', type: 'stdio' as const, command: process.execPath, args: [FILESYSTEM, dir], env: minimalEnv() };
      connection = await connectMcp(server, { log, secrets: new SecretSet() });
      const listDirectory = connection.tools().find((t) => t.name === 'list_directory');
      assert.equal(listDirectory?.readOnlyHint, true);
      const result = await connection.call('list_directory', { path: dir }, { signal: NEVER, timeoutMs: 10_000 });
      assert.equal(result.isError, false);
      assert.match(result.text, /\[FILE\] notes\.txt/);
      assert.match(result.text, /\[DIR\] sub/);
      const outside = await connection.call('list_directory', { path: os.homedir() }, { signal: NEVER, timeoutMs: 10_000 });
      assert.equal(outside.isError, true, 'the server refuses a folder outside the one it was given');
    } finally {
      await connection?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('closes: the connection says so, calls after it are cancelled, the listeners hear "closed by Candor"', async () => {
    connection = await connectMcp(everythingStdio(), { log, secrets: new SecretSet() });
    const reasons: string[] = [];
    connection.onClosed((reason) => reasons.push(reason));
    await connection.close();
    assert.equal(connection.closed, true);
    assert.deepEqual(reasons, ['closed by Candor']);
    await assert.rejects(connection.call('echo', { message: 'x' }, { signal: NEVER, timeoutMs: 1000 }), { name: 'McpError', kind: 'cancelled' });
  });
});
