import type { ToolSpec } from '../messages';

/** The tools the chat loop may call; the host decides which exist (trust, folders). */
export interface ToolHost {
  specs(): readonly ToolSpec[];
  /** Runs one call; an error becomes the tool's text reply, never a crash of the turn. */
  run(name: string, args: string, signal: AbortSignal): Promise<string>;
}

export const noTools: ToolHost = {
  specs: () => [],
  run: async (name) => `Tool "${name}" is not available.`,
};

export function parseArgs(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  const value: unknown = JSON.parse(args);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('tool arguments must be a JSON object');
  return value as Record<string, unknown>;
}
