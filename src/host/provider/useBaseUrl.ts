import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { shortModelName } from '../../core/provider/modelName';
import { baseUrlProblem } from '../../core/provider/pickerInputs';
import { missesV1 } from '../../core/provider/requestError';
import { requestUrl } from '../../core/provider/stream';
import type { Settings } from '../settings/config';
import { applyModelChoice, ENTER_ID, enterModelId } from './modelChoice';
import type { Providers } from './provider';

interface ListedPick extends vscode.QuickPickItem {
  readonly model?: string;
}

/**
 * Select Model's "Use a base URL…": the user types an OpenAI-compatible
 * endpoint, Candor lists its models (with the key only where requests to it
 * would carry one), and the URL and the chosen model go to the user's
 * `candor.baseUrl` and `candor.model`. A server that lists nothing still
 * takes a typed model id, with what it answered said in the prompt.
 */
export async function useBaseUrl(settings: Settings, providers: Providers, log: Logger): Promise<void> {
  const typed = await vscode.window.showInputBox({
    title: 'Candor: Use a Base URL',
    prompt: 'The base URL of an OpenAI-compatible API, usually ending in /v1. It goes to your candor.baseUrl.',
    placeHolder: 'http://127.0.0.1:8081/v1 or https://api.example.com/v1',
    ignoreFocusOut: true,
    validateInput: (text) => (text.trim() === '' ? undefined : baseUrlProblem(text)),
  });
  const baseUrl = typed?.trim();
  if (!baseUrl || baseUrlProblem(baseUrl) !== undefined) return;
  const listed = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `Candor: listing the models of ${baseUrl}…` },
    () => providers.listModelsAt(baseUrl, AbortSignal.timeout(10_000)),
  );
  const model = 'models' in listed && listed.models.length > 0
    ? await pickListed(baseUrl, listed.models)
    : await enterModelId(notListed(baseUrl, 'models' in listed ? 'no models' : listed.failure));
  if (!model) return;
  await applyModelChoice({ model, baseUrl, source: 'typed' }, settings, providers, log);
}

async function pickListed(baseUrl: string, models: readonly { readonly id: string; readonly aliases: readonly string[] }[]): Promise<string | undefined> {
  const rows: ListedPick[] = models.map((m) => {
    const name = shortModelName(m.id, m.aliases);
    return { label: name, ...(name === m.id ? {} : { detail: m.id }), model: m.id };
  });
  rows.push({ label: ENTER_ID, alwaysShow: true });
  const pick = await vscode.window.showQuickPick(rows, { title: `Candor: Select Model on ${baseUrl}`, placeHolder: 'The models this provider lists', matchOnDetail: true });
  if (!pick) return undefined;
  return pick.model ?? (await enterModelId('Model id, as the provider names it'));
}

/** The input box's prompt when the list did not come: what answered, and what to check. */
function notListed(baseUrl: string, failure: string): string {
  const url = requestUrl(baseUrl, '/models');
  const hint = missesV1(url) ? ' Is /v1 missing from the URL?' : failure.startsWith('HTTP 401') || failure.startsWith('HTTP 403') ? ' Run "Candor: Set API Key" if it needs a key.' : '';
  return `${url} gave ${failure}, not a model list.${hint} Type the model id, as the provider names it.`;
}
