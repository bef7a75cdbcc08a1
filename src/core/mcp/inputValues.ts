import type { McpInput, McpSource } from './types';

/** Where typed values are kept between windows (VS Code's SecretStorage). */
export interface InputStore {
  get(key: string): Promise<string | undefined>;
  store(key: string, value: string): Promise<void>;
}

/** What to ask the user for one `${input:<id>}`; undefined when they cancelled. */
export type AskInput = (server: string, input: McpInput | undefined, id: string) => Promise<string | undefined>;

/**
 * The values of `${input:<id>}` (docs/architecture.md, "MCP"): asked once,
 * and kept per configuration (the user's, or a folder's), so a workspace
 * cannot read what the user typed for their own servers.
 *
 * A server is expanded (its inputs asked) before its start is confirmed,
 * since the confirmation shows what it runs. So a value typed for a server
 * is only held in memory, for that server, until its start is confirmed,
 * and only then stored; a start that is cancelled or fails to expand
 * forgets it. A workspace's server the user refused leaves nothing typed
 * for it in storage.
 */
export class InputValues {
  /** Per server (`serverKey`): storage key → the value typed, not yet stored. */
  readonly #pending = new Map<string, Map<string, string>>();

  constructor(
    private readonly store: InputStore,
    private readonly ask: AskInput,
  ) {}

  async value(source: McpSource, server: string, input: McpInput | undefined, id: string): Promise<string | undefined> {
    const key = storageKey(source, id);
    const stored = await this.store.get(key);
    if (stored !== undefined) return stored;
    const pending = this.#pending.get(serverKey(source, server));
    const held = pending?.get(key);
    if (held !== undefined) return held;
    const typed = await this.ask(server, input, id);
    if (typed === undefined) return undefined;
    const values = pending ?? new Map<string, string>();
    values.set(key, typed);
    this.#pending.set(serverKey(source, server), values);
    return typed;
  }

  /** The server's start was confirmed: what was typed for it is stored. */
  async confirmed(source: McpSource, server: string): Promise<void> {
    const values = this.#pending.get(serverKey(source, server));
    this.#pending.delete(serverKey(source, server));
    for (const [key, value] of values ?? []) await this.store.store(key, value);
  }

  /** The server will not start (cancelled, or its definition failed): what was typed for it is forgotten. */
  forget(source: McpSource, server: string): void {
    this.#pending.delete(serverKey(source, server));
  }
}

function storageKey(source: McpSource, id: string): string {
  return `candor.mcp.input:${source.kind === 'user' ? 'user' : source.folder}:${id}`;
}

function serverKey(source: McpSource, server: string): string {
  return `${source.kind === 'user' ? 'user' : source.folder}\u0000${server}`;
}
