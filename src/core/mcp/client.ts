import { setMaxListeners } from 'node:events';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, LoggingMessageNotificationSchema, McpError as ProtocolError } from '@modelcontextprotocol/sdk/types.js';
import type { jsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/types.js';
import type { Logger } from '../log';
import type { SecretSet } from '../redact';
import { oneLine } from '../text';
import { Connection, type Ending, type McpConnection } from './connection';
import { McpError, fromSdkError, httpStatus } from './errors';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './limits';
import { fallsBackToSse, remoteKinds, remoteTransport, type RemoteKind } from './remoteTransport';
import { ServerLog } from './serverLog';
import { ProcessTransport } from './stdioTransport';
import type { ExpandedServer } from './types';
import { isKindError } from '../kindError';

export type { McpConnection } from './connection';

export interface McpConnectOptions {
  readonly log: Logger;
  /** Stderr lines, log lines and results are redacted with it. */
  readonly secrets: SecretSet;
  /** Starting the server, initialize and the first tools/list together (default 30 s). */
  readonly connectTimeoutMs?: number;
  /** Gives up connecting (not the connection once made). */
  readonly signal?: AbortSignal;
  /** Sent in initialize as the client's version. */
  readonly clientVersion?: string;
}

/**
 * Connects to one MCP server (docs/architecture.md, "MCP") and lists its
 * tools. Candor declares no client capabilities (no sampling, elicitation or
 * roots): a server that asks for one anyway gets "method not found" and a
 * log line. Throws McpError: `start`, `timeout`, `cancelled`, `sign-in`,
 * `http`, `protocol`.
 */
export async function connectMcp(server: ExpandedServer, o: McpConnectOptions): Promise<McpConnection> {
  const prefix = `mcp ${oneLine(server.name, 80)}:`;
  const serverLog = new ServerLog(o.log, o.secrets, prefix);
  const timeoutMs = o.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const deadline = new Deadline(timeoutMs, o.signal);
  try {
    const kinds: ReadonlyArray<RemoteKind | 'stdio'> = server.type === 'stdio' ? ['stdio'] : remoteKinds(server);
    for (const [i, kind] of kinds.entries()) {
      const attempt = { server, kind, prefix, serverLog, deadline, o };
      try {
        return await connectOnce(attempt);
      } catch (err) {
        if (deadline.fired !== undefined) throw deadline.error(server.name, err);
        if (i + 1 < kinds.length && fallsBackToSse(err)) {
          o.log.info(`${prefix} Streamable HTTP answered HTTP ${httpStatus(err)} to initialize; trying the SSE transport`);
          continue;
        }
        throw isKindError(err, McpError) ? err : fromSdkError(err, server.name, 'initialize', o.secrets);
      }
    }
    throw new McpError('start', 'no transport to try', server.name);
  } finally {
    deadline.dispose();
  }
}

interface Attempt {
  readonly server: ExpandedServer;
  readonly kind: RemoteKind | 'stdio';
  readonly prefix: string;
  readonly serverLog: ServerLog;
  readonly deadline: Deadline;
  readonly o: McpConnectOptions;
}

/** One transport: start it, initialize, list the tools; on any failure the transport (and a stdio server's group) is closed. */
async function connectOnce(a: Attempt): Promise<Connection> {
  const { transport, ending } = makeTransport(a);
  const client = newClient(a);
  let connection: Connection | undefined;
  try {
    await raced(client.connect(transport, { signal: a.deadline.signal, timeout: a.deadline.timeoutMs }), a.deadline.signal);
    connection = new Connection({
      server: a.server.name,
      client,
      log: a.o.log,
      secrets: a.o.secrets,
      prefix: a.prefix,
      listTimeoutMs: a.deadline.timeoutMs,
      ending,
      beforeClose: transport instanceof StreamableHTTPClientTransport ? () => endSession(transport) : undefined,
    });
    await raced(connection.listTools(a.deadline.signal), a.deadline.signal);
    a.o.log.info(`${a.prefix} connected over ${a.kind}, ${connection.tools().length} tools`);
    return connection;
  } catch (err) {
    await (connection?.close() ?? client.close()).catch(() => undefined);
    await transport.close().catch(() => undefined);
    throw startFailure(err, ending(), a);
  }
}

function makeTransport(a: Attempt): { transport: Transport; ending: () => Ending | undefined } {
  if (a.server.type === 'stdio') {
    const transport = new ProcessTransport(a.server, a.serverLog);
    return { transport, ending: () => transport.ending };
  }
  return { transport: remoteTransport(a.server, a.kind === 'sse' ? 'sse' : 'streamable-http'), ending: () => undefined };
}

/** A stdio server that died while starting: its exit and its last stderr lines say why. */
function startFailure(err: unknown, ending: Ending | undefined, a: Attempt): unknown {
  if (ending === undefined || a.deadline.fired !== undefined) return err;
  const recent = a.serverLog.recent();
  const said = recent.length > 0 ? `; its last words on stderr: ${recent.join(' | ')}` : '';
  const kind = ending.kind === 'protocol' ? 'protocol' : 'start';
  return new McpError(kind, `the server ${ending.reason.replace(/^the server /, '')} before it finished starting${said}`, a.server.name, { cause: err });
}

/** Candor validates no tool's structured output (it shows the content), so the SDK's JSON-schema compiler is never built. */
const NO_OUTPUT_VALIDATION: jsonSchemaValidator = {
  getValidator: () => (input: unknown) => ({ valid: true, data: input as never, errorMessage: undefined }),
};

function newClient(a: Attempt): Client {
  const client = new Client({ name: 'Candor', version: a.o.clientVersion ?? '0.0.0' }, { capabilities: {}, jsonSchemaValidator: NO_OUTPUT_VALIDATION });
  client.fallbackRequestHandler = async (request) => {
    const method = oneLine(request.method, 100);
    a.o.log.warn(`${a.prefix} the server asked for ${method}, which Candor does not offer; it was told so`);
    throw new ProtocolError(ErrorCode.MethodNotFound, `Candor does not support ${method}`);
  };
  client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
    const data = notification.params.data;
    a.serverLog.line(typeof data === 'string' ? data : (JSON.stringify(data) ?? ''), `log ${notification.params.level}`);
  });
  return client;
}

