import type { ToolSpec } from '../messages';
import { runOnArgs, type ToolCall, type ToolHost } from '../chat/tools';

/** One tool: what the model is told of it, and what a call does. */
export interface Tool {
  readonly spec: ToolSpec;
  /** `call` is absent only outside a chat turn (the CLI's change phase, tests). */
  run(args: Record<string, unknown>, signal: AbortSignal, call?: ToolCall): Promise<string>;
}

export interface ToolHostOptions {
  /** Bounds every result (the caller's own rule, with its marker when cut). */
  readonly bound?: (text: string) => string;
}

/**
 * The one way a set of tools answers calls: an unknown name, arguments that
 * are not a JSON object, and a tool that throws each become the call's text
 * (`Error: …`), never a crash of the turn.
 */
export function toolHost(tools: readonly Tool[], options: ToolHostOptions = {}): ToolHost {
  const byName = new Map(tools.map((tool) => [tool.spec.function.name, tool]));
  const bound = options.bound ?? ((text: string) => text);
  return {
    specs: () => tools.map((t) => t.spec),
    run: async (name, rawArgs, signal, call) => {
      const tool = byName.get(name);
      if (!tool) return `Error: there is no tool "${name}". Tools: ${[...byName.keys()].join(', ')}.`;
      return runOnArgs(rawArgs, async (args) => bound(await tool.run(args, signal, call)));
    },
  };
}

/** A string argument (or `fallback` when absent); anything else is the model's error, said plainly. */
export function stringArg(args: Record<string, unknown>, key: string, fallback?: string): string {
  const value = args[key] ?? fallback;
  if (typeof value !== 'string') throw new Error(`"${key}" must be a string`);
  return value;
}

/**
 * Several tool sets as one: the built-in tools, run_command, each MCP
 * server's. Each set decides, call by call, what it offers (trust, the
 * sandbox, a server that started); a name goes to the first set offering it.
 */
export function joinToolHosts(hosts: () => readonly ToolHost[]): ToolHost {
  return {
    prepare: async (signal) => {
      await Promise.all(hosts().map((host) => host.prepare?.(signal)));
    },
    specs: () => hosts().flatMap((host) => host.specs()),
    groups: () => new Map(hosts().flatMap((host) => [...(host.groups?.() ?? [])])),
    run: async (name, args, signal, call) => {
      const all = hosts();
      const owner = all.find((host) => host.specs().some((spec) => spec.function.name === name));
      if (owner) return owner.run(name, args, signal, call);
      return `Error: there is no tool "${name}". Tools: ${all.flatMap((host) => host.specs().map((spec) => spec.function.name)).join(', ')}.`;
    },
  };
}
