import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { branchDiff, dismissRant, handOff, readRuns, rantStatuses, runEvolution, REPOSITORY_HINT, type EvolutionRecord, type RantState } from '../../core/evolution';
import type { Logger } from '../../core/log';
import type { Settings } from '../settings/config';
import type { Providers } from '../provider/provider';
import type { ApiKeys } from '../provider/secrets';
import type { Notifier } from '../platform/notify';
import { Disposable } from '../platform/lifecycle';
import { registerCommand } from '../platform/command';
import { RunTerminal } from '../platform/runTerminal';
import { vscodeUnsavedBuffers } from '../git/workspaceGit';
import type { MessageHandlers } from '../chat/router';
import { errorMessage } from '../../core/errorMessage';

export const EVOLUTION_TASK_TYPE = 'candor-evolution';
const DIFF_SCHEME = 'candor-evolution-diff';
/** Each gate command (setup, build, test) may run this long. */
const GATE_TIMEOUT_MS = 10 * 60_000;

interface EvolutionTaskDefinition extends vscode.TaskDefinition {
  /** Read by older versions; ignored: a run works on the agent's repository (`candor.evolution.repository`), whatever folders are open. */
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
    this.register(registerCommand('candor.evolve', () => this.start(), deps.notify));
    this.register(registerCommand('candor.handOffBranch', () => this.takeBranch(), deps.notify));
    this.register(registerCommand('candor.dismissRant', (id?: unknown) => this.dismiss(typeof id === 'string' ? id : undefined), deps.notify));
    this.register(registerCommand('candor.cleanData', () => this.cleanData(), deps.notify));
    this.register(vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('candor.evolution.intervalMinutes')) this.schedule();
    }));
    this.register({ dispose: () => clearInterval(this.timer) });
    this.schedule();
  }

  provideTasks(): vscode.Task[] {
    return [this.task({ type: EVOLUTION_TASK_TYPE })];
  }

  resolveTask(task: vscode.Task): vscode.Task | undefined {
    return task.definition.type === EVOLUTION_TASK_TYPE ? this.task(task.definition as EvolutionTaskDefinition) : undefined;
  }

  /**
   * `Candor: Run Evolution`: starts the task, no confirmation (it changes
   * nothing the user cannot see and undo). A run works on the agent's
   * repository, or triages only; it needs no folder open.
   */
  async start(): Promise<void> {
    if (this.refusedUntrusted('evolution runs commands (your tests)')) return;
    // VS Code saves every dirty editor before it starts a task (task.saveBeforeRun,
    // "always" by default), wherever the file is. With any unsaved buffer, or no
    // folder to scope a task to, the same pipeline runs in a terminal of its own,
    // so starting it never saves the user's work.
    const unsaved = vscode.workspace.textDocuments.filter((d) => d.isDirty).length;
    if (unsaved > 0 || (vscode.workspace.workspaceFolders ?? []).length === 0) {
      if (unsaved > 0) this.deps.log.info(`evolution: ${unsaved} unsaved buffer(s); running outside the task system so nothing gets saved`);
      vscode.window.createTerminal({ name: 'Candor: Run Evolution', pty: this.terminal(true) }).show();
      return;
    }
    await vscode.tasks.executeTask(this.task({ type: EVOLUTION_TASK_TYPE }));
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
      const open = this.rants().filter((s) => s.status === 'new' || s.status === 'queued' || s.status === 'waiting-for-repository');
      if (open.length === 0) {
        void vscode.window.showInformationMessage('There are no open rants to dismiss.');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        open.map((s) => ({ label: s.rant.text.split('\n')[0]?.slice(0, 80) ?? '', description: `${s.status}${s.class ? ` · ${s.class}` : ''}`, detail: s.rant.ts, id: s.rant.id })),
        { title: 'Candor: Rants: Dismiss…', placeHolder: 'The rant stays in rants.jsonl; a dismissal is recorded in triage.jsonl' },
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

  /** The shipped commit and its diff, read-only, from the scratch clone of the agent's repository. */
  async showDiff(branch: string): Promise<void> {
    if (this.refusedUntrusted('showing an evolution branch runs git')) return;
    const repository = this.repository();
    if (repository === undefined) return;
    try {
      const content = await branchDiff(this.deps.dataDir, repository, branch);
      this.diffs.set(branch, content);
      const uri = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${branch}.diff` });
      this.diffChanged.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.languages.setTextDocumentLanguage(document, 'diff');
      await vscode.window.showTextDocument(document, { preview: true });
    } catch (err) {
      void this.deps.notify.warn(`Candor cannot show ${branch}: ${errorMessage(err)}`);
    }
  }

  /** `Candor: Take Evolution Branch`: the ref-only hand-off into the agent's repository, through the guard, only while it is clean. */
  async takeBranch(branch?: string): Promise<void> {
    if (this.refusedUntrusted('taking an evolution branch runs git and writes a branch')) return;
    const repository = this.repository();
    if (repository === undefined) return;
    let chosen = branch;
    if (!chosen) {
      const shipped = this.runs().filter((r) => r.branch && (r.outcome === 'shipped' || r.outcome === 'revert-prepared')).reverse();
      if (shipped.length === 0) {
        void vscode.window.showInformationMessage('No evolution run has shipped a branch yet. Run "Candor: Run Evolution".');
        return;
      }
      const pick = await vscode.window.showQuickPick(
        shipped.map((r) => ({ label: r.branch ?? '', description: `${r.outcome} · ${r.commit?.slice(0, 12) ?? ''}`, detail: r.reason })),
        { title: 'Candor: Take Evolution Branch', placeHolder: `Fetch the branch into ${repository} (no checkout; it must be clean)` },
      );
      chosen = pick?.label;
    }
    if (!chosen) return;
    try {
      const result = await handOff(this.deps.dataDir, repository, chosen, vscodeUnsavedBuffers);
      this.deps.log.info(`hand-off: ${result.branch} at ${result.commit} into ${repository}`);
      void vscode.window.showInformationMessage(`Branch ${result.branch} is now in the agent's repository ${repository} (not checked out).`);
    } catch (err) {
      const message = errorMessage(err);
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

  /** `candor.evolution.repository` (user settings only), or undefined after telling the user how to set it. */
  private repository(): string | undefined {
    const repository = this.deps.settings.read().repository.trim();
    if (repository !== '') return repository;
    void this.openRepositorySetting('Candor: no agent repository is set, so evolution has no branches to show or take.');
    return undefined;
  }

  private async openRepositorySetting(message: string): Promise<void> {
    const answer = await vscode.window.showInformationMessage(`${message} ${REPOSITORY_HINT}.`, 'Open Setting');
    // A user-only setting: in a remote window (code-server, SSH, a container) it lives on the Remote tab.
    if (answer) await vscode.commands.executeCommand(vscode.env.remoteName ? 'workbench.action.openRemoteSettings' : 'workbench.action.openSettings', { query: 'candor.evolution.repository' });
  }

  /** The agent's README when its repository is not set: the one this extension ships (context for triage). */
  private extensionReadme(): string | undefined {
    const root = vscode.extensions.getExtension('candor.candor')?.extensionPath;
    if (root === undefined) return undefined;
    try {
      return fs.readFileSync(path.join(root, 'README.md'), 'utf8');
    } catch {
      return undefined;
    }
  }

  private task(definition: EvolutionTaskDefinition): vscode.Task {
    const task = new vscode.Task(
      definition,
      vscode.TaskScope.Workspace,
      'Run Evolution',
      'Candor',
      new vscode.CustomExecution(async () => this.terminal()),
    );
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated, clear: true };
    return task;
  }

  /** A task closes its terminal itself; a plain terminal stays open until a key is pressed. */
  private terminal(keepOpen = false): vscode.Pseudoterminal {
    return new RunTerminal((out, signal) => this.run(signal, (line) => out.line(line), (chunk) => out.chunk(chunk)), this.deps.keys.secrets, { keepOpen });
  }

  private async run(signal: AbortSignal, print: (line: string) => void, output: (chunk: string) => void): Promise<number> {
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
        print(`No model: ${errorMessage(err)} — triage falls back to rules and no change is made.`);
        return undefined;
      });
      const key = await this.deps.keys.get();
      const repository = settings.repository.trim();
      print(`Candor evolution on ${repository !== '' ? `the agent's repository ${repository}` : "no repository (candor.evolution.repository is not set): triage only"} — model ${handle ? `${handle.identity.model} @ ${handle.identity.provider}` : 'none'}. Ctrl+C or closing the terminal cancels.`);
      const record = await runEvolution(
        {
          ...(repository !== '' ? { repository } : {}),
          agentReadme: this.extensionReadme(),
          dataDir: this.deps.dataDir,
          testCommand: settings.testCommand,
          buildCommand: settings.buildCommand || undefined,
          setupCommand: settings.setupCommand,
          maxChangedLines: settings.maxChangedLines,
          maxChangedFiles: settings.maxChangedFiles,
          maxChangedBytes: settings.maxChangedBytes,
          rerunFailedGate: settings.rerunFailedGate,
          sandboxUid: settings.sandboxUid,
          environment: settings.evolutionEnvironment,
          limits: settings.limits,
          timeoutMs: GATE_TIMEOUT_MS,
          model: handle,
          unsaved: vscodeUnsavedBuffers,
          secrets: [...this.deps.keys.secrets.values(), ...(key ? [key] : [])],
          signal,
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
      const waiting = record.outcome === 'triage-only' ? this.rants().filter((r) => r.status === 'waiting-for-repository').length : 0;
      if (waiting > 0) void this.openRepositorySetting(`Candor evolution: ${waiting} code rant(s) wait for the agent's repository; no code was changed.`);
      return record.outcome === 'error' ? 1 : 0;
    } catch (err) {
      print(`Candor evolution failed: ${errorMessage(err)}`);
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
