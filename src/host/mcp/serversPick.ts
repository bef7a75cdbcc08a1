import * as vscode from 'vscode';
import type { McpServers, ServerStatus } from '../../core/mcp/servers';
import type { McpMemory } from './memory';

/**
 * The chat header's MCP line: "MCP: 2 servers, 14 tools; 'github' failed";
 * before the first message, how many are defined. Null when none is.
 */
export function headerLine(status: readonly ServerStatus[], defined: number): string | null {
  if (status.length === 0) return defined > 0 ? `MCP: ${defined} server${defined === 1 ? '' : 's'} defined, started with the first message` : null;
  const running = status.filter((s) => s.state === 'running');
  const tools = running.reduce((sum, s) => sum + s.tools, 0);
  const failed = status.filter((s) => s.state === 'failed' || s.state === 'refused').map((s) => `'${s.name}'`);
  const waiting = status.filter((s) => s.state === 'stopped').length;
  const starting = status.filter((s) => s.state === 'starting').length;
  const parts = [`MCP: ${running.length} server${running.length === 1 ? '' : 's'}, ${tools} tool${tools === 1 ? '' : 's'}`];
  if (failed.length > 0) parts.push(`${failed.join(', ')} failed`);
  if (starting > 0) parts.push(`${starting} starting`);
  if (running.length === 0 && waiting > 0) parts.push(`${waiting} start with the first message`);
  return parts.join('; ');
}

export interface ServersPickDeps {
  readonly servers: McpServers;
  readonly memory: McpMemory;
  readonly log: vscode.LogOutputChannel;
  readonly invalidate: () => void;
  /** The servers defined now (they show before they first start). */
  readonly defined: () => Promise<readonly { readonly name: string; readonly source: ServerStatus['source'] }[]>;
}

interface ServerItem extends vscode.QuickPickItem {
  readonly server?: string;
}

const PROFILE_NOTE = 'Candor reads the "mcp" user setting and trusted folders\' .vscode/mcp.json. Servers kept only in a VS Code profile\'s own mcp.json are not seen: copy them into the "mcp" setting of your user settings.';

/** `Candor: MCP Servers`: each server with its state; picking one offers Restart, Show Log and Turn Off (or On) for this workspace. */
export async function showMcpServers(deps: ServersPickDeps): Promise<void> {
  const off = deps.memory.turnedOff();
  const status = deps.servers.status();
  const items: ServerItem[] = status.map((s) => ({
    label: s.name,
    description: `${s.source.kind === 'user' ? 'user settings' : 'workspace'} · ${describe(s)}`,
    detail: s.reason,
    server: s.name,
  }));
  for (const def of await deps.defined()) {
    if (!status.some((s) => s.name === def.name)) items.push({ label: def.name, description: `${def.source.kind === 'user' ? 'user settings' : 'workspace'} · starts with the first message`, server: def.name });
  }
  for (const name of off) items.push({ label: name, description: 'turned off for this workspace', server: name });
  items.push({ label: 'Where Candor looks for servers', kind: vscode.QuickPickItemKind.Separator }, { label: '$(info) Servers in a profile\'s mcp.json are not seen', detail: PROFILE_NOTE });
  const picked = await vscode.window.showQuickPick(items, { title: 'Candor: MCP Servers', placeHolder: items.length > 2 ? 'Pick a server' : 'No MCP server is defined', matchOnDetail: true });
  if (!picked?.server) return;
  const name = picked.server;
  const turnedOff = off.has(name);
  const action = await vscode.window.showQuickPick([
    ...(turnedOff ? [] : [{ label: 'Restart', id: 'restart' }]),
    { label: 'Show Log', id: 'log' },
    turnedOff ? { label: 'Turn On for This Workspace', id: 'on' } : { label: 'Turn Off for This Workspace', id: 'off' },
  ], { title: `MCP server "${name}"` });
  if (!action) return;
  if (action.id === 'restart') await deps.servers.restart(name);
  else if (action.id === 'log') deps.log.show(true);
  else {
    await deps.memory.setTurnedOff(name, action.id === 'off');
    if (action.id === 'off') await deps.servers.stop(name);
    deps.invalidate();
  }
}

function describe(s: ServerStatus): string {
  switch (s.state) {
    case 'running':
      return `running, ${s.tools} tool${s.tools === 1 ? '' : 's'}`;
    case 'stopped':
      return 'starts with the first message';
    case 'starting':
      return 'starting…';
    default:
      return s.state;
  }
}
