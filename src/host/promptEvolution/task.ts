import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import type { PromptRegistry } from '../../core/promptEvolution/registry';
import { runPromptEvolution, type PromptEvolutionEnd } from '../../core/promptEvolution/run';
import { resolveSettings, SettingsError, type PromptEvolutionSettings } from '../../core/promptEvolution/settings';
import type { CandorSettings } from '../settings/config';
import type { SecretSet } from '../../core/redact';
import type { RunView } from '../../protocol/review';
import { Disposable } from '../platform/lifecycle';
import { RunTerminal, type RunOutput } from '../platform/runTerminal';
import type { Providers } from '../provider/provider';
import type { WorkspacePromptFile } from './promptFile';
import { runView } from './views';
import { errorMessage } from '../../core/errorMessage';
import { isKindError } from '../../core/kindError';

export const PROMPT_EVOLUTION_TASK = 'candor-prompt-evolution';
const TASK_NAME = 'Run Prompt Evolution';

interface PromptTaskDefinition extends vscode.TaskDefinition {
  readonly type: typeof PROMPT_EVOLUTION_TASK;
  /** Re-test this near-miss from the review queue instead of asking for new proposals. */
  readonly candidate?: string;
}

export interface PromptTaskDeps {
  readonly dataDir: string;
  readonly providers: Providers;
  readonly promptFile: WorkspacePromptFile;
  readonly registry: () => Promise<PromptRegistry>;
  readonly log: Logger;
  readonly secrets: SecretSet;
  /** The settings snapshot (docs/architecture.md, "Settings and trust"). */
  readonly settings: () => CandorSettings;
  /** A run started or ended: the review panel refreshes. */
  readonly changed: () => void;
  /** A run ended with something to review (a promotion or a near-miss). */
  readonly review: () => void;
}

/**
 * The `candor-prompt-evolution` task: `runPromptEvolution` in a
 * pseudoterminal of the extension host, one run at a time per window.
 */
export class PromptEvolutionTask extends Disposable {
  private runningNow = false;
  private last: RunView | undefined;

  constructor(private readonly deps: PromptTaskDeps) {
    super();
    this.register(vscode.tasks.registerTaskProvider(PROMPT_EVOLUTION_TASK, {
      provideTasks: () => [this.task({ type: PROMPT_EVOLUTION_TASK })],
      resolveTask: (task) => (task.definition.type === PROMPT_EVOLUTION_TASK ? this.task(task.definition as PromptTaskDefinition) : undefined),
    }));
  }

  get running(): boolean {
    return this.runningNow;
  }

  /** The last decided run of this window, for the review panel. */
  get lastRun(): RunView | undefined {
    return this.last;
  }

  /** Runs the task: new candidates, or a re-test of a near-miss. */
  async start(candidate?: string): Promise<void> {
    if (this.runningNow) {
      void vscode.window.showInformationMessage('Candor: a prompt evolution run is already going; see its terminal.');
      return;
    }
    await vscode.tasks.executeTask(this.task({ type: PROMPT_EVOLUTION_TASK, ...(candidate !== undefined ? { candidate } : {}) }));
  }

  private task(definition: PromptTaskDefinition): vscode.Task {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const task = new vscode.Task(
      definition,
      folder ?? vscode.TaskScope.Workspace,
      definition.candidate ? `${TASK_NAME} (re-test ${definition.candidate})` : TASK_NAME,
      'Candor',
      new vscode.CustomExecution(async (resolved) => new RunTerminal((out, signal) => this.run(out, signal, resolved as PromptTaskDefinition), this.deps.secrets)),
    );
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated, clear: true, echo: false };
    return task;
  }

  /** One run in the task's terminal. Returns the exit code. */
  private async run(out: RunOutput, signal: AbortSignal, definition: PromptTaskDefinition): Promise<number> {
    if (this.runningNow) {
      out.line('A prompt evolution run is already going in another terminal.');
      return 1;
    }
    this.runningNow = true;
    this.deps.changed();
    try {
      return await this.runChecked(out, signal, definition);
    } catch (err) {
      this.deps.log.error(`prompt evolution: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      out.line(`Error: ${errorMessage(err)}`);
      return 1;
    } finally {
      this.runningNow = false;
      this.deps.changed();
    }
  }

  private async runChecked(out: RunOutput, signal: AbortSignal, definition: PromptTaskDefinition): Promise<number> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      out.line('Open a folder first: prompt evolution reads its tasks from .candor/evals/*.jsonl in the first workspace folder.');
      return 1;
    }
    if (!vscode.workspace.isTrusted) {
      out.line('This workspace is not trusted: prompt evolution sends its tasks to the model and may write .candor/prompt.md. Trust the workspace to run it.');
      return 1;
    }
    let settings: PromptEvolutionSettings;
    try {
      settings = resolveSettings(this.deps.settings().promptEvolution);
    } catch (err) {
      if (!isKindError(err, SettingsError)) throw err;
      out.line(`Setting error: ${err.message}`);
      return 1;
    }
    out.line(`Candor prompt evolution in ${folder.name}`);
    const end = await runPromptEvolution({
      workspace: folder.uri.fsPath,
      dataDir: this.deps.dataDir,
      promptFile: this.deps.promptFile,
      registry: this.deps.registry,
      model: () => this.deps.providers.handle(),
      settings,
      output: { line: (text) => out.line(text), problem: (text) => out.line(text), abProgress: (text) => out.status(text) },
      clock: () => new Date(),
      secrets: this.deps.secrets,
      signal,
      ...(definition.candidate !== undefined ? { retest: definition.candidate } : {}),
    });
    this.finished(end);
    return end.code;
  }

  private finished(end: PromptEvolutionEnd): void {
    this.deps.log.info(`prompt evolution${end.decided ? ` ${end.decided.result.run}` : ''}: ${end.summary}`);
    if (!end.decided) return;
    const view = runView(end.decided, end.summary);
    this.last = view;
    if (view.outcome === 'promote' || view.outcome === 'near-miss') this.deps.review();
  }
}
