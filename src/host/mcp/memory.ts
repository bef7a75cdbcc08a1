import type * as vscode from 'vscode';

const ALWAYS_KEY = 'candor.mcp.alwaysAllow';
const OFF_KEY = 'candor.mcp.turnedOff';
const MAX_KEPT = 500;

/**
 * What the user chose for MCP in this workspace, kept in its state (never
 * in settings, which a repository could write): Always Allow of a tool, by
 * server name, tool name and definition hash (a changed definition asks
 * again), and the servers turned off here.
 */
export class McpMemory {
  constructor(private readonly state: vscode.Memento) {}

  isAlwaysAllowed(server: string, tool: string, hash: string): boolean {
    return this.list(ALWAYS_KEY).includes(key(server, tool, hash));
  }

  async rememberAlways(server: string, tool: string, hash: string): Promise<void> {
    const k = key(server, tool, hash);
    await this.state.update(ALWAYS_KEY, [...this.list(ALWAYS_KEY).filter((v) => v !== k), k].slice(-MAX_KEPT));
  }

  turnedOff(): ReadonlySet<string> {
    return new Set(this.list(OFF_KEY));
  }

  async setTurnedOff(server: string, off: boolean): Promise<void> {
    const others = this.list(OFF_KEY).filter((name) => name !== server);
    await this.state.update(OFF_KEY, off ? [...others, server] : others);
  }

  private list(k: string): string[] {
    const value = this.state.get<unknown>(k);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  }
}

function key(server: string, tool: string, hash: string): string {
  return JSON.stringify([server, tool, hash]);
}