/** Ends a Streamable HTTP session (DELETE), briefly: a server that does not answer is not waited for. */
async function endSession(transport: StreamableHTTPClientTransport): Promise<void> {
  await Promise.race([transport.terminateSession(), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
}

/** `promise`, or a rejection as soon as `signal` aborts (some steps, like the SSE handshake, take no signal). */
function raced<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** The connect timeout and the caller's signal as one signal, remembering which fired. */
class Deadline {
  readonly #controller = new AbortController();
  readonly #timer: NodeJS.Timeout;
  readonly #onAbort = (): void => this.#fire('cancelled');
  fired: 'timeout' | 'cancelled' | undefined;

  constructor(
    readonly timeoutMs: number,
    private readonly outer?: AbortSignal,
  ) {
    // The SDK adds a listener to the signal of each request and never removes
    // it; every page of the first tools/list is a request.
    setMaxListeners(100, this.#controller.signal);
    this.#timer = setTimeout(() => this.#fire('timeout'), timeoutMs);
    if (outer?.aborted) this.#fire('cancelled');
    else outer?.addEventListener('abort', this.#onAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.#controller.signal;
  }

  error(server: string, cause: unknown): McpError {
    if (this.fired === 'timeout') return new McpError('timeout', `it did not finish starting within ${Math.round(this.timeoutMs / 100) / 10} s`, server, { cause });
    return new McpError('cancelled', 'connecting was cancelled', server, { cause });
  }

  dispose(): void {
    clearTimeout(this.#timer);
    this.outer?.removeEventListener('abort', this.#onAbort);
  }

  #fire(why: 'timeout' | 'cancelled'): void {
    if (this.fired !== undefined) return;
    this.fired = why;
    this.#controller.abort(new Error(why));
  }
}
