import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import type { Providers } from './provider';
import type { Settings } from '../settings/config';
import { modelWriteTarget, type ModelChoice } from '../../core/settings/resolve';

const ENTER_ID = 'Enter a model id…';

interface ModelPick extends vscode.QuickPickItem {
  readonly model?: string;
  readonly baseUrl?: string;
  readonly source?: ModelChoice['source'];
}

/**
 * `Candor: Select Model`: the models of `candor.models` (an entry
 * `model @ https://host/v1` names a model on another provider; a workspace's
 * entry with a URL only once the user confirmed that URL), the
 * provider's `/models` list when it has one, and "Enter a model id…" last.
 * The choice goes to the user's settings (a confirmed workspace URL to the
 * workspace's); the next request sees the switch.
 */
export async function selectModel(settings: Settings, providers: Providers, log: Logger): Promise<void> {
  const current = settings.read();
  const picks: ModelPick[] = [];
  for (const choice of current.models) {
    const where = choice.source === 'workspace' ? 'workspace settings' : 'candor.models';
    picks.push({ label: choice.model, description: choice.baseUrl ? `on ${choice.baseUrl} (${where})` : where, model: choice.model, baseUrl: choice.baseUrl, source: choice.source });
  }
  const listed = await listProviderModels(providers, log);
  if (listed.length > 0) picks.push({ label: 'Provider', kind: vscode.QuickPickItemKind.Separator });
  for (const id of listed) if (!picks.some((p) => p.model === id && !p.baseUrl)) picks.push({ label: id, description: 'from the provider', model: id });
  picks.push({ label: ENTER_ID, alwaysShow: true });
  for (const p of picks) if (p.model === providers.identity().model && !p.baseUrl) p.detail = 'current';

  const pick = await vscode.window.showQuickPick(picks, { title: 'Candor: Select Model', placeHolder: `Current: ${providers.info().label}` });
  if (!pick) return;
  let model = pick.model;
  if (pick.label === ENTER_ID) {
    model = (await vscode.window.showInputBox({ title: 'Candor: Select Model', prompt: 'Model id, as the provider names it', validateInput: (v) => (v.trim() ? undefined : 'Enter a model id.') }))?.trim();
  }
  if (!model) return;
  const config = vscode.workspace.getConfiguration('candor');
  // A provider URL that came from the workspace's settings (and was confirmed
  // there) is written to the workspace's settings: never to the user's, where
  // it would follow the user into every other workspace.
  const target = modelWriteTarget({ baseUrl: pick.baseUrl, source: pick.source ?? 'user' }) === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  if (pick.baseUrl) await config.update('baseUrl', pick.baseUrl, target);
  await config.update('model', model, target);
  log.info(`model selected: ${model}${pick.baseUrl ? ` on ${pick.baseUrl}` : ''}`);
}

async function listProviderModels(providers: Providers, log: Logger): Promise<string[]> {
  try {
    return await providers.listModels(AbortSignal.timeout(5000));
  } catch (err) {
    log.info(`the provider has no model list: ${err instanceof Error ? err.message : String(err)}`);
    return [];
  }
}
