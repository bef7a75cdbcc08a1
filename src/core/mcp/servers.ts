/**
 * The MCP servers of a window (docs/architecture.md, "MCP"): started lazily,
 * before the first request that lists tools, once each; confirmed by the
 * user before they start; and kept out of the turn when anything goes
 * wrong: a server that cannot start, crashes or closes is `failed` with a
 * one-line reason, its tools are absent, and nothing throws.
 *
 * The questions (a definition's inputs, then the confirmation) are asked
 * one server at a time, since VS Code shows one input box or modal at a
 * time and a second one would cancel the first; the processes start in
 * parallel. A failed server is not started again by itself: it is tried
 * once more on the first ensureStarted after invalidate(), or on
 * restart(name).
 */
import { errorMessage } from '../errorMessage';
import type { Logger } from '../log';
import type { SecretSet } from '../redact';
import type { Subscription } from '../subscription';
import { connectMcp, type McpConnection } from './client';
import { definitionHash, describeForConfirmation } from './definitionHash';
import { quoteName } from './display';
import { detail } from './errors';
import { ServerSlot, uniqueDefinitions, type ServerState, type ServerStatus } from './serverState';
import type { ExpandedServer, McpServerDefinition, McpSource } from './types';
import type { ExpandResult } from './variables';
import { Serial } from '../serial';

export type { ServerStatus } from './serverState';

export interface McpDefinitions {
  readonly servers: readonly McpServerDefinition[];
  /** Lines about what was skipped (config.ts); logged on each read. */
  readonly problems: readonly string[];
}

export interface McpServersPorts {
  /** Read anew on each (re)start: the user's `mcp` setting and the trusted folders' definitions (the host does trust). */
  definitions(): Promise<McpDefinitions>;
  /** The host builds the ExpandContext (inputs, env, allow-lists). */
  expand(def: McpServerDefinition): Promise<ExpandResult>;
  /** Whether this definition may start: the host remembers confirmations by hash and asks otherwise (modal). false = cancelled. */
  confirm(def: McpServerDefinition, expanded: ExpandedServer, hash: string, lines: readonly string[]): Promise<boolean>;
  /** Default: connectMcp with the log and the secrets. `signal` aborts when the start is superseded (a stop, dispose). */
  connect?(server: ExpandedServer, signal: AbortSignal): Promise<McpConnection>;
  readonly log: Logger;
  /** expand's secrets are added here, so every log line, record and result is redacted of them. */
  readonly secrets: SecretSet;
}

export interface RunningServer {
  readonly server: string;
  readonly hash: string;
  readonly source: McpSource;
  readonly connection: McpConnection;
}

/** Why a start did not reach its connect. */
type Settled = { readonly kind: 'settled'; readonly state: Exclude<ServerState, 'running' | 'starting'>; readonly reason: string };
/** A definition expanded (and, once confirmed, ready to connect). */
type Expanded = { readonly kind: 'ready'; readonly server: ExpandedServer; readonly secrets: readonly string[]; readonly hash: string };
type Answer = Expanded | Settled | { readonly kind: 'superseded' | 'unchanged' };

export class McpServers {
  readonly #slots = new Map<string, ServerSlot>();
  readonly #listeners = new Set<() => void>();
  readonly #questions = new Serial();
  /** The current (or last) round of reading the definitions and starting what they name. */
  #round: Promise<void> = Promise.resolve();
  #stale = true;
  #disposed = false;

  constructor(private readonly ports: McpServersPorts) {}

