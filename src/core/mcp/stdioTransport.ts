import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import * as fs from 'node:fs';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { deserializeMessage, serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage } from '../errorMessage';
import type { Ending } from './connection';
import { McpError } from './errors';
import { MAX_MESSAGE_BYTES } from './limits';
import { LineSplitter } from './lines';
import { killGroup, trackGroup } from './processGroup';
import type { ServerLog } from './serverLog';
import type { ExpandedServer } from './types';

type StdioServer = Extract<ExpandedServer, { type: 'stdio' }>;

/** The longest stderr line kept whole for the log (it is clipped further there). */
const MAX_STDERR_LINE = 8 * 1024;

/** Lines of stdout that are not JSON-RPC logged per connection; later ones only counted. */
const MAX_GARBAGE_LOGGED = 20;

/** How long stdout may still deliver after the server exited before the connection counts as closed. */
const DRAIN_MS = 100;

/**
 * The SDK's Transport over a child process of Candor's own, instead of the
 * SDK's StdioClientTransport (docs/architecture.md, "MCP"): the server leads
 * a process group of its own, which is ended whole (processGroup.ts); its
 * environment is exactly the one given, nothing of Candor's merged in; its
 * stderr goes to the log line by line; and a line on stdout that is not
 * JSON-RPC (a banner, a stray console.log) is logged and skipped instead of
 * breaking the connection. Messages are split and parsed with the SDK's own
 * functions; a message larger than MAX_MESSAGE_BYTES ends the connection
 * with a `protocol` error.
 */
export class ProcessTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;

  #child: ChildProcessWithoutNullStreams | undefined;
  #closed = false;
  #ending: Ending | undefined;
  #garbage = 0;
  #closing: Promise<void> | undefined;

  constructor(
    private readonly server: StdioServer,
    private readonly serverLog: ServerLog,
    private readonly maxMessageBytes = MAX_MESSAGE_BYTES,
  ) {}

  /** How the connection ended on its own ("the server exited with code 1"), undefined while it runs or when Candor closed it. */
  get ending(): Ending | undefined {
    return this.#ending;
  }

  async start(): Promise<void> {
    if (this.#child !== undefined) throw new Error('the transport is already started');
    await this.#checkFolder();
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(this.server.command, [...this.server.args], {
        cwd: this.server.cwd,
        env: { ...this.server.env },
        detached: process.platform !== 'win32',
        stdio: ['pipe', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (err) {
      // Node refuses some arguments before it tries (a NUL byte in one).
      throw new McpError('start', `could not start ${this.server.command.slice(0, 200)}: ${errorMessage(err)}`, this.server.name, { cause: err });
    }
    this.#child = child;
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err: NodeJS.ErrnoException) => reject(this.#startError(err)));
    });
    if (child.pid !== undefined) trackGroup(child.pid);
    this.#wire(child);
  }

  send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.#child?.stdin;
    if (this.#closed || stdin === undefined || !stdin.writable) return Promise.reject(new Error('the server is not running'));
    return new Promise((resolve, reject) => {
      stdin.write(serializeMessage(message), (err) => (err ? reject(err) : resolve()));
    });
  }

  /** Ends the server's whole process group; resolves when it is gone. */
  close(): Promise<void> {
    this.#closing ??= this.#end();
    return this.#closing;
  }

  async #end(): Promise<void> {
    const child = this.#child;
    if (child !== undefined) {
      child.stdin.end();
      if (child.pid !== undefined) await killGroup(child.pid);
      release(child);
    }
    this.#finish();
  }

  #wire(child: ChildProcessWithoutNullStreams): void {
    const stdout = new LineSplitter(this.maxMessageBytes, (line) => this.#onLine(line), () => this.#onOversized());
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk));
    const stderr = new LineSplitter(MAX_STDERR_LINE, (line) => this.serverLog.line(line.toString('utf8'), 'stderr'), (start) => this.serverLog.line(start.toString('utf8'), 'stderr'));
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk));
    child.stderr.on('end', () => stderr.flush());
    // A server that exits while Candor writes: the exit tells the story, not EPIPE.
    child.stdin.on('error', () => undefined);
    child.on('error', (err) => this.onerror?.(err));
    child.on('exit', (code, signal) => {
      const reason = signal !== null ? `the server was killed by ${signal}` : `the server exited with code ${code ?? 'unknown'}`;
      if (this.#closing === undefined) this.#ending ??= { kind: 'crashed', reason };
      // Whatever it left behind in its group goes too; stdout gets a moment to deliver what was written before the exit.
      if (child.pid !== undefined) void killGroup(child.pid);
      const drained = new Promise<void>((resolve) => {
        if (child.stdout.readableEnded) resolve();
        child.stdout.once('end', resolve);
        setTimeout(resolve, DRAIN_MS);
      });
      void drained.then(() => {
        release(child);
        this.#finish();
      });
    });
  }

  #onLine(line: Buffer): void {
    if (this.#closed) return;
    const text = line.toString('utf8');
    if (text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch {
      this.#onGarbage(text);
      return;
    }
    this.onmessage?.(message);
  }

  #onGarbage(text: string): void {
    this.#garbage++;
    if (this.#garbage <= MAX_GARBAGE_LOGGED) this.serverLog.line(text, 'stdout line that is not JSON-RPC, skipped', 'warn');
    if (this.#garbage === MAX_GARBAGE_LOGGED) this.serverLog.line(`${MAX_GARBAGE_LOGGED} such lines; later ones are skipped without a word`, 'stdout', 'warn');
  }

  #onOversized(): void {
    const mib = Math.round(this.maxMessageBytes / (1024 * 1024));
    this.#ending ??= { kind: 'protocol', reason: `the server sent a message larger than ${mib} MiB, the most Candor reads; the connection was closed` };
    void this.close();
  }

  /** Reports the close once, whoever noticed first. */
  #finish(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.onclose?.();
  }

  async #checkFolder(): Promise<void> {
    const cwd = this.server.cwd;
    if (cwd === undefined) return;
    const stat = await fs.promises.stat(cwd).catch(() => undefined);
    if (stat?.isDirectory() !== true) throw new McpError('start', `the folder to start it in, ${cwd}, does not exist`, this.server.name);
  }

  #startError(err: NodeJS.ErrnoException): McpError {
    const what = err.code === 'ENOENT' ? 'not found (is it on the PATH the server is given?)' : err.code === 'EACCES' ? 'not executable' : err.message;
    return new McpError('start', `could not start ${this.server.command.slice(0, 200)}: ${what}`, this.server.name, { cause: err });
  }
}

/**
 * Lets go of the pipes: a process that escaped the group kill (one that
 * made a session of its own) and still holds them must not keep Candor's
 * side open.
 */
function release(child: ChildProcessWithoutNullStreams): void {
  child.stdin.destroy();
  child.stdout.destroy();
  child.stderr.destroy();
}
