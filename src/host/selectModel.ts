import * as vscode from 'vscode';
import type { Logger } from '../core/log';
import type { Providers } from './provider';
import type { Settings } from './config';

const ENTER_ID = 'Enter a model id…';

interface ModelPick extends vscode.QuickPickItem {
  readonly model?: string;
  readonly baseUrl?: string;
}

/**
 * `Candor: Select Model`: the models of `candor.models` (an entry
 * `model @ https://host/v1` names a model on another provider), the
 * provider's `/models` list when it has one, and "Enter a model id…" last.
 * The choice goes to the user's settings; the next request sees the switch.
 */
export async function selectModel(settings: Settings, providers: Providers, log: Logger): Promise<void> {
  const current = settings.read();
  const picks: ModelPick[] = [];
  for (const entry of current.models) {
    const [model, baseUrl] = entry.split(/\s+@\s+/);
    if (model) picks.push({ label: model, description: baseUrl ? `on ${baseUrl}` : 'candor.models', model, baseUrl });
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
  if (pick.baseUrl) await config.update('baseUrl', pick.baseUrl, vscode.ConfigurationTarget.Global);
  await config.update('model', model, vscode.ConfigurationTarget.Global);
  log.info(`model selected: ${model}${pick.baseUrl ? ` on ${pick.baseUrl}` : ''}`);
}

async function listProviderModels(providers: Providers, log: Logger): Promise<string[]> {
  try {
    const { client } = await providers.client();
    const ids: string[] = [];
    const timeout = AbortSignal.timeout(5000);
    for await (const model of client.models.list({ signal: timeout })) {
      ids.push(model.id);
      if (ids.length >= 200) break;
    }
    return ids;
  } catch (err) {
    log.info(`the provider has no model list: ${err instanceof Error ? err.message : String(err)}`);
    return [];
  }
}