  /**
   * Starts, once, every server that is defined and confirmed; later calls
   * are cheap until invalidate(). Never throws. A signal that aborts ends
   * the wait only: the servers go on starting, for the next turn.
   */
  ensureStarted(signal: AbortSignal): Promise<void> {
    if (this.#disposed) return Promise.resolve();
    if (this.#stale) {
      this.#stale = false;
      this.#round = this.#round.then(() => this.#reconcile());
    }
    return untilDoneOrAborted(this.#round, signal);
  }

  /**
   * The configuration changed. The next ensureStarted reads it again: a
   * removed server is stopped; a running one is expanded again and
   * restarted (and confirmed again) only when its hash changed; a failed or
   * refused one is tried once more; one the user cancelled or stopped stays
   * so unless its definition changed.
   */
  invalidate(): void {
    this.#stale = true;
  }

  status(): readonly ServerStatus[] {
    return [...this.#slots.values()].map((slot) => slot.status());
  }

  running(): readonly RunningServer[] {
    const running: RunningServer[] = [];
    for (const slot of this.#slots.values()) {
      const connection = slot.connection;
      if (slot.state === 'running' && connection !== undefined) running.push({ server: slot.name, hash: slot.hash, source: slot.def.source, connection });
    }
    return running;
  }

  /** Starts the server again from its definition as it is now (asking again what needs asking). */
  async restart(name: string): Promise<void> {
    if (this.#disposed) return;
    const defs = await this.#read();
    if (defs === undefined || this.#disposed) return;
    const def = defs.find((d) => d.name === name);
    const slot = this.#slots.get(name);
    if (def !== undefined) return this.#start(slot ?? this.#newSlot(def), def);
    if (slot === undefined) return;
    this.#slots.delete(name);
    await slot.stop('stopped', 'it is no longer defined');
    this.#changed();
  }

  /** Stops it now; it stays stopped until restart(name) or a change of its definition. */
  async stop(name: string): Promise<void> {
    const slot = this.#slots.get(name);
    if (slot === undefined) return;
    const stopping = slot.stop('stopped', 'stopped by the user');
    this.#changed();
    await stopping;
  }

  /**
   * MCP was turned off (candor.mcp.enabled): every server stops, and
   * none is remembered, so the next ensureStarted after invalidate() starts
   * them afresh, asking again what needs asking.
   */
  async stopAll(reason: string): Promise<void> {
    const slots = [...this.#slots.values()];
    this.#slots.clear();
    this.#stale = true;
    if (slots.length > 0) this.#changed();
    await Promise.all(slots.map((slot) => slot.stop('stopped', reason)));
  }

  /** Status changed, or a server's tool list did (after its `list_changed`). */
  onChanged(listener: () => void): Subscription {
    this.#listeners.add(listener);
    return { dispose: () => this.#listeners.delete(listener) };
  }

  /** Stops every server; resolves once their process groups are gone. */
  async dispose(): Promise<void> {
    this.#disposed = true;
    await Promise.all([...this.#slots.values()].map((slot) => slot.stop('stopped', 'Candor closed it')));
    this.#listeners.clear();
  }

  async #reconcile(): Promise<void> {
    try {
      const defs = await this.#read();
      if (defs === undefined || this.#disposed) return;
      const names = new Set(defs.map((def) => def.name));
      const removed = [...this.#slots.values()].filter((slot) => !names.has(slot.name));
      for (const slot of removed) this.#slots.delete(slot.name);
      if (removed.length > 0) this.#changed();
      await Promise.all([...removed.map((slot) => slot.stop('stopped', 'it is no longer defined')), ...defs.map((def) => this.#reconcileOne(def))]);
    } catch (err) {
      this.ports.log.error(`MCP: starting the servers failed: ${detail(errorMessage(err), this.ports.secrets)}`);
    }
  }

  async #reconcileOne(def: McpServerDefinition): Promise<void> {
    const slot = this.#slots.get(def.name);
    if (slot === undefined) return this.#start(this.#newSlot(def), def);
    // A restart(name) under way reads the definitions itself.
    if (slot.state === 'starting') return;
    const unchanged = slot.writtenHash === definitionHash(def);
    if ((slot.state === 'cancelled' || slot.state === 'stopped') && unchanged) return;
    return this.#start(slot, def, slot.state === 'running');
  }

  #newSlot(def: McpServerDefinition): ServerSlot {
    const slot = new ServerSlot(def);
    this.#slots.set(def.name, slot);
    return slot;
  }

  /**
   * One start of `slot` from `def`. `keepIfUnchanged` (a running server
   * after invalidate()): it is expanded again, and left running when its
   * hash is the same.
   */
  async #start(slot: ServerSlot, def: McpServerDefinition, keepIfUnchanged = false): Promise<void> {
    let generation = keepIfUnchanged ? slot.generation : this.#begin(slot, def);
    const answer = await this.#questions.run(async (): Promise<Answer> => {
      // Stopped while it waited its turn: nobody is asked anything.
      if (!slot.current(generation) || this.#disposed) return { kind: 'superseded' };
      const expanded = await this.#expand(def);
      if (keepIfUnchanged) {
        if (!slot.current(generation) || this.#disposed) return { kind: 'superseded' };
        if (slot.state === 'running' && expanded.kind === 'ready' && expanded.hash === slot.hash) return { kind: 'unchanged' };
        generation = this.#begin(slot, def);
      }
      return expanded.kind === 'ready' ? this.#confirm(def, expanded) : expanded;
    });
    if (!slot.current(generation) || this.#disposed) return;
    if (answer.kind === 'settled') this.#settle(slot, answer.state, answer.reason);
    else if (answer.kind === 'ready') await this.#connect(slot, generation, answer);
  }

  #begin(slot: ServerSlot, def: McpServerDefinition): number {
    const generation = slot.begin(def);
    this.#changed();
    return generation;
  }

  async #expand(def: McpServerDefinition): Promise<Expanded | Settled> {
    let result: ExpandResult;
    try {
      result = await this.ports.expand(def);
    } catch (err) {
      return { kind: 'settled', state: 'failed', reason: `its variables could not be expanded: ${detail(errorMessage(err), this.ports.secrets)}` };
    }
    if (!result.ok) return { kind: 'settled', state: result.kind, reason: detail(result.reason, this.ports.secrets) };
    for (const secret of result.secrets) this.ports.secrets.add(secret, `the MCP server ${quoteName(def.name)}`);
    return { kind: 'ready', server: result.server, secrets: result.secrets, hash: definitionHash(def, result.server, result.secrets) };
  }

  async #confirm(def: McpServerDefinition, expanded: Expanded): Promise<Expanded | Settled> {
    try {
      const lines = describeForConfirmation(expanded.server, expanded.secrets);
      if (await this.ports.confirm(def, expanded.server, expanded.hash, lines)) return expanded;
      return { kind: 'settled', state: 'cancelled', reason: 'its start was not confirmed' };
    } catch (err) {
      return { kind: 'settled', state: 'failed', reason: `asking to confirm it failed: ${detail(errorMessage(err), this.ports.secrets)}` };
    }
  }

  async #connect(slot: ServerSlot, generation: number, ready: Expanded): Promise<void> {
    const signal = slot.signal;
    const connecting = (async () => {
      // The server it replaces is gone first: two copies of one server may fight over a lock or a port.
      await slot.closed();
      if (signal.aborted) throw new Error('superseded');
      return this.ports.connect ? this.ports.connect(ready.server, signal) : connectMcp(ready.server, { log: this.ports.log, secrets: this.ports.secrets, signal });
    })();
    slot.connecting = connecting;
    let connection: McpConnection;
    try {
      connection = await connecting;
    } catch (err) {
      if (slot.current(generation) && !this.#disposed) this.#settle(slot, 'failed', detail(errorMessage(err), this.ports.secrets));
      return;
    } finally {
      if (slot.connecting === connecting) slot.connecting = undefined;
    }
    if (!slot.current(generation) || this.#disposed) {
      await connection.close();
      return;
    }
    slot.attach(connection, ready.hash, (closedBecause) => {
      if (closedBecause !== undefined) this.#settle(slot, 'failed', detail(closedBecause, this.ports.secrets));
      else this.#changed();
    });
    this.#changed();
  }

  #settle(slot: ServerSlot, state: Settled['state'], reason: string): void {
    slot.settle(state, reason);
    const line = `mcp ${quoteName(slot.name)}: ${state}: ${reason}`;
    if (state === 'cancelled' || state === 'stopped') this.ports.log.info(line);
    else this.ports.log.warn(line);
    this.#changed();
  }

  /** The definitions under unique names, or undefined (logged) when they cannot be read. */
  async #read(): Promise<McpServerDefinition[] | undefined> {
    try {
      const read = await this.ports.definitions();
      for (const problem of read.problems) this.ports.log.warn(problem);
      return uniqueDefinitions(read.servers);
    } catch (err) {
      this.ports.log.error(`MCP: reading the server definitions failed: ${detail(errorMessage(err), this.ports.secrets)}`);
      return undefined;
    }
  }

  #changed(): void {
    for (const listener of [...this.#listeners]) {
      try {
        listener();
      } catch (err) {
        this.ports.log.error(`MCP: a listener failed: ${errorMessage(err)}`);
      }
    }
  }
}

function untilDoneOrAborted(work: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const onAbort = (): void => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    void work.finally(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
