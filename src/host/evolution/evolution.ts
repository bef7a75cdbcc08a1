import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { rantStatuses, runEvolution } from '../../core/evolution';
import type { Logger } from '../../core/log';
import type { Settings } from '../settings/config';
import type { Providers } from '../provider/provider';
import type { ApiKeys } from '../provider/secrets';
import type { Notifier } from '../platform/notify';
import { Disposable } from '../platform/lifecycle';
import { registerCommand } from '../platform/command';
import { RunTerminal } from '../platform/runTerminal';
import { visibleText } from '../../shared/visibleText';
import { vscodeUnsavedBuffers } from '../git/workspaceGit';
import { errorMessage } from '../../core/errorMessage';
import type { CiCulpritResult } from '../../core/github/ciHistory';
import { openRepositorySetting, refusedUntrusted } from './agentRepository';

export const EVOLUTION_TASK_TYPE = 'candor-evolution';
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
  /** The Take Branch and Open Pull Request buttons of a shipped run's notification. */
  readonly takeBranch: (branch: string) => Promise<void>;
  readonly openPullRequest: (branch: string) => Promise<void>;
  /** CI's culprit on the agent repository's default branch, when GitHub can be read. */
  readonly ciCulprit: (repository: string) => Promise<CiCulpritResult | undefined>;
}

/**
 * Evolution runs as a VS Code task of type `candor-evolution`, executed in a
 * pseudoterminal in the extension host (it sees SecretStorage, the unsaved
 * buffers and the offline provider). The pipeline itself is the core's.
 */
export class EvolutionFeature extends Disposable implements vscode.TaskProvider {
  private running = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly deps: EvolutionDeps) {
    super();
    this.register(vscode.tasks.registerTaskProvider(EVOLUTION_TASK_TYPE, this));
    this.register(registerCommand('candor.evolve', () => this.start(), deps.notify));
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
  /** True while a run is going in this window (it holds the scratch clones). */
  get isRunning(): boolean {
    return this.running;
  }

  async start(): Promise<void> {
    if (refusedUntrusted(this.deps.log, 'evolution runs commands (your tests)')) return;
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

  /**
   * A task closes its terminal itself; a plain terminal stays open until a
   * key is pressed. Each printed line is one line, whatever it quotes (a
   * reason, a server's error): a line feed in it shows as ␊
   * (docs/architecture.md, "Text bound for a person").
   */
  private terminal(keepOpen = false): vscode.Pseudoterminal {
    return new RunTerminal((out, signal) => this.run(signal, (line) => out.line(visibleText(line)), (chunk) => out.chunk(chunk)), this.deps.keys.secrets, { keepOpen });
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
      const ciCulprit = repository !== '' ? await this.deps.ciCulprit(repository) : undefined;
      const record = await runEvolution(
        {
          ...(repository !== '' ? { repository } : {}),
          ...(ciCulprit !== undefined ? { ciCulprit } : {}),
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
        void this.deps.notify.info(`Candor evolution: ${record.outcome} on ${record.branch ?? '?'}.`, 'Take Branch', 'Open Pull Request').then((a) => {
          if (!record.branch) return;
          if (a === 'Take Branch') void this.deps.takeBranch(record.branch);
          if (a === 'Open Pull Request') void this.deps.openPullRequest(record.branch);
        });
      }
      const waiting = record.outcome === 'triage-only' ? rantStatuses(this.deps.dataDir).filter((r) => r.status === 'waiting-for-repository').length : 0;
      if (waiting > 0) void openRepositorySetting(`Candor evolution: ${waiting} code rant(s) wait for the agent's repository; no code was changed.`);
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
