import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { removeView } from '../../core/commands/view/workspaceView';
import { removeTree } from '../../core/process/removeTree';
import type { Ports } from '../ports';

export interface CleanDataDeps {
  /** True while an evolution run uses the scratch clones: they are not removed then. */
  readonly scratchInUse: () => boolean;
  /** Something the chat view lists was removed: it refreshes. */
  readonly changed: () => void;
}

interface DataPart extends vscode.QuickPickItem {
  /** Paths relative to the data folder. */
  readonly paths: readonly string[];
}

/** The parts of the data folder a user may remove, each named as the user knows it; only the scratch clones are picked by default. */
function dataParts(dir: string): DataPart[] {
  return [
    { label: 'Scratch clones', detail: path.join(dir, 'scratch'), paths: ['scratch'], picked: true },
    { label: 'Command views', detail: path.join(dir, 'views'), paths: ['views'], picked: true },
    { label: 'Chat sessions', detail: path.join(dir, 'sessions'), paths: ['sessions'], picked: false },
    { label: 'Drift log', detail: path.join(dir, 'drift.jsonl'), paths: ['drift.jsonl'], picked: false },
    { label: 'Rants and triage', detail: 'rants.jsonl, triage.jsonl', paths: ['rants.jsonl', 'triage.jsonl'], picked: false },
    { label: 'Evolution log', detail: 'evolution.jsonl', paths: ['evolution.jsonl'], picked: false },
    { label: 'Traces and prompt registry', detail: 'traces.sqlite', paths: ['traces.sqlite'], picked: false },
  ];
}

/** `Candor: Clean Up Data…`: removes the parts of the data folder the user picks, after a modal confirmation. */
export async function cleanData(ports: Ports, deps: CleanDataDeps): Promise<void> {
  const dir = ports.dataDir;
  const picks = await vscode.window.showQuickPick(dataParts(dir), { title: 'Candor: Clean Up Data…', canPickMany: true, placeHolder: `Remove from ${dir}` });
  if (!picks || picks.length === 0) return;
  if (deps.scratchInUse() && picks.some((p) => p.paths.includes('scratch'))) {
    void vscode.window.showWarningMessage('An evolution run is using the scratch clones; try again when it has ended.');
    return;
  }
  const answer = await vscode.window.showWarningMessage(`Remove ${picks.map((p) => p.label.toLowerCase()).join(', ')}? This cannot be undone.`, { modal: true }, 'Remove');
  if (answer !== 'Remove') return;
  for (const pick of picks) {
    for (const rel of pick.paths) {
      if (rel === 'views') await removeViews(path.join(dir, rel));
      await removeTree(path.join(dir, rel));
    }
  }
  ports.log.info(`cleaned: ${picks.map((p) => p.label).join(', ')}`);
  void vscode.window.showInformationMessage('Candor: data removed.');
  deps.changed();
}

/** Each command view, with the manifest kept beside it. */
async function removeViews(viewsDir: string): Promise<void> {
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(viewsDir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const entry of entries) if (entry.isDirectory()) await removeView(path.join(viewsDir, entry.name));
}
