import * as vscode from 'vscode';
import { REPOSITORY_HINT } from '../../core/evolution';
import type { Logger } from '../../core/log';
import type { Settings } from '../settings/config';

/** Evolution and the hand-off are off in Restricted Mode: true (and the user told why) when refused. */
export function refusedUntrusted(log: Logger, what: string): boolean {
  if (vscode.workspace.isTrusted) return false;
  log.info(`refused in an untrusted workspace: ${what}`);
  void vscode.window.showWarningMessage(`Candor: ${what}, so it is off in an untrusted workspace. Trust the workspace to use it.`);
  return true;
}

/** `candor.evolution.repository` (user settings only), or undefined after telling the user how to set it. */
export function agentRepository(settings: Settings): string | undefined {
  const repository = settings.read().repository.trim();
  if (repository !== '') return repository;
  void openRepositorySetting('Candor: no agent repository is set, so evolution has no branches to show or take.');
  return undefined;
}

/** Says `message` with the hint, and an Open Setting button that lands on the setting in this window's settings tab. */
export async function openRepositorySetting(message: string): Promise<void> {
  const answer = await vscode.window.showInformationMessage(`${message} ${REPOSITORY_HINT}.`, 'Open Setting');
  // A user-only setting: in a remote window (code-server, SSH, a container) it lives on the Remote tab.
  if (answer) await vscode.commands.executeCommand(vscode.env.remoteName ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings', { query: 'candor.evolution.repository' });
}
