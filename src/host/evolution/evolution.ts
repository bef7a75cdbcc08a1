import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { branchDiff, dismissRant, handOff, readRuns, rantStatuses, runEvolution, type EvolutionRecord, type RantState } from '../../core/evolution';
import type { Logger } from '../../core/log';
import type { Settings } from '../settings/config';
import type { Providers } from '../provider/provider';
import type { ApiKeys } from '../provider/secrets';
import type { Notifier } from '../platform/notify';
import { LineRedactor } from '../../core/redact';
import { Disposable } from '../platform/lifecycle';
import { vscodeUnsavedBuffers } from '../git/workspaceGit';
import type { MessageHandlers } from '../chat/router';

export const EVOLUTION_TASK_TYPE = 'candor-evolution';
const DIFF_SCHEME = 'candor-evolution-diff';
/** Each gate command (setup, build, test) may run this long. */
const GATE_TIMEOUT_MS = 10 * 60_000;

interface EvolutionTaskDefinition extends vscode.TaskDefinition {
  readonly folder?: string;
}

export interface EvolutionDeps {
  readonly dataDir: string;
  readonly settings: Settings;
  readonly providers: Providers;
  readonly keys: ApiKeys;
  readonly log: Logger;
  readonly notify: Notifier;
  /** Rants or runs changed: the chat view refreshes its list. */
  readonly changed: () => void;
}

/**
 * Evolution runs as a VS Code task of type `candor-evolution`, executed in a
 * pseudoterminal in the extension host (it sees SecretStorage, the unsaved
 * buffers and the offline provider). The pipeline itself is the core's.
 */
export class EvolutionFeature extends Disposable implements vscode.TaskProvider {
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly diffs = new Map<string, string>();
  private readonly diffChanged = new vscode.EventEmitter<vscode.Uri>();

