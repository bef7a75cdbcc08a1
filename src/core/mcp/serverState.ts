import * as path from 'node:path';
import type { McpConnection } from './connection';
import type { Subscription } from '../subscription';
import { definitionHash } from './definitionHash';
import type { McpServerDefinition, McpSource } from './types';

/**
 * Where one server stands: `starting` while its questions are asked and its
 * process starts; `running` with its tools offered; `failed` (it could not
 * start, or it stopped by itself), `cancelled` (the user did not confirm it
 * or did not give an input), `refused` (its definition may not run as
 * written) and `stopped` (the user stopped it) with no tools.
 */
export type ServerState = 'starting' | 'running' | 'failed' | 'cancelled' | 'refused' | 'stopped';

export interface ServerStatus {
  /** The name Candor knows it by (unique; see uniqueDefinitions). */
  readonly name: string;
  readonly source: McpSource;
  readonly state: ServerState;
  /** How many tools it offers now (0 unless running). */
  readonly tools: number;
  /** Why it is not running, on one line and redacted. */
  readonly reason?: string;
  /** The hash the user confirmed once it was expanded, the definition's as written before that. */
  readonly hash: string;
}

/**
 * The definitions under names no two share. Two definitions may carry one
 * name (the user's `github` and a folder's `github`); both are kept. The
 * user's own keeps its name, and so does the first definition of a name;
 * a later one is known as `<name> (<folder>)`, the folder's base name (then
 * `<name> (<folder> 2)`, …), in the status, the approval cards and the
 * model's tool names alike. Its hash covers that name, so a renamed server
 * is confirmed again: what the model calls it changed.
 */
export function uniqueDefinitions(defs: readonly McpServerDefinition[]): McpServerDefinition[] {
  const ordered = [...defs.filter((def) => def.source.kind === 'user'), ...defs.filter((def) => def.source.kind !== 'user')];
  const taken = new Set<string>();
  return ordered.map((def) => {
    let name = def.name;
    if (taken.has(name)) {
      const label = def.source.kind === 'workspace' ? path.basename(def.source.folder) || 'workspace' : 'user';
      name = `${def.name} (${label})`;
      for (let n = 2; taken.has(name); n++) name = `${def.name} (${label} ${n})`;
    }
    taken.add(name);
    return name === def.name ? def : { ...def, name };
  });
}

/**
 * One server's state between starts. Each start takes a new generation:
 * whatever an older start finishes later (a confirmation answered after a
 * stop, a connection made after a restart began) is dropped, its
 * connection closed, so a slot never holds two servers.
 */
export class ServerSlot {
  state: ServerState = 'starting';
  reason: string | undefined;
  /** The full hash (as expanded) once known. */
  hash: string;
  /** The definition's hash as written: what tells a changed definition from a kept one without expanding it. */
  writtenHash: string;
  #connection: McpConnection | undefined;
  #listeners: Subscription[] = [];
  #generation = 0;
  #abort = new AbortController();
  /** Closes of superseded connections still under way: a new start waits for them, and so does stop. */
  readonly #closing = new Set<Promise<void>>();
  /** The start's connect, while it runs: dispose waits for it (it ends promptly once aborted). */
  connecting: Promise<unknown> | undefined;

  constructor(public def: McpServerDefinition) {
    this.writtenHash = definitionHash(def);
    this.hash = this.writtenHash;
  }

  get name(): string {
    return this.def.name;
  }

  get connection(): McpConnection | undefined {
    return this.#connection;
  }

  /** Aborts when this start is superseded (a stop, a restart, dispose). */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** A new start of `def`: the older one, if any, is superseded. Returns the start's generation. */
  begin(def: McpServerDefinition): number {
    const old = this.#supersede();
    if (old !== undefined) {
      const closing = old
        .close()
        .catch(() => undefined)
        .finally(() => this.#closing.delete(closing));
      this.#closing.add(closing);
    }
    this.def = def;
    this.writtenHash = definitionHash(def);
    this.hash = this.writtenHash;
    this.state = 'starting';
    this.reason = undefined;
    return this.#generation;
  }

  get generation(): number {
    return this.#generation;
  }

  current(generation: number): boolean {
    return generation === this.#generation;
  }

  /** The start ended without a server. */
  settle(state: Exclude<ServerState, 'running' | 'starting'>, reason: string): void {
    this.state = state;
    this.reason = reason;
  }

  /** The start ended with a server; `onEvent` hears its tool-list changes and its close. */
  attach(connection: McpConnection, hash: string, onEvent: (closedBecause?: string) => void): void {
    this.#connection = connection;
    this.hash = hash;
    this.state = 'running';
    this.reason = undefined;
    this.#listeners = [
      connection.onToolsChanged(() => onEvent()),
      connection.onClosed((reason) => {
        if (this.#connection !== connection) return;
        this.#detach();
        onEvent(reason);
      }),
    ];
  }

  /** Ends whatever runs or starts, and says why (`stopped`, or `failed` when it closed by itself). */
  async stop(state: Exclude<ServerState, 'running' | 'starting'>, reason: string): Promise<void> {
    const connection = this.#supersede();
    this.state = state;
    this.reason = reason;
    await Promise.all([connection?.close(), this.connecting?.catch(() => undefined), this.closed()]);
  }

  /** Resolves once every superseded connection is closed (its process group gone). */
  async closed(): Promise<void> {
    await Promise.all([...this.#closing].map((closing) => closing.catch(() => undefined)));
  }

  status(): ServerStatus {
    return {
      name: this.name,
      source: this.def.source,
      state: this.state,
      tools: this.state === 'running' ? (this.#connection?.tools().length ?? 0) : 0,
      ...(this.reason === undefined ? {} : { reason: this.reason }),
      hash: this.hash,
    };
  }

  /** Drops the connection and starts a new generation; returns the connection to close. */
  #supersede(): McpConnection | undefined {
    const connection = this.#detach();
    this.#generation++;
    this.#abort.abort();
    this.#abort = new AbortController();
    return connection;
  }

  #detach(): McpConnection | undefined {
    const connection = this.#connection;
    this.#connection = undefined;
    for (const listener of this.#listeners) listener.dispose();
    this.#listeners = [];
    return connection;
  }
}
