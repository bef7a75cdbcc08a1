import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Approvals } from '../../core/approvals/approvals';
import type { ToolHost } from '../../core/chat/tools';
import { RUN_COMMAND, runCommandTool } from '../../core/commands/runCommandTool';
import { toolHost } from '../../core/tools/toolHost';
import type { EditProposals } from '../chat/proposeEdit';
import type { ToolsHeader } from '../chat/toolsHeader';
import type { WorkspaceGit } from '../git/workspaceGit';
import type { DisposableStore } from '../platform/lifecycle';
import type { Ports } from '../ports';
import { CommandAllowList } from './allowList';
import { commandPlace } from './place';
import { CommandSandbox } from './sandbox';
import { CommandTerminals } from './terminals';
import { CommandViews } from './views';

export interface CommandRegistration {
  readonly approvals: Approvals;
  readonly proposals: EditProposals;
  readonly git: WorkspaceGit;
  readonly header: ToolsHeader;
}

/** The folder under the data folder that holds the workspace views (Clean Up Data removes it). */
export const VIEWS_DIR = 'views';

/**
 * `run_command` (docs/architecture.md, "Commands"): offered in a trusted
 * workspace when the sandbox starts here and the user has not turned it
 * off; the chat header says why not otherwise.
 */
export function registerCommands(store: DisposableStore, ports: Ports, deps: CommandRegistration): ToolHost {
  const settings = (): ReturnType<Ports['settings']['read']>['commands'] => ports.settings.read().commands;
  const sandbox = new CommandSandbox(() => ports.settings.read().sandboxUid, ports.log);
  const terminals = store.add(new CommandTerminals(ports.secrets));
  const allowList = new CommandAllowList(ports.context.workspaceState, () => settings().autoApprove);
  const views = new CommandViews({ dataDir: path.join(ports.dataDir, VIEWS_DIR), git: deps.git, proposals: deps.proposals, log: ports.log, bindIgnored: () => settings().bindIgnored });
  const tool = runCommandTool({
    approvals: deps.approvals,
    secrets: ports.secrets,
    network: () => settings().network,
    timeoutSeconds: () => settings().timeoutSeconds,
    place: commandPlace,
    preApproved: (command) => allowList.covering(command),
    remember: (prefix) => allowList.remember(prefix),
    execute: async (command, place, o) => {
      const ready = await sandbox.ready();
      if (typeof ready === 'string') throw new Error(`the sandbox cannot start here: ${ready}`);
      const s = settings();
      return views.run({ sandbox: ready, place, command, network: s.network, environment: s.environment, withhold: ports.secrets.values(), hidden: [ports.dataDir], ...o });
    },
    typeInTerminal: (command, place) => terminals.typeIn(command, place.cwd),
    echo: (text) => terminals.echo(text),
    echoCommand: (command) => terminals.echoCommand(command),
  });
  const host = toolHost([tool]);
  let offered = false;
  const update = async (): Promise<void> => {
    const why = await whyNotOffered(settings().enabled, sandbox);
    offered = why === null;
    deps.header.set({ commands: why });
  };
  void update();
  store.add(vscode.workspace.onDidGrantWorkspaceTrust(() => void update()));
  store.add(vscode.workspace.onDidChangeConfiguration((e) => {
    if (e.affectsConfiguration('candor.commands') || e.affectsConfiguration('candor.evolution.sandboxUid')) {
      sandbox.reset();
      void update();
    }
  }));
  return {
    specs: () => (offered && vscode.workspace.isTrusted ? host.specs() : []),
    run: (name, args, signal, call) => (name === RUN_COMMAND && offered && vscode.workspace.isTrusted ? host.run(name, args, signal, call) : Promise.resolve(`Error: ${name} is not offered now.`)),
  };
}

/** The one line the chat header shows when run_command is not offered; null when it is. */
async function whyNotOffered(enabled: boolean, sandbox: CommandSandbox): Promise<string | null> {
  if (!enabled) return 'turned off (candor.commands.enabled)';
  if (!vscode.workspace.isTrusted) return 'not offered in an untrusted workspace';
  if (process.platform === 'win32') return 'no sandbox on Windows, so no commands';
  const ready = await sandbox.ready();
  return typeof ready === 'string' ? `no sandbox: ${ready}` : null;
}
