import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { modelWriteTarget, type ModelChoice } from '../../core/settings/resolve';
import type { Providers } from './provider';
import type { Settings } from '../settings/config';

/** The picker's last item (the contract): an input box for any model id. */
export const ENTER_ID = 'Enter a model id…';

/** The input box of "Enter a model id…". */
export async function enterModelId(prompt: string): Promise<string | undefined> {
  const typed = await vscode.window.showInputBox({ title: 'Candor: Select Model', prompt, ignoreFocusOut: true, validateInput: (v) => (v.trim() ? undefined : 'Enter a model id.') });
  return typed?.trim() || undefined;
}

/** A model the user chose in Select Model, and where it came from. */
export interface ChosenModel {
  readonly model: string;
  /** The provider it is on, when it is not the one in use. */
  readonly baseUrl?: string;
  /** `local`: a server found on a port of `candor.localServers`; `typed`: a base URL the user typed. */
  readonly source: ModelChoice['source'] | 'local' | 'typed';
}

/**
 * Writes the choice: `candor.model`, and `candor.baseUrl` when it names a
 * provider. A provider URL that came from the workspace's settings (and was
 * confirmed there) is written to the workspace's settings, never to the
 * user's, where it would follow the user into every other workspace; a local
 * server or a URL the user typed goes to the user's settings. The next
 * request sees the switch.
 */
export async function applyModelChoice(choice: ChosenModel, settings: Settings, providers: Providers, log: Logger): Promise<void> {
  const config = vscode.workspace.getConfiguration('candor');
  const source = choice.source === 'local' || choice.source === 'typed' ? 'user' : choice.source;
  const target = modelWriteTarget({ baseUrl: choice.baseUrl, source }) === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  if (choice.baseUrl) await config.update('baseUrl', choice.baseUrl, target);
  await config.update('model', choice.model, target);
  log.info(`model selected: ${choice.model}${choice.baseUrl ? ` on ${choice.baseUrl}` : ''}`);
  if (choice.source !== 'local' && choice.source !== 'typed') return;
  if (settings.read().baseUrl !== choice.baseUrl) {
    void vscode.window.showWarningMessage(`This workspace's candor.baseUrl overrides your choice of ${choice.baseUrl}; requests still go to ${settings.read().baseUrl || 'the offline demo'}.`);
    return;
  }
  const window = await providers.refreshWindow();
  log.info(`context window for ${choice.model}: ${window.tokens} tokens (${window.source})`);
}
