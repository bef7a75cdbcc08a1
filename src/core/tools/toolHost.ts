import type { ToolSpec } from '../messages';
import { parseArgs, type ToolHost } from '../chat/tools';
import { errorMessage } from '../errorMessage';

/** One tool: what the model is told of it, and what a call does. */
export interface Tool {
  readonly spec: ToolSpec;
  run(args: Record<string, unknown>, signal: AbortSignal): Promise<string>;
}

/** A function tool whose arguments are one JSON object with exactly these properties. */
export function toolSpec(name: string, description: string, properties: Record<string, object>, required: readonly string[] = []): ToolSpec {
  return { type: 'function', function: { name, description, parameters: { type: 'object', properties, required: [...required], additionalProperties: false } } };
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
    run: async (name, rawArgs, signal) => {
      const tool = byName.get(name);
      if (!tool) return `Error: there is no tool "${name}". Tools: ${[...byName.keys()].join(', ')}.`;
      let args: Record<string, unknown>;
      try {
        args = parseArgs(rawArgs);
      } catch (err) {
        return `Error: the arguments are not a JSON object (${errorMessage(err)}).`;
      }
      try {
        return bound(await tool.run(args, signal));
      } catch (err) {
        return `Error: ${errorMessage(err)}`;
      }
    },
  };
}

/** A string argument (or `fallback` when absent); anything else is the model's error, said plainly. */
export function stringArg(args: Record<string, unknown>, key: string, fallback?: string): string {
  const value = args[key] ?? fallback;
  if (typeof value !== 'string') throw new Error(`"${key}" must be a string`);
  return value;
}
