import { errorMessage } from '../errorMessage';
import type { ToolSpec } from '../messages';
import type { Session } from '../session/session';
import type { TranscriptEntry } from '../session/transcript';

/** Who is calling: the turn, the model's call id, the session its records go to, and a way to show an entry that grows. */
export interface ToolCall {
  readonly turn: string;
  readonly callId: string;
  readonly session: Session;
  /** Shows an entry in the chat without writing it (output as it streams); its record comes later under the same id. */
  readonly show: (entry: TranscriptEntry) => void;
}

/** The tools the chat loop may call; the host decides which exist (trust, folders). */
export interface ToolHost {
  /**
   * Before a request lists the tools: a set that starts lazily (MCP
   * servers, after the user's confirmation) does it here, and the request
   * waits for it. Never throws: a set that cannot start offers nothing.
   */
  prepare?(signal: AbortSignal): Promise<void>;
  specs(): readonly ToolSpec[];
  /** The model names of the tools each MCP server brings (for the gauge's per-server share); absent: none. */
  groups?(): ReadonlyMap<string, readonly string[]>;
  /** Runs one call; an error becomes the tool's text reply, never a crash of the turn. */
  run(name: string, args: string, signal: AbortSignal, call?: ToolCall): Promise<string>;
}

export const noTools: ToolHost = {
  specs: () => [],
  run: async (name) => `Tool "${name}" is not available.`,
};

/**
 * Runs a tool on the model's arguments: arguments that are not a JSON object,
 * and any error of the tool, come back as the tool's `Error: …` reply.
 */
export async function runOnArgs(rawArgs: string, run: (args: Record<string, unknown>) => Promise<string>): Promise<string> {
  let args: Record<string, unknown>;
  try {
    args = parseArgs(rawArgs);
  } catch (err) {
    return `Error: the arguments are not a JSON object (${errorMessage(err)}).`;
  }
  try {
    return await run(args);
  } catch (err) {
    return `Error: ${errorMessage(err)}`;
  }
}

export function parseArgs(args: string): Record<string, unknown> {
  if (args.trim() === '') return {};
  const value: unknown = JSON.parse(args);
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw new Error('tool arguments must be a JSON object');
  return value as Record<string, unknown>;
}
