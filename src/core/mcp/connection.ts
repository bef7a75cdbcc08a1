import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../errorMessage';
import type { Logger } from '../log';
import type { SecretSet } from '../redact';
import { oneLine } from '../text';
import type { Subscription } from '../subscription';
import { McpError, detail, fromSdkError } from './errors';
import { renderResult } from './results';
import { listAllTools } from './toolList';
import type { McpCallResult, McpTool } from './types';

/** The longest timer Node keeps (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;

export interface CallOptions {
  readonly signal: AbortSignal;
  readonly timeoutMs: number;
}

/** One connected MCP server, as the rest of Candor uses it. */
export interface McpConnection {
  /** The server's name, as defined. */
  readonly server: string;
  /** The tools as last listed. */
  tools(): readonly McpTool[];
  /** After `notifications/tools/list_changed` the list is fetched again, then each listener runs. */
  onToolsChanged(listener: () => void): Subscription;
  /**
   * Calls a tool. Throws McpError: `timeout` after `timeoutMs`, `cancelled`
   * when `signal` aborts, `crashed` when the server stops meanwhile,
   * `protocol` when it answers with a JSON-RPC error. A result with
   * `isError` is returned, not thrown.
   */
  call(tool: string, args: Record<string, unknown>, o: CallOptions): Promise<McpCallResult>;
  readonly closed: boolean;
  /** Runs once when the connection closes, for whatever reason (at once when it already has). */
  onClosed(listener: (reason: string) => void): Subscription;
  /** Ends the connection (and a stdio server's whole process group); resolves when it is gone. */
  close(): Promise<void>;
}

/** How a transport ended on its own, when it can say (the stdio transport can). */
export interface Ending {
  readonly kind: 'crashed' | 'protocol';
  readonly reason: string;
}

interface ConnectionParts {
  readonly server: string;
  readonly client: Client;
  readonly log: Logger;
  readonly secrets: SecretSet;
  /** Prefix of log lines ("mcp github:"). */
  readonly prefix: string;
  /** Timeout of each tools/list request. */
  readonly listTimeoutMs: number;
  /** How the transport ended, once it has. */
  readonly ending: () => Ending | undefined;
  /** Extra steps before the client closes (ending an HTTP session). */
  readonly beforeClose?: () => Promise<void>;
}

/**
 * The McpConnection over an SDK Client that has finished initialize. It
 * keeps the tool list, refetches it on `list_changed` (one fetch at a time;
 * a notification during a fetch means one more fetch after it), and turns
 * every failure of a call into an McpError promptly: the call's own timer
 * and the caller's signal abort the request (the SDK sends
 * `notifications/cancelled`), and a transport that closes rejects it at once.
 */
export class Connection implements McpConnection {
  readonly server: string;
  #tools: readonly McpTool[] = [];
  #closed = false;
  #closedByCandor = false;
  #reason = '';
  #closing: Promise<void> | undefined;
  #refreshing: Promise<void> | undefined;
  #refreshAgain = false;
  readonly #toolListeners = new Set<() => void>();
  readonly #closeListeners = new Set<(reason: string) => void>();

  constructor(private readonly parts: ConnectionParts) {
    this.server = parts.server;
    const client = parts.client;
    client.onclose = () => this.#markClosed();
    // Set only now: while connecting, what goes wrong is thrown, not logged.
    client.onerror = (err) => this.#logError(err);
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.#refreshThenTell());
    // It may have closed between initialize and now.
    if (client.transport === undefined) this.#markClosed();
  }

  get closed(): boolean {
    return this.#closed;
  }

  tools(): readonly McpTool[] {
    return this.#tools;
  }

  /** The first listing, before the connection is handed out; throws what the listing threw. */
  async listTools(signal?: AbortSignal): Promise<void> {
    this.#tools = await listAllTools(this.parts.client, { ...this.#listOptions(), signal });
  }

