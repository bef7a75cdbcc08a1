import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { PROMPT_FILE, writePromptIfUnchanged } from '../../core/prompt/promptFile';
import type { PromptRegistry, PromptVersion } from '../../core/promptEvolution/registry';
import type { Notifier } from '../platform/notify';
import type { WorkspacePromptFile } from './promptFile';
import { versionDescription, versionViews } from './views';
import { firstLine } from '../../core/text';

export interface RollbackDeps {
  readonly registry: () => Promise<PromptRegistry>;
  readonly promptFile: WorkspacePromptFile;
  readonly log: Logger;
  readonly notify: Notifier;
  /** Opens the review panel on the prompt history. */
  readonly showHistory: () => void;
  /** The prompt in force changed: the review panel refreshes. */
  readonly changed: () => void;
}

/** `Candor: Roll Back Prompt`: pick a version of the registry (or the history), restore it. */
export async function rollbackPrompt(deps: RollbackDeps): Promise<void> {
  const registry = await deps.registry();
  const versions = await registry.versions();
  const current = await deps.promptFile.read();
  const views = versionViews(versions, current.text);
  const labels = new Map(views.map((v) => [v.id, v.label]));
  type Item = vscode.QuickPickItem & { readonly versionId?: string; readonly history?: true };
  const items: Item[] = [
    { label: 'Show prompt history…', iconPath: new vscode.ThemeIcon('history'), description: 'the review queue, each candidate\'s checks, and every version\'s lineage', history: true },
  ];
  if (views.length > 0) items.push({ label: 'Versions', kind: vscode.QuickPickItemKind.Separator });
  for (const view of views) {
    const version = versions.find((v) => v.id === view.id) as PromptVersion;
    items.push({
      label: `${view.label} ${view.kind}${view.inForce ? ' (in force)' : ''}`,
      description: versionDescription(view, labels),
      detail: `${view.created} · ${firstLine(version.text, 100)}`,
      versionId: view.id,
    });
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: 'Candor: Roll Back Prompt',
    placeHolder: views.length > 0 ? 'Restore which version of the prompt? (the numbers are each promotion\'s lineage)' : 'No prompt versions yet: run "Candor: Run Prompt Evolution" first',
    matchOnDescription: true,
    matchOnDetail: true,
  });
  if (!pick) return;
  if (pick.history) deps.showHistory();
  else if (pick.versionId) await restorePrompt(deps, pick.versionId);
}

/** Makes a registry version's text the workspace prompt again (unless the prompt changed meanwhile), recorded as a rollback. */
export async function restorePrompt(deps: RollbackDeps, versionId: string): Promise<void> {
  const registry = await deps.registry();
  const target = await registry.version(versionId);
  if (!target) {
    void deps.notify.warn(`Candor: no prompt version ${versionId}.`);
    return;
  }
  const label = new Map((await registry.versions()).map((v, i) => [v.id, `v${i + 1}`])).get(target.id) ?? target.id;
  const current = await deps.promptFile.read();
  if (current.text === target.text) {
    void deps.notify.info(`Candor: ${label} is already the prompt in force.`);
    return;
  }
  const written = await writePromptIfUnchanged(deps.promptFile, target.text, current, `Candor: roll back prompt to ${label}`);
  if (!written.ok) {
    void deps.notify.warn(`Candor: ${written.reason}`);
    return;
  }
  const recorded = await registry.rollback(target.id);
  deps.log.info(`prompt rolled back to ${target.id} (new version ${recorded.id})`);
  void deps.notify.info(`Candor: restored ${label} in ${PROMPT_FILE}.`);
  deps.changed();
}
