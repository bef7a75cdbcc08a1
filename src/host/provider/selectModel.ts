import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { localChoices, type LocalChoice } from '../../core/provider/discovery';
import type { Providers } from './provider';
import type { Settings } from '../settings/config';
import { modelWriteTarget, type CandorSettings, type ModelChoice } from '../../core/settings/resolve';
import { errorMessage } from '../../core/errorMessage';
import { missesV1 } from '../../core/provider/requestError';
import { requestUrl } from '../../core/provider/stream';

const ENTER_ID = 'Enter a model id…';

interface ModelPick extends vscode.QuickPickItem {
  readonly model?: string;
  readonly baseUrl?: string;
  /** Where the entry came from: `local` is a server found on a port of `candor.localServers`. */
  readonly source?: ModelChoice['source'] | 'local';
  /** The row that says the provider's list could not be read: picking it opens candor.baseUrl. */
  readonly listFailed?: true;
}

/** The provider's model list, or why there is none. */
interface ProviderList {
  readonly ids: readonly string[];
  /** "HTTP 404", "no connection": the list was asked for and did not come. */
  readonly failure?: string;
  /** The URL that was asked. */
  readonly url?: string;
}

/**
 * `Candor: Select Model`: the models of `candor.models` (an entry
 * `model @ https://host/v1` names a model on another provider; a workspace's
 * entry with a URL only once the user confirmed that URL), the
 * provider's `/models` list when it has one, the models of the local servers
 * that answer on the ports of `candor.localServers` (probed now, and only
 * now), and "Enter a model id…" last. The choice goes to the user's settings
 * (a confirmed workspace URL to the workspace's); the next request sees the
 * switch.
 */
export async function selectModel(settings: Settings, providers: Providers, log: Logger): Promise<void> {
  const current = settings.read();
  // The picker opens at once and shows its busy state while the lists arrive.
  const picks = Promise.all([listProviderModels(providers, current.baseUrl, log), discoverServers(providers, log)])
    .then(([listed, local]) => picksOf(current, listed, localChoices(local, current.baseUrl), providers.identity().model));

  const pick = await vscode.window.showQuickPick(picks, { title: 'Candor: Select Model', placeHolder: `Current: ${providers.info().label}` });
  if (!pick) return;
  if (pick.listFailed) {
    await vscode.commands.executeCommand('workbench.action.openSettings', { query: 'candor.baseUrl' });
    return;
  }
  let model = pick.model;
  if (pick.label === ENTER_ID) {
    model = (await vscode.window.showInputBox({ title: 'Candor: Select Model', prompt: 'Model id, as the provider names it', validateInput: (v) => (v.trim() ? undefined : 'Enter a model id.') }))?.trim();
  }
  if (!model) return;
  const config = vscode.workspace.getConfiguration('candor');
  // A provider URL that came from the workspace's settings (and was confirmed
  // there) is written to the workspace's settings: never to the user's, where
  // it would follow the user into every other workspace. A local server goes
  // to the user's settings.
  const source = pick.source === 'local' ? 'user' : pick.source ?? 'user';
  const target = modelWriteTarget({ baseUrl: pick.baseUrl, source }) === 'workspace' ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  if (pick.baseUrl) await config.update('baseUrl', pick.baseUrl, target);
  await config.update('model', model, target);
  log.info(`model selected: ${model}${pick.baseUrl ? ` on ${pick.baseUrl}` : ''}`);
  if (pick.source !== 'local') return;
  if (settings.read().baseUrl !== pick.baseUrl) {
    void vscode.window.showWarningMessage(`This workspace's candor.baseUrl overrides your choice of ${pick.baseUrl}; requests still go to ${settings.read().baseUrl || 'the offline demo'}.`);
    return;
  }
  const window = await providers.refreshWindow();
  log.info(`context window for ${model}: ${window.tokens} tokens (${window.source})`);
}

function picksOf(current: CandorSettings, list: ProviderList, local: readonly LocalChoice[], currentModel: string): ModelPick[] {
  const picks: ModelPick[] = [];
  const listed = list.ids;
  for (const choice of current.models) {
    const where = choice.source === 'workspace' ? 'workspace settings' : 'candor.models';
    picks.push({ label: choice.model, description: choice.baseUrl ? `on ${choice.baseUrl} (${where})` : where, model: choice.model, baseUrl: choice.baseUrl, source: choice.source });
  }
  if (listed.length > 0) picks.push({ label: 'Provider', kind: vscode.QuickPickItemKind.Separator });
  for (const id of listed) if (!picks.some((p) => p.model === id && !p.baseUrl)) picks.push({ label: id, description: 'from the provider', model: id });
  for (const p of picks) if (p.model === currentModel && !p.baseUrl) p.detail = 'current';
  if (list.failure) picks.push(failureRow(list.failure, list.url));
  if (local.length > 0) picks.push({ label: 'Local servers', kind: vscode.QuickPickItemKind.Separator });
  for (const choice of local) picks.push({ label: choice.model, description: choice.description, model: choice.model, baseUrl: choice.baseUrl, source: 'local' });
  picks.push({ label: ENTER_ID, alwaysShow: true });
  return picks;
}

/**
 * A row, never a model: the provider's list could not be read, where it was
 * asked for, and — for a URL without /v1 — the likely reason.
 */
function failureRow(failure: string, url: string | undefined): ModelPick {
  const hint = url !== undefined && missesV1(url) ? 'Is /v1 missing from candor.baseUrl? Pick this row to open the setting.' : 'Pick this row to open candor.baseUrl.';
  return { label: `$(warning) Could not list models: ${failure}`, description: url, detail: hint, alwaysShow: true, listFailed: true };
}

async function listProviderModels(providers: Providers, baseUrl: string, log: Logger): Promise<ProviderList> {
  try {
    return { ids: await providers.listModels(AbortSignal.timeout(5000)) };
  } catch (err) {
    log.info(`the provider's model list could not be read: ${errorMessage(err)}`);
    // No base URL is the offline provider: its list never fails for a reason the user can fix.
    if (!baseUrl.trim()) return { ids: [] };
    const status = (err as { status?: unknown } | null)?.status;
    return { ids: [], failure: typeof status === 'number' ? `HTTP ${status}` : 'no answer from the provider', url: requestUrl(baseUrl, '/models') };
  }
}

async function discoverServers(providers: Providers, log: Logger): ReturnType<Providers['discover']> {
  try {
    const found = await providers.discover();
    log.info(`local servers: ${found.length === 0 ? 'none answered' : found.map((d) => `${d.server.kind} on ${d.server.port} (${d.models.length} models)`).join(', ')}`);
    return found;
  } catch (err) {
    log.warn(`local server discovery failed: ${errorMessage(err)}`);
    return [];
  }
}
