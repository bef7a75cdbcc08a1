import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { connectMcp, type McpConnection } from '../../../../src/core/mcp/client';
import { McpError } from '../../../../src/core/mcp/errors';
import type { ExpandedServer } from '../../../../src/core/mcp/types';
import { SecretSet } from '../../../../src/core/redact';
import { MemoryLogger } from '../../../helpers/core';
import { NEVER, freePort, startEverythingHttp } from './clientServers';

type Remote = Extract<ExpandedServer, { type: 'http' | 'sse' | 'auto' }>;

const remote = (type: Remote['type'], url: string, headers: Record<string, string> = {}): Remote => ({ name: 'remote', type, url, headers });

/** A real HTTP server on a free port that answers every request with `status` and records what it was asked. */
async function answering(status: number, headers: Record<string, string> = {}, body = 'no'): Promise<{ url: string; requests: http.IncomingMessage[]; close(): Promise<void> }> {
  const requests: http.IncomingMessage[] = [];
  const server = http.createServer((req, res) => {
    requests.push(req);
    req.resume();
    res.writeHead(status, { 'content-type': 'text/plain', ...headers });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function failure(promise: Promise<unknown>): Promise<McpError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error('it connected');
}

// server-everything over its two HTTP transports, and plain HTTP servers
// that refuse: Streamable HTTP, the legacy SSE transport, the fallback
// between them, and sign-in that Candor does not do.
describe('MCP client over HTTP', function () {
  this.timeout(60_000);
  let log: MemoryLogger;
  let connection: McpConnection | undefined;

  beforeEach(() => {
    log = new MemoryLogger();
  });
  afterEach(async () => {
    await connection?.close();
    connection = undefined;
  });

  describe('server-everything over Streamable HTTP', () => {
    let server: Awaited<ReturnType<typeof startEverythingHttp>>;
    before(async () => {
      server = await startEverythingHttp('streamableHttp');
    });
    after(async () => {
      await server.stop();
    });

    it('lists the tools and calls echo and get-sum', async () => {
      connection = await connectMcp(remote('http', `http://127.0.0.1:${server.port}/mcp`), { log, secrets: new SecretSet() });
      const names = connection.tools().map((t) => t.name);
      assert.ok(names.includes('echo') && names.includes('get-sum'), names.join(', '));
      const echo = await connection.call('echo', { message: 'over http' }, { signal: NEVER, timeoutMs: 10_000 });
      assert.equal(echo.text, 'Echo: over http');
      const sum = await connection.call('get-sum', { a: 1, b: 2 }, { signal: NEVER, timeoutMs: 10_000 });
      assert.equal(sum.text, 'The sum of 1 and 2 is 3.');
      assert.ok(log.lines.some((l) => /mcp remote: connected over streamable-http/.test(l)), log.lines.join('\n'));
    });

    it('auto connects with Streamable HTTP when the server speaks it, without trying SSE', async () => {
      connection = await connectMcp(remote('auto', `http://127.0.0.1:${server.port}/mcp`), { log, secrets: new SecretSet() });
      assert.ok(connection.tools().length > 0);
      assert.ok(!log.lines.some((l) => l.includes('trying the SSE transport')), log.lines.join('\n'));
    });

    it('times out a call to a tool that runs longer than the timeout, promptly', async () => {
      connection = await connectMcp(remote('http', `http://127.0.0.1:${server.port}/mcp`), { log, secrets: new SecretSet() });
      const start = Date.now();
      await assert.rejects(connection.call('trigger-long-running-operation', { duration: 10, steps: 2 }, { signal: NEVER, timeoutMs: 300 }), { kind: 'timeout' });
      // The timeout is the behaviour: a real-clock bound, ten times what is asked.
      assert.ok(Date.now() - start < 3000, `took ${Date.now() - start} ms`);
    });

    it('ends its session on close (the server forgets it)', async () => {
      connection = await connectMcp(remote('http', `http://127.0.0.1:${server.port}/mcp`), { log, secrets: new SecretSet() });
      await connection.close();
      assert.equal(connection.closed, true);
      await assert.rejects(connection.call('echo', { message: 'x' }, { signal: NEVER, timeoutMs: 1000 }), { kind: 'cancelled' });
    });
  });

  describe('server-everything over the legacy SSE transport', () => {
    let server: Awaited<ReturnType<typeof startEverythingHttp>>;
    before(async () => {
      server = await startEverythingHttp('sse');
    });
    after(async () => {
      await server.stop();
    });

    it('connects with type sse and calls echo', async () => {
      connection = await connectMcp(remote('sse', `http://127.0.0.1:${server.port}/sse`), { log, secrets: new SecretSet() });
      const echo = await connection.call('echo', { message: 'over sse' }, { signal: NEVER, timeoutMs: 10_000 });
      assert.equal(echo.text, 'Echo: over sse');
    });

    it('auto falls back to SSE when Streamable HTTP gets a 4xx at initialize', async () => {
      connection = await connectMcp(remote('auto', `http://127.0.0.1:${server.port}/sse`), { log, secrets: new SecretSet() });
      const echo = await connection.call('echo', { message: 'after the fallback' }, { signal: NEVER, timeoutMs: 10_000 });
      assert.equal(echo.text, 'Echo: after the fallback');
      assert.ok(log.lines.some((l) => /Streamable HTTP answered HTTP 404 to initialize; trying the SSE transport/.test(l)), log.lines.join('\n'));
    });

    it('http (Streamable HTTP only) does not fall back, and says what the server answered', async () => {
      const err = await failure(connectMcp(remote('http', `http://127.0.0.1:${server.port}/sse`), { log, secrets: new SecretSet() }));
      assert.equal(err.kind, 'http');
      assert.match(err.message, /HTTP 404/);
    });
  });

  describe('servers that refuse', () => {
    it('a 401 is sign-in, for every type, and auto does not fall back to SSE', async () => {
      // Tried: a server that wants OAuth (401 with a WWW-Authenticate header pointing at its metadata).
      const server = await answering(401, { 'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource"' });
      try {
        for (const type of ['http', 'sse', 'auto'] as const) {
          const err = await failure(connectMcp(remote(type, server.url), { log, secrets: new SecretSet() }));
          assert.equal(err.kind, 'sign-in', `${type}: ${err.message}`);
          assert.equal(err.message, 'this server needs sign-in, which Candor does not support yet');
          assert.equal(err.server, 'remote');
        }
        assert.ok(!log.lines.some((l) => l.includes('trying the SSE transport')), log.lines.join('\n'));
        assert.ok(server.requests.every((r) => !r.url?.includes('.well-known')), 'no OAuth discovery was started');
      } finally {
        await server.close();
      }
    });

    it('sends the headers of the definition, and redacts a secret the server echoes in its error', async () => {
      const token = 'header-token-0123456789abcdef';
      const server = await answering(500, {}, `bad token ${token}`);
      try {
        const err = await failure(connectMcp(remote('http', server.url, { 'X-Api-Token': token }), { log, secrets: new SecretSet([token]) }));
        assert.equal(err.kind, 'http');
        assert.match(err.message, /HTTP 500/);
        assert.ok(!err.message.includes(token), err.message);
        assert.equal(server.requests[0]?.headers['x-api-token'], token);
      } finally {
        await server.close();
      }
    });

    it('says so when nothing listens on the port', async () => {
      const port = await freePort();
      const err = await failure(connectMcp(remote('http', `http://127.0.0.1:${port}/mcp`), { log, secrets: new SecretSet() }));
      assert.equal(err.kind, 'http');
      assert.match(err.message, /could not reach the server \(ECONNREFUSED\)/);
    });

    it('refuses a URL that is not http or https', async () => {
      const err = await failure(connectMcp(remote('http', 'file:///etc/passwd'), { log, secrets: new SecretSet() }));
      assert.equal(err.kind, 'start');
      assert.match(err.message, /must start with http:\/\/ or https:\/\//);
    });
  });
});