  onToolsChanged(listener: () => void): Subscription {
    this.#toolListeners.add(listener);
    return { dispose: () => this.#toolListeners.delete(listener) };
  }

  onClosed(listener: (reason: string) => void): Subscription {
    if (this.#closed) {
      queueMicrotask(() => listener(this.#reason));
      return { dispose: () => undefined };
    }
    this.#closeListeners.add(listener);
    return { dispose: () => this.#closeListeners.delete(listener) };
  }

  async call(tool: string, args: Record<string, unknown>, o: CallOptions): Promise<McpCallResult> {
    const what = oneLine(tool, 100);
    if (this.#closed) throw this.#closedError(what);
    if (o.signal.aborted) throw new McpError('cancelled', `${what}: cancelled before it was sent`, this.server);
    const controller = new AbortController();
    let timedOut = false;
    const timer = Number.isFinite(o.timeoutMs)
      ? setTimeout(() => {
          timedOut = true;
          controller.abort();
        }, Math.min(Math.max(o.timeoutMs, 0), MAX_TIMER_MS))
      : undefined;
    const onAbort = (): void => controller.abort();
    o.signal.addEventListener('abort', onAbort, { once: true });
    try {
      // The call's own timer governs; the SDK's is only kept out of the way.
      const result = await this.parts.client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, CallToolResultSchema, { signal: controller.signal, timeout: MAX_TIMER_MS });
      return renderResult(result, this.parts.secrets);
    } catch (err) {
      if (timedOut) throw new McpError('timeout', `${what}: no answer within ${seconds(o.timeoutMs)}`, this.server, { cause: err });
      if (o.signal.aborted) throw new McpError('cancelled', `${what}: cancelled`, this.server, { cause: err });
      if (this.#closed) throw this.#closedError(what, err);
      throw fromSdkError(err, this.server, what, this.parts.secrets);
    } finally {
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
    }
  }

  close(): Promise<void> {
    this.#closing ??= this.#close();
    return this.#closing;
  }

  async #close(): Promise<void> {
    if (this.#closed) return;
    this.#closedByCandor = true;
    await this.parts.beforeClose?.().catch(() => undefined);
    await this.parts.client.close().catch((err: unknown) => this.parts.log.warn(`${this.parts.prefix} closing: ${detail(errorMessage(err), this.parts.secrets)}`));
    this.#markClosed();
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    const ending = this.parts.ending();
    this.#reason = this.#closedByCandor ? 'closed by Candor' : (ending?.reason ?? 'the connection closed');
    if (!this.#closedByCandor) this.parts.log.warn(`${this.parts.prefix} ${this.#reason}`);
    const listeners = [...this.#closeListeners];
    this.#closeListeners.clear();
    this.#toolListeners.clear();
    for (const listener of listeners) this.#run(() => listener(this.#reason));
  }

  #closedError(what: string, cause?: unknown): McpError {
    if (this.#closedByCandor) return new McpError('cancelled', `${what}: the connection was closed`, this.server, { cause });
    const ending = this.parts.ending();
    return new McpError(ending?.kind ?? 'crashed', `${what}: ${ending?.reason ?? 'the connection closed'}`, this.server, { cause });
  }

  /** Refetches the list (once more if told again meanwhile), then tells the listeners. */
  async #refreshThenTell(): Promise<void> {
    if (this.#refreshing !== undefined) {
      this.#refreshAgain = true;
      return;
    }
    this.#refreshing = this.#refreshLoop();
    try {
      await this.#refreshing;
    } finally {
      this.#refreshing = undefined;
    }
  }

  async #refreshLoop(): Promise<void> {
    do {
      this.#refreshAgain = false;
      try {
        this.#tools = await listAllTools(this.parts.client, this.#listOptions());
      } catch (err) {
        if (!this.#closed) this.parts.log.warn(`${this.parts.prefix} listing the tools again failed; the old list stays: ${detail(errorMessage(err), this.parts.secrets)}`);
        return;
      }
      if (this.#closed) return;
      this.parts.log.info(`${this.parts.prefix} tool list changed: ${this.#tools.length} tools`);
      for (const listener of [...this.#toolListeners]) this.#run(listener);
    } while (this.#refreshAgain && !this.#closed);
  }

  #listOptions(): { timeoutMs: number; secrets: SecretSet; log: Logger; prefix: string } {
    return { timeoutMs: this.parts.listTimeoutMs, secrets: this.parts.secrets, log: this.parts.log, prefix: this.parts.prefix };
  }

  /** What the SDK reports out of band; the late answer to a call given up on is expected, not a warning. */
  #logError(err: unknown): void {
    const message = errorMessage(err);
    const level = message.startsWith('Received a response for an unknown message ID') ? 'trace' : 'warn';
    this.parts.log[level](`${this.parts.prefix} ${detail(message, this.parts.secrets)}`);
  }

  /** A listener that throws is logged, and the others still run. */
  #run(listener: () => void): void {
    try {
      listener();
    } catch (err) {
      this.parts.log.error(`${this.parts.prefix} a listener failed: ${errorMessage(err)}`);
    }
  }
}

function seconds(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;
}
