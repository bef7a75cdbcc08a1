import * as vscode from 'vscode';
import { dismissRant, rantStatuses } from '../../core/evolution';
import type { Logger } from '../../core/log';

export interface DismissDeps {
  readonly dataDir: string;
  readonly log: Logger;
  /** A rant was dismissed: the chat view refreshes its list. */
  readonly changed: () => void;
}

/** `Candor: Rants: Dismiss…`: the rant named, or one picked from the open ones. The rant stays in rants.jsonl; triage.jsonl records the dismissal. */
export async function dismissRantCommand(deps: DismissDeps, id?: string): Promise<void> {
  const target = id ?? (await pickOpenRant(deps.dataDir));
  if (!target) return;
  if (dismissRant(deps.dataDir, target)) {
    deps.log.info(`rant ${target} dismissed`);
    void vscode.window.showInformationMessage('Rant dismissed.');
    deps.changed();
  } else void vscode.window.showWarningMessage(`There is no rant ${target}.`);
}

async function pickOpenRant(dataDir: string): Promise<string | undefined> {
  const open = rantStatuses(dataDir).filter((s) => s.status === 'new' || s.status === 'queued' || s.status === 'waiting-for-repository');
  if (open.length === 0) {
    void vscode.window.showInformationMessage('There are no open rants to dismiss.');
    return undefined;
  }
  const pick = await vscode.window.showQuickPick(
    open.map((s) => ({ label: s.rant.text.split('\n')[0]?.slice(0, 80) ?? '', description: `${s.status}${s.class ? ` · ${s.class}` : ''}`, detail: s.rant.ts, id: s.rant.id })),
    { title: 'Candor: Rants: Dismiss…', placeHolder: 'The rant stays in rants.jsonl; a dismissal is recorded in triage.jsonl' },
  );
  return pick?.id;
}
