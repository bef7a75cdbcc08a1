import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { localChoices, nothingAnswered, type DiscoveredServer } from '../../core/provider/discovery';
import { shortModelName } from '../../core/provider/modelName';
import type { Providers } from './provider';
import type { Settings } from '../settings/config';
import type { CandorSettings } from '../../core/settings/resolve';
import { errorMessage } from '../../core/errorMessage';
import { missesV1 } from '../../core/provider/requestError';
import { requestUrl } from '../../core/provider/stream';
import { applyModelChoice, ENTER_ID, enterModelId, type ChosenModel } from './modelChoice';
import { addPort } from './addPort';
import { useBaseUrl } from './useBaseUrl';

const ADD_PORT = 'Add a port…';
const USE_BASE_URL = 'Use a base URL…';

/** A row that does something other than choose a model. */
type Action = 'enterId' | 'addPort' | 'useBaseUrl' | 'openLocalServers' | 'openBaseUrl';

interface ModelPick extends vscode.QuickPickItem {
  readonly choice?: ChosenModel;
  readonly action?: Action;
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
 * entry with a URL only once the user confirmed that URL), the provider's
 * `/models` list when it has one, the models of the local servers that
 * answer on the ports of `candor.localServers` (probed now, and only now) —
 * or a row naming the ports tried when none does — then "Add a port…", "Use
 * a base URL…", and "Enter a model id…" last. Models are named by their
 * short name (modelName.ts), the full id beneath.
 */
export async function selectModel(settings: Settings, providers: Providers, log: Logger): Promise<void> {
  const current = settings.read();
  // The picker opens at once and shows its busy state while the lists arrive.
  const picks = Promise.all([listProviderModels(providers, current.baseUrl, log), discoverServers(providers, log)])
    .then(([listed, local]) => picksOf(current, listed, local, providers.identity().model));

  const pick = await vscode.window.showQuickPick(picks, {
    title: 'Candor: Select Model',
    placeHolder: `Current: ${providers.info().label}`,
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) return;
  switch (pick.action) {
    case 'openBaseUrl':
      await vscode.commands.executeCommand('workbench.action.openSettings', { query: 'candor.baseUrl' });
      return;
    case 'openLocalServers':
      await vscode.commands.executeCommand('workbench.action.openSettings', { query: 'candor.localServers' });
      return;
    case 'addPort':
      // The picker opens again with the new server's models in it.
      if (await addPort(settings, log)) await selectModel(settings, providers, log);
      return;
    case 'useBaseUrl':
      await useBaseUrl(settings, providers, log);
      return;
    case 'enterId': {
      const model = await enterModelId('Model id, as the provider names it');
      if (model) await applyModelChoice({ model, source: 'user' }, settings, providers, log);
      return;
    }
    default:
      if (pick.choice) await applyModelChoice(pick.choice, settings, providers, log);
  }
}

function picksOf(current: CandorSettings, list: ProviderList, found: readonly DiscoveredServer[], currentModel: string): ModelPick[] {
  const picks: ModelPick[] = [];
  for (const choice of current.models) {
    const where = choice.source === 'workspace' ? 'workspace settings' : 'candor.models';
    picks.push(modelRow(choice.model, choice.baseUrl ? `on ${choice.baseUrl} (${where})` : where, { model: choice.model, ...(choice.baseUrl ? { baseUrl: choice.baseUrl } : {}), source: choice.source }));
  }
  if (list.ids.length > 0) picks.push({ label: 'Provider', kind: vscode.QuickPickItemKind.Separator });
  for (const id of list.ids) if (!picks.some((p) => p.choice?.model === id && !p.choice.baseUrl)) picks.push(modelRow(id, 'from the provider', { model: id, source: 'user' }));
  for (const p of picks) if (p.choice?.model === currentModel && !p.choice.baseUrl) p.detail = p.detail ? `current · ${p.detail}` : 'current';
  if (list.failure) picks.push(failureRow(list.failure, list.url));
  const local = localChoices(found, current.baseUrl);
  if (local.length > 0 || found.length === 0) picks.push({ label: 'Local servers', kind: vscode.QuickPickItemKind.Separator });
  for (const c of local) picks.push({ label: c.name, description: c.description, detail: c.detail, choice: { model: c.model, baseUrl: c.baseUrl, source: 'local' } });
  if (found.length === 0) {
    picks.push({
      label: `$(info) ${nothingAnswered(current.localServers)}`,
      detail: 'The ports of candor.localServers, on 127.0.0.1. Pick this row to open the setting, or add a port below.',
      alwaysShow: true,
      action: 'openLocalServers',
    });
  }
  picks.push({ label: '', kind: vscode.QuickPickItemKind.Separator });
  picks.push({ label: ADD_PORT, description: 'a server on this machine, on a port not listed', alwaysShow: true, action: 'addPort' });
  picks.push({ label: USE_BASE_URL, description: 'any OpenAI-compatible endpoint', alwaysShow: true, action: 'useBaseUrl' });
  picks.push({ label: ENTER_ID, alwaysShow: true, action: 'enterId' });
  return picks;
}

/** A model by its short name; the full id beneath when the name is shorter. */
function modelRow(id: string, description: string, choice: ChosenModel): ModelPick {
  const name = shortModelName(id);
  return { label: name, description, ...(name === id ? {} : { detail: id }), choice };
}

/**
 * A row, never a model: the provider's list could not be read, where it was
 * asked for, and — for a URL without /v1 — the likely reason.
 */
function failureRow(failure: string, url: string | undefined): ModelPick {
  const hint = url !== undefined && missesV1(url) ? 'Is /v1 missing from candor.baseUrl? Pick this row to open the setting.' : 'Pick this row to open candor.baseUrl.';
  return { label: `$(warning) Could not list models: ${failure}`, description: url, detail: hint, alwaysShow: true, action: 'openBaseUrl' };
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
    log.info(`local servers: ${found.length === 0 ? 'none answered' : found.map((d) => `${d.kind} on ${d.server.port} (${d.models.length} models)`).join(', ')}`);
    return found;
  } catch (err) {
    log.warn(`local server discovery failed: ${errorMessage(err)}`);
    return [];
  }
}