  constructor(private readonly deps: EvolutionDeps) {
    super();
    this.register(vscode.tasks.registerTaskProvider(EVOLUTION_TASK_TYPE, this));
    this.register(this.diffChanged);
    this.register(vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, {
      onDidChange: this.diffChanged.event,
      provideTextDocumentContent: (uri) => this.diffs.get(uri.path.replace(/^\//, '').replace(/\.diff$/, '')) ?? '',
    }));
    this.register(vscode.commands.registerCommand('candor.evolve', () => this.start()));
    this.register(vscode.commands.registerCommand('candor.handOffBranch', () => this.takeBranch()));
    this.register(vscode.commands.registerCommand('candor.dismissRant', (id?: unknown) => this.dismiss(typeof id === 'string' ? id : undefined)));
    this.register(vscode.commands.registerCommand('candor.cleanData', () => this.cleanData()));
    this.register(vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('candor.evolution.intervalMinutes')) this.schedule();
    }));
    this.register({ dispose: () => clearInterval(this.timer) });
    this.schedule();
  }

  provideTasks(): vscode.Task[] {
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder ? [this.task({ type: EVOLUTION_TASK_TYPE }, folder)] : [];
  }

  resolveTask(task: vscode.Task): vscode.Task | undefined {
    const definition = task.definition as EvolutionTaskDefinition;
    const folder = this.folderFor(definition) ?? (typeof task.scope === 'object' ? task.scope : undefined);
    return folder ? this.task(definition, folder) : undefined;
  }

  /** `Candor: Run Evolution`: starts the task, no confirmation (it changes nothing the user cannot see and undo). */
  async start(): Promise<void> {
    if (this.refusedUntrusted('evolution runs commands (your tests)')) return;
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      void vscode.window.showWarningMessage('Candor: open a folder first — evolution works on a git repository.');
      return;
    }
    // VS Code saves every dirty editor before it starts a task (task.saveBeforeRun,
    // "always" by default). With unsaved buffers the same pipeline runs in a
    // terminal of its own instead, so starting it never saves the user's work.
    const unsaved = vscodeUnsavedBuffers.unsavedFiles().filter((file) => !path.relative(folder.uri.fsPath, file).startsWith('..'));
    if (unsaved.length > 0) {
      this.deps.log.info(`evolution: ${unsaved.length} unsaved buffer(s); running outside the task system so nothing gets saved`);
      vscode.window.createTerminal({ name: 'Candor: Run Evolution', pty: this.terminal(folder, false) }).show();
      return;
    }
    await vscode.tasks.executeTask(this.task({ type: EVOLUTION_TASK_TYPE }, folder));
  }

  /** The rant list's buttons in the chat view. */
  messageHandlers(): MessageHandlers<'evolution'> {
    return {
      dismissRant: (message) => this.dismiss(message.id),
      takeBranch: (message) => this.takeBranch(message.branch),
      showDiff: (message) => this.showDiff(message.branch),
    };
  }

  rants(): RantState[] {
    return rantStatuses(this.deps.dataDir);
  }

  runs(): EvolutionRecord[] {
    return readRuns(this.deps.dataDir);
  }

  async dismiss(id?: string): Promise<void> {
    let target = id;
    if (!target) {
      const open = this.rants().filter((s) => s.status === 'new' || s.status === 'triaged');
      if (open.length === 0) {
        void vscode.window.showInformationMessage('There are no open rants to dismiss.');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        open.map((s) => ({ label: s.rant.text.split('\n')[0]?.slice(0, 80) ?? '', description: `${s.status}${s.class ? ` · ${s.class}` : ''}`, detail: s.rant.ts, id: s.rant.id })),
        { title: 'Candor: Dismiss Rant', placeHolder: 'The rant stays in rants.jsonl; a dismissal is recorded in triage.jsonl' },
      );
      target = pick?.id;
    }
    if (!target) return;
    if (dismissRant(this.deps.dataDir, target)) {
      this.deps.log.info(`rant ${target} dismissed`);
      void vscode.window.showInformationMessage('Rant dismissed.');
      this.deps.changed();
    } else void vscode.window.showWarningMessage(`There is no rant ${target}.`);
  }

  /** The shipped commit and its diff, read-only, from the scratch clone. */
  async showDiff(branch: string): Promise<void> {
    if (this.refusedUntrusted('showing an evolution branch runs git')) return;
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) return;
    try {
      const content = await branchDiff(this.deps.dataDir, folder.uri.fsPath, branch);
      this.diffs.set(branch, content);
      const uri = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${branch}.diff` });
      this.diffChanged.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.languages.setTextDocumentLanguage(document, 'diff');
      await vscode.window.showTextDocument(document, { preview: true });
    } catch (err) {
      void this.deps.notify.warn(`Candor cannot show ${branch}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** `Candor: Take Evolution Branch`: the ref-only hand-off through the guard, clean workspace only. */
  async takeBranch(branch?: string): Promise<void> {
    if (this.refusedUntrusted('taking an evolution branch runs git and writes a branch')) return;
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) return;
    let chosen = branch;
    if (!chosen) {
      const shipped = this.runs().filter((r) => r.branch && (r.outcome === 'shipped' || r.outcome === 'revert-prepared')).reverse();
      if (shipped.length === 0) {
        void vscode.window.showInformationMessage('No evolution run has shipped a branch yet. Run "Candor: Run Evolution".');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        shipped.map((r) => ({ label: r.branch ?? '', description: `${r.outcome} · ${r.commit?.slice(0, 12) ?? ''}`, detail: r.reason })),
        { title: 'Candor: Take Evolution Branch', placeHolder: 'Fetch the branch into the workspace (no checkout; the workspace must be clean)' },
      );
      chosen = pick?.label;
    }
    if (!chosen) return;
    try {
      const result = await handOff(this.deps.dataDir, folder.uri.fsPath, chosen, vscodeUnsavedBuffers);
      this.deps.log.info(`hand-off: ${result.branch} at ${result.commit}`);
      void vscode.window.showInformationMessage(`Branch ${result.branch} is now in the workspace (not checked out).`);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.deps.log.warn(`hand-off of ${chosen} refused: ${message}`);
      void this.deps.notify.warn(`Candor did not take ${chosen}: ${message}`);
    }
  }

  private async cleanData(): Promise<void> {
    const dir = this.deps.dataDir;
    const items = [
      { label: 'Scratch clones', detail: path.join(dir, 'scratch'), paths: ['scratch'], picked: true },
      { label: 'Chat sessions', detail: path.join(dir, 'sessions'), paths: ['sessions'], picked: false },
      { label: 'Drift log', detail: path.join(dir, 'drift.jsonl'), paths: ['drift.jsonl'], picked: false },
      { label: 'Rants and triage', detail: 'rants.jsonl, triage.jsonl', paths: ['rants.jsonl', 'triage.jsonl'], picked: false },
      { label: 'Evolution log', detail: 'evolution.jsonl', paths: ['evolution.jsonl'], picked: false },
      { label: 'Traces and prompt registry', detail: 'traces.sqlite', paths: ['traces.sqlite'], picked: false },
    ];
    const picks = await vscode.window.showQuickPick(items, { title: 'Candor: Clean Up Data…', canPickMany: true, placeHolder: `Remove from ${dir}` });
    if (!picks || picks.length === 0) return;
    if (this.running && picks.some((p) => p.paths.includes('scratch'))) {
      void vscode.window.showWarningMessage('An evolution run is using the scratch clones; try again when it has ended.');
      return;
    }
    const answer = await vscode.window.showWarningMessage(`Remove ${picks.map((p) => p.label.toLowerCase()).join(', ')}? This cannot be undone.`, { modal: true }, 'Remove');
    if (answer !== 'Remove') return;
    for (const pick of picks) for (const rel of pick.paths) fs.rmSync(path.join(dir, rel), { recursive: true, force: true });
    this.deps.log.info(`cleaned: ${picks.map((p) => p.label).join(', ')}`);
    void vscode.window.showInformationMessage('Candor: data removed.');
    this.deps.changed();
  }

  /** Evolution and the hand-off are off in Restricted Mode: true (and the user told why) when refused. */
  private refusedUntrusted(what: string): boolean {
    if (vscode.workspace.isTrusted) return false;
    this.deps.log.info(`refused in an untrusted workspace: ${what}`);
    void vscode.window.showWarningMessage(`Candor: ${what}, so it is off in an untrusted workspace. Trust the workspace to use it.`);
    return true;
  }

  private folderFor(definition: EvolutionTaskDefinition): vscode.WorkspaceFolder | undefined {
    const folders = vscode.workspace.workspaceFolders ?? [];
    return definition.folder ? folders.find((f) => f.name === definition.folder) : folders[0];
  }

  private task(definition: EvolutionTaskDefinition, folder: vscode.WorkspaceFolder): vscode.Task {
    const task = new vscode.Task(
      definition,
      folder,
      'Run Evolution',
      'Candor',
      new vscode.CustomExecution(async () => this.terminal(folder)),
    );
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated, clear: true };
    return task;
  }

  /** A task closes its terminal itself; a plain terminal stays open until a key is pressed. */
  private terminal(folder: vscode.WorkspaceFolder, closeWhenDone = true): vscode.Pseudoterminal {
    const write = new vscode.EventEmitter<string>();
    const close = new vscode.EventEmitter<number>();
    const controller = new AbortController();
    let ended: number | undefined;
    // Everything shown in the terminal is redacted, the gate's output line by line.
    const lines = new LineRedactor(this.deps.keys.secrets);
    const print = (line: string): void => write.fire(`${this.deps.notify.redact(line).replace(/\r?\n/g, '\r\n')}\r\n`);
    const output = (chunk: string): void => write.fire(lines.push(chunk).replace(/\r?\n/g, '\r\n'));
    const finish = (code: number): void => {
      close.fire(code);
      write.dispose();
      close.dispose();
    };
    return {
      onDidWrite: write.event,
      onDidClose: close.event,
      open: () => {
        void this.run(folder, controller.signal, print, output).then((code) => {
          write.fire(lines.flush().replace(/\r?\n/g, '\r\n'));
          if (closeWhenDone) finish(code);
          else {
            ended = code;
            print('Press any key to close this terminal.');
          }
        });
      },
      close: () => controller.abort(),
      handleInput: (data) => {
        if (ended !== undefined) finish(ended);
        else if (data === '\x03') controller.abort();
      },
    };
  }

  private async run(folder: vscode.WorkspaceFolder, signal: AbortSignal, print: (line: string) => void, output: (chunk: string) => void): Promise<number> {
    if (!vscode.workspace.isTrusted) {
      print('Candor: evolution runs commands; it is off in an untrusted workspace. Trust the workspace to use it.');
      return 1;
    }
    if (this.running) {
      print('Candor: an evolution run is already going in this window.');
      return 1;
    }
    this.running = true;
    try {
      const settings = this.deps.settings.read();
      const handle = await this.deps.providers.handle().catch((err: unknown) => {
        print(`No model: ${err instanceof Error ? err.message : String(err)} — triage falls back to rules and no change is made.`);
        return undefined;
      });
      const key = await this.deps.keys.get();
      print(`Candor evolution on ${folder.name} — model ${handle ? `${handle.identity.model} @ ${handle.identity.provider}` : 'none'}. Ctrl+C or closing the terminal cancels.`);
      const record = await runEvolution(
        {
          workspace: folder.uri.fsPath,
          dataDir: this.deps.dataDir,
          testCommand: settings.testCommand,
          buildCommand: settings.buildCommand || undefined,
          setupCommand: settings.setupCommand,
          maxChangedLines: settings.maxChangedLines,
          maxChangedFiles: settings.maxChangedFiles,
          timeoutMs: GATE_TIMEOUT_MS,
          model: handle,
          unsaved: vscodeUnsavedBuffers,
          secrets: [...this.deps.keys.secrets.values(), ...(key ? [key] : [])],
          signal,
          project: folder.name,
          sandbox: settings.sandbox,
        },
        { print, onOutput: output, log: this.deps.log },
      );
      print('');
      print(`Outcome: ${record.outcome}${record.branch ? ` — branch ${record.branch}` : ''}${record.reason ? ` — ${record.reason}` : ''}`);
      this.deps.log.info(`evolution ${record.run}: ${record.outcome} ${record.reason}`);
      this.deps.changed();
      if (record.outcome === 'shipped' || record.outcome === 'revert-prepared') {
        void this.deps.notify.info(`Candor evolution: ${record.outcome} on ${record.branch ?? '?'}.`, 'Take Branch').then((a) => {
          if (a && record.branch) void this.takeBranch(record.branch);
        });
      }
      return record.outcome === 'error' ? 1 : 0;
    } catch (err) {
      print(`Candor evolution failed: ${err instanceof Error ? err.message : String(err)}`);
      this.deps.log.error(`evolution: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      return 1;
    } finally {
      this.running = false;
    }
  }

  private schedule(): void {
    clearInterval(this.timer);
    const minutes = this.deps.settings.read().intervalMinutes;
    if (minutes > 0) {
      this.timer = setInterval(() => {
        if (!this.running) void this.start();
      }, minutes * 60_000);
    }
  }
}
