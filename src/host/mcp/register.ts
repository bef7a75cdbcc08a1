import * as vscode from 'vscode';
import type { Approvals } from '../../core/approvals/approvals';
import type { ToolHost } from '../../core/chat/tools';
import { mcpToolHost } from '../../core/mcp/mcpTools';
import { McpServers } from '../../core/mcp/servers';
import { expandServer } from '../../core/mcp/variables';
import type { ToolsHeader } from '../chat/toolsHeader';
import { registerCommand } from '../platform/command';
import type { DisposableStore } from '../platform/lifecycle';
import type { Ports } from '../ports';
import { McpConfirmations } from './confirmations';
import { readDefinitions, type ReadDefinitions } from './definitions';
import { confirmKeepingInputs, expandKeepingInputs, mcpInputs } from './inputs';
import { McpMemory } from './memory';
import { headerLine, showMcpServers } from './serversPick';

export interface McpRegistration {
  readonly approvals: Approvals;
  readonly header: ToolsHeader;
}

/**
 * MCP tools (docs/architecture.md, "MCP"): servers from VS Code's own
 * configuration, started lazily on the first request that lists tools,
 * after the user's confirmation, and stopped with the extension host.
 * Only in a trusted window (the chat offers no tools otherwise).
 */
export function registerMcp(store: DisposableStore, ports: Ports, deps: McpRegistration): ToolHost {
  const settings = (): ReturnType<Ports['settings']['read']>['mcp'] => ports.settings.read().mcp;
  const memory = new McpMemory(ports.context.workspaceState);
  const inputs = mcpInputs(ports.context.secrets);
  const confirmations = new McpConfirmations(ports.context.workspaceState, ports.context.globalState);
  let read: ReadDefinitions | undefined;
  const servers = new McpServers({
    definitions: async () => {
      read = await readDefinitions(memory.turnedOff());
      for (const problem of read.problems) ports.log.warn(`mcp: ${problem}`);
      return read;
    },
    expand: async (def) => {
      const withhold = ports.secrets.values();
      return expandKeepingInputs(inputs, def, () => expandServer(def, {
        env: process.env,
        allowedEnvNames: settings().environment,
        inputs: read?.inputsOf(def) ?? [],
        input: (input, id) => inputs.value(def.source, def.name, input, id),
        withhold,
        ...(def.source.kind === 'user' ? { workspaceFolder: vscode.workspace.workspaceFolders?.[0]?.uri.fsPath } : {}),
      }));
    },
    confirm: (def, _expanded, hash, lines) => confirmKeepingInputs(inputs, def, () => confirmations.confirm(def, hash, lines)),
    log: ports.log,
    secrets: ports.secrets,
  });
  store.add({ dispose: () => void servers.dispose() });
  const tools = store.add(mcpToolHost(servers, {
    approvals: deps.approvals,
    secrets: ports.secrets,
    isAlwaysAllowed: (server, tool, hash) => memory.isAlwaysAllowed(server, tool, hash),
    rememberAlways: (server, tool, hash) => memory.rememberAlways(server, tool, hash),
    autoApproveReadOnly: () => settings().autoApproveReadOnly,
    callTimeoutMs: () => settings().callTimeoutSeconds * 1000,
  }));
  const on = (): boolean => settings().enabled && vscode.workspace.isTrusted;
  /** How many servers are defined, for the header before any has started. */
  let defined = 0;
  const update = (): void => deps.header.set({ mcp: on() ? headerLine(servers.status(), defined) : null });
  const countDefined = async (): Promise<void> => {
    defined = on() ? (await readDefinitions(memory.turnedOff()).catch(() => undefined))?.servers.length ?? 0 : 0;
    update();
  };
  store.add(servers.onChanged(update));
  const invalidate = (): void => {
    // Turned off: what runs stops now, not at the next reload.
    if (!on()) void servers.stopAll('MCP tools were turned off (candor.mcp.enabled)');
    servers.invalidate();
    void countDefined();
  };
  store.add(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('mcp') || e.affectsConfiguration('candor.mcp')) invalidate();
  }));
  const watcher = store.add(vscode.workspace.createFileSystemWatcher('**/.vscode/mcp.json'));
  for (const event of [watcher.onDidChange, watcher.onDidCreate, watcher.onDidDelete]) store.add(event(invalidate));
  store.add(vscode.workspace.onDidGrantWorkspaceTrust(invalidate));
  store.add(registerCommand('candor.mcpServers', async () => {
    // Restart from the list starts servers: never in an untrusted window, nor with MCP turned off.
    if (!on()) {
      void vscode.window.showInformationMessage(vscode.workspace.isTrusted ? 'Candor: MCP tools are turned off (candor.mcp.enabled).' : 'Candor: MCP servers do not start in an untrusted window. Trust the workspace to use them.');
      return;
    }
    await showMcpServers({ servers, memory, log: ports.channel, invalidate, defined: async () => (await readDefinitions(memory.turnedOff())).servers });
  }, ports.notify));
  void countDefined();
  return {
    prepare: (signal) => (on() ? tools.prepare?.(signal) ?? Promise.resolve() : Promise.resolve()),
    specs: () => (on() ? tools.specs() : []),
    groups: () => new Map(on() ? [...tools.byServer()].map(([server, specs]) => [server, specs.map((spec) => spec.function.name)]) : []),
    run: (name, args, signal, call) => (on() ? tools.run(name, args, signal, call) : Promise.resolve(`Error: MCP tools are off (candor.mcp.enabled).`)),
  };
}
