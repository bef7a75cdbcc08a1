import * as path from 'node:path';
import * as vscode from 'vscode';
import type { RequestTrace } from '../../core/chat/conversation';
import type { Logger } from '../../core/log';
import { workspaceIdFor } from '../../core/memory/location';
import { PROMPT_FILE, readPromptFile } from '../../core/prompt/promptFile';
import { BUILT_IN_PROMPT } from '../../core/prompt/systemPrompt';
import { evolvePrompt, type EvolveResult } from '../../core/promptEvolution/evolve';
import { gatherEvidence } from '../../core/promptEvolution/evidence';
import { PromptRegistry, type PromptVersion, type Trace } from '../../core/promptEvolution/registry';
import {
  abProgressLine, candidateLines, nearMissViews, NO_TASKS_NEXT_STEP, outcomeLine, progressLine, runView, skippedLines, undecidedLines, versionDescription, versionViews,
} from '../../core/promptEvolution/report';
import type { ReviewState, RunView } from '../../protocol/review';
import { resolveSettings, SettingsError, type PromptEvolutionSettings } from '../../core/promptEvolution/settings';
import { SqliteFileError } from '../../core/promptEvolution/sqliteFile';
import { readTaskSets } from '../../core/promptEvolution/taskSet';
import type { Settings } from '../settings/config';
import type { Notifier } from '../platform/notify';
import type { SecretSet } from '../../core/redact';
import { Disposable } from '../platform/lifecycle';
import { NO_FOLDER_WORKSPACE_ID } from '../memory/memory';
import type { Providers } from '../provider/provider';
import { PromptReviewPanel } from './promptReview';
import { RunTerminal, type RunOutput } from '../platform/runTerminal';
import { RegistryWriter } from './registryWriter';
import type { MessageHandlers } from '../chat/router';

/**
 * Prompt evolution in VS Code: the prompt in force (built in until the
 * workspace has `.candor/prompt.md`), the trace store fed by the chat, the
 * `candor-prompt-evolution` task with its pseudoterminal, the rollback, and
 * the review panel. The deciding is done by the pure core; this file reads
 * and writes what VS Code owns (buffers, settings, the workspace file).
 */

export const PROMPT_EVOLUTION_TASK = 'candor-prompt-evolution';
const EVALS_DIR = '.candor/evals';
const TASK_NAME = 'Run Prompt Evolution';

export interface PromptInForce {
  readonly text: string;
  readonly source: 'built-in' | 'workspace';
  /** The registry version with this text, when there is one. */
  readonly version?: string;
}

export interface PromptEvolutionDeps {
  readonly extensionUri: vscode.Uri;
  readonly dataDir: string;
  readonly providers: Providers;
  readonly settings: Settings;
  readonly log: Logger;
  readonly channel?: vscode.LogOutputChannel;
  readonly notify: Notifier;
  /** The extension host's secrets: evidence, candidates, traces and output are redacted with them. */
  readonly secrets: SecretSet;
}

interface PromptTaskDefinition extends vscode.TaskDefinition {
  readonly type: typeof PROMPT_EVOLUTION_TASK;
  /** Re-test this near-miss from the review queue instead of asking for new proposals. */
  readonly candidate?: string;
}

type WriteResult = { readonly ok: true } | { readonly ok: false; readonly reason: string };

export class PromptEvolution extends Disposable {
  private opening: Promise<PromptRegistry> | undefined;
  /** The workspace scope `opening` was opened for. */
  private openedScope: string | undefined;
  private readonly writer: RegistryWriter;
  /** Registry version id by prompt text (null: none), for traces; cleared whenever the registry gains versions here. */
  private readonly versionIds = new Map<string, string | null>();
  private lastServedVersion: string | undefined;
  /** The last reason the prompt file was refused, so the log says it once, not per request. */
  private lastRefusal: string | undefined;
  private running = false;
  private lastRun: RunView | undefined;
  private readonly review: PromptReviewPanel;

  constructor(private readonly deps: PromptEvolutionDeps) {
    super();
    this.writer = new RegistryWriter(() => this.registry(), deps.log);
    this.review = this.register(new PromptReviewPanel(deps.extensionUri, {
      state: () => this.reviewState(),
      retest: (candidateId) => this.startTask({ type: PROMPT_EVOLUTION_TASK, candidate: candidateId }),
      restore: (versionId) => this.restore(versionId),
    }, deps.log, deps.notify));
    this.register(vscode.tasks.registerTaskProvider(PROMPT_EVOLUTION_TASK, {
      provideTasks: () => [this.task({ type: PROMPT_EVOLUTION_TASK })],
      resolveTask: (task) => (task.definition.type === PROMPT_EVOLUTION_TASK ? this.task(task.definition as PromptTaskDefinition) : undefined),
    }));
    this.register(this.command('candor.evolvePrompt', () => this.startTask({ type: PROMPT_EVOLUTION_TASK })));
    this.register(this.command('candor.rollbackPrompt', () => this.rollbackPrompt()));
    this.register({ dispose: () => void this.writer.flushed().finally(() => void this.opening?.then((r) => r.close(), () => undefined)) });
  }

  /** The system prompt's own text: `.candor/prompt.md` (its editor buffer if open, else the disk) or the built-in one. */
  async currentPromptText(): Promise<PromptInForce> {
    const found = await this.readPrompt();
    const version = await this.versionOf(found.text);
    this.lastServedVersion = version;
    return version === undefined ? found : { ...found, version };
  }

  /** For the chat: records each request in traces.sqlite. Never throws, never waits. */
  traceSink(): (trace: RequestTrace) => void {
    return (t) => {
      const trace: Trace = {
        session: t.session,
        replyId: t.replyId,
        ...(this.lastServedVersion ? { promptVersion: this.lastServedVersion } : {}),
        model: t.model,
        provider: t.provider,
        ...(t.promptTokens !== undefined ? { promptTokens: t.promptTokens } : {}),
        ...(t.completionTokens !== undefined ? { completionTokens: t.completionTokens } : {}),
        toolCalls: t.toolCalls.length,
        durationMs: t.durationMs,
        ts: new Date().toISOString(),
      };
      this.writer.push({ kind: 'trace', trace });
    };
  }

  /** Thumbs up or down on a reply in the chat view, in the session open there. */
  messageHandlers(currentSession: () => string): MessageHandlers<'prompt evolution'> {
    return {
      feedback: (message) => {
        this.deps.log.info(`feedback ${message.value} on ${message.entryId}`);
        this.feedback(message.entryId, message.value, currentSession());
      },
    };
  }

  /** Thumbs up or down on a reply (its transcript entry id). */
  private feedback(replyId: string, value: 'up' | 'down', session: string): void {
    this.writer.push({ kind: 'signal', signal: { kind: value, replyId, session, ts: new Date().toISOString() } });
  }

  /** A rant saved while a session was open: the proposer reads it as evidence. */
  linkRant(rantId: string, session: string | null): void {
    this.writer.push({ kind: 'signal', signal: { kind: 'rant', rantId, session, ts: new Date().toISOString() } });
  }

  /** Resolves when every queued trace and signal has been written (or given up on). */
  flushed(): Promise<void> {
    return this.writer.flushed();
  }

  /**
   * The registry for this window's workspace: prompt versions and
   * evaluations are kept per workspace (the scope is the first folder's
   * `workspaceIdFor`, as for memory), though every workspace shares the data
   * folder's traces.sqlite. Reopened when the first folder changes.
   */
  registry(): Promise<PromptRegistry> {
    const scope = registryScope();
    if (this.opening && this.openedScope !== scope) {
      // Closing only frees the cached copy; a run still holding it reloads from disk.
      void this.opening.then((r) => r.close(), () => undefined);
      this.opening = undefined;
      this.versionIds.clear();
    }
    if (!this.opening) {
      this.openedScope = scope;
      const opening: Promise<PromptRegistry> = this.openRegistry(scope).catch((err: unknown) => {
        if (this.opening === opening) this.opening = undefined;
        throw err;
      });
      this.opening = opening;
    }
    return this.opening;
  }

  private async openRegistry(scope: string): Promise<PromptRegistry> {
    const options = {
      file: path.join(this.deps.dataDir, 'traces.sqlite'),
      scope,
      // sql.js's wasm ships beside the bundle (dist/sql-wasm.wasm); node_modules is not in the VSIX.
      locateFile: (name: string) => vscode.Uri.joinPath(this.deps.extensionUri, 'dist', name).fsPath,
      secrets: this.deps.secrets,
    };
    try {
      return await PromptRegistry.open(options);
    } catch (err) {
      if (!(err instanceof SqliteFileError && err.kind === 'corrupt')) throw err;
      this.deps.log.warn(err.message);
      void this.deps.notify.warn(`Candor: ${err.message}`);
      return PromptRegistry.open(options);
    }
  }

  private async versionOf(text: string): Promise<string | undefined> {
    const known = this.versionIds.get(text);
    if (known !== undefined) return known ?? undefined;
    try {
      const versions = await (await this.registry()).versions();
      const id = [...versions].reverse().find((v) => v.text === text)?.id ?? null;
      this.versionIds.set(text, id);
      return id ?? undefined;
    } catch (err) {
      this.deps.log.warn(`prompt registry: ${errorText(err)}`);
      return undefined;
    }
  }

  private promptUri(): vscode.Uri | undefined {
    const folder = vscode.workspace.workspaceFolders?.[0];
    return folder ? vscode.Uri.joinPath(folder.uri, ...PROMPT_FILE.split('/')) : undefined;
  }

  private async readPrompt(): Promise<Omit<PromptInForce, 'version'>> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const openText = (real: string): string | undefined =>
      vscode.workspace.textDocuments.find((d) => !d.isClosed && d.uri.scheme === 'file' && d.uri.fsPath === real)?.getText();
    const read = await readPromptFile(folder, vscode.workspace.isTrusted, openText);
    if (read.status === 'ok') return { text: read.text, source: 'workspace' };
    if (read.status === 'refused' && read.reason !== this.lastRefusal) {
      this.lastRefusal = read.reason;
      this.deps.log.warn(`${read.reason}; the built-in prompt is used`);
    }
    return { text: BUILT_IN_PROMPT, source: 'built-in' };
  }

  /**
   * Writes `.candor/prompt.md` through a WorkspaceEdit (creating it if
   * needed) and saves it. `expected`: the prompt as it was when the work
   * began; if it changed since, nothing is written.
   */
  private async writePrompt(text: string, expected: Omit<PromptInForce, 'version'> | undefined, label: string): Promise<WriteResult> {
    const uri = this.promptUri();
    if (!uri) return { ok: false, reason: 'no workspace folder is open' };
    if (expected) {
      const now = await this.readPrompt();
      if (now.source !== expected.source || now.text !== expected.text) {
        return { ok: false, reason: `${PROMPT_FILE} changed since the run began; the promotion was not written` };
      }
    }
    const exists = await vscode.workspace.fs.stat(uri).then(() => true, () => false);
    const edit = new vscode.WorkspaceEdit();
    const metadata: vscode.WorkspaceEditEntryMetadata = { label, needsConfirmation: false };
    if (!exists) {
      edit.createFile(uri, { ignoreIfExists: true }, metadata);
      edit.insert(uri, new vscode.Position(0, 0), text, metadata);
    } else {
      const doc = await vscode.workspace.openTextDocument(uri);
      edit.replace(uri, new vscode.Range(new vscode.Position(0, 0), doc.lineAt(doc.lineCount - 1).range.end), text, metadata);
    }
    if (!(await vscode.workspace.applyEdit(edit))) return { ok: false, reason: `VS Code did not apply the edit to ${PROMPT_FILE}` };
    const doc = await vscode.workspace.openTextDocument(uri);
    if (!(await doc.save())) return { ok: false, reason: `${PROMPT_FILE} was edited but could not be saved` };
    this.versionIds.clear();
    return { ok: true };
  }

  private command(id: string, fn: () => unknown): vscode.Disposable {
    return vscode.commands.registerCommand(id, async () => {
      try {
        await fn();
      } catch (err) {
        this.deps.notify.failed(id, err);
      }
    });
  }

  private async startTask(definition: PromptTaskDefinition): Promise<void> {
    if (this.running) {
      void vscode.window.showInformationMessage('Candor: a prompt evolution run is already going; see its terminal.');
      return;
    }
    await vscode.tasks.executeTask(this.task(definition));
  }

  private task(definition: PromptTaskDefinition): vscode.Task {
    const folder = vscode.workspace.workspaceFolders?.[0];
    const task = new vscode.Task(
      definition,
      folder ?? vscode.TaskScope.Workspace,
      definition.candidate ? `${TASK_NAME} (re-test ${definition.candidate})` : TASK_NAME,
      'Candor',
      new vscode.CustomExecution(async (resolved) => new RunTerminal((out, signal) => this.run(out, signal, resolved as PromptTaskDefinition), (text) => this.deps.notify.redact(text))),
    );
    task.presentationOptions = { reveal: vscode.TaskRevealKind.Always, panel: vscode.TaskPanelKind.Dedicated, clear: true, echo: false };
    return task;
  }

  /** One run in the task's terminal. Returns the exit code. */
  private async run(out: RunOutput, signal: AbortSignal, definition: PromptTaskDefinition): Promise<number> {
    if (this.running) {
      out.line('A prompt evolution run is already going in another terminal.');
      return 1;
    }
    this.running = true;
    void this.review.refresh();
    try {
      return await this.runUnlocked(out, signal, definition);
    } catch (err) {
      this.deps.log.error(`prompt evolution: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
      out.line(`Error: ${errorText(err)}`);
      return 1;
    } finally {
      this.running = false;
      this.versionIds.clear();
      void this.review.refresh();
    }
  }

  private async runUnlocked(out: RunOutput, signal: AbortSignal, definition: PromptTaskDefinition): Promise<number> {
    const folder = vscode.workspace.workspaceFolders?.[0];
    if (!folder) {
      out.line('Open a folder first: prompt evolution reads its tasks from .candor/evals/*.jsonl in the first workspace folder.');
      return 1;
    }
    if (!vscode.workspace.isTrusted) {
      out.line('This workspace is not trusted: prompt evolution sends its tasks to the model and may write .candor/prompt.md. Trust the workspace to run it.');
      return 1;
    }
    out.line(`Candor prompt evolution in ${folder.name}`);
    const taskSet = readTaskSets(path.join(folder.uri.fsPath, ...EVALS_DIR.split('/')));
    for (const line of skippedLines(taskSet.skipped.map((s) => ({ ...s, file: path.relative(folder.uri.fsPath, s.file) })))) out.line(line);
    if (taskSet.tasks.length === 0) {
      out.line(`No tasks found in ${EVALS_DIR}/*.jsonl.`);
      out.line(NO_TASKS_NEXT_STEP);
      return 1;
    }
    let settings: PromptEvolutionSettings;
    try {
      settings = resolveSettings(readSettings());
    } catch (err) {
      if (err instanceof SettingsError) {
        out.line(`Setting error: ${err.message}`);
        return 1;
      }
      throw err;
    }
    const start = await this.readPrompt();
    const registry = await this.registry();
    out.line(`Prompt: ${start.source === 'workspace' ? PROMPT_FILE : `built in (no ${PROMPT_FILE} yet)`}`);
    out.line(`Tasks: ${taskSet.tasks.length} from ${taskSet.files.map((f) => path.relative(folder.uri.fsPath, f)).join(', ')} (hash ${taskSet.hash.slice(0, 12)})`);

    let candidates: string[] | undefined;
    if (definition.candidate) {
      const nearMiss = (await registry.nearMisses()).find((e) => e.candidateId === definition.candidate);
      if (!nearMiss) {
        out.line(`No near-miss ${definition.candidate} in the review queue.`);
        return 1;
      }
      candidates = [nearMiss.text];
      out.line(`Re-test of ${definition.candidate} on tasks it has not been scored on (counts as another hypothesis).`);
    }

    const model = await this.deps.providers.handle();
    const modelName = `${model.identity.model} @ ${model.identity.provider}`;
    out.line(`Model: ${modelName}; ${settings.concurrency} request(s) in flight`);
    const evidence = candidates ? undefined : await gatherEvidence(this.deps.dataDir, registry, this.deps.secrets);
    if (evidence) out.line(`Evidence: ${evidence.failingTraces.length} failed request(s), ${evidence.downVoted.length} down-voted repl(ies), ${evidence.rants.length} linked rant(s)`);

    const result = await evolvePrompt({
      secrets: this.deps.secrets,
      model,
      modelName,
      current: start.text,
      taskSet,
      ...(evidence ? { evidence } : {}),
      ...(candidates ? { candidates } : {}),
      registry,
      settings,
      signal,
      onProgress: (p) => {
        if (p.stage === 'ab-test') out.status(abProgressLine(p));
        else {
          const line = progressLine(p, candidates !== undefined);
          if (line) out.line(line);
        }
      },
    });
    return this.finish(out, result, start, { modelName, tasks: taskSet.tasks.length, taskSetHash: taskSet.hash });
  }

  private async finish(out: RunOutput, result: EvolveResult, start: Omit<PromptInForce, 'version'>, info: { modelName: string; tasks: number; taskSetHash: string }): Promise<number> {
    if (result.kind !== 'decided') {
      const lines = undecidedLines(result);
      for (const line of lines) out.line(line);
      this.deps.log.info(`prompt evolution: ${lines[0] ?? result.kind}`);
      return result.kind === 'cancelled' ? 130 : 1;
    }
    out.line();
    out.line(`A/B: ${result.ab.runs} request(s), ${result.ab.failures.length} failed`);
    for (const failure of result.ab.failures.slice(0, 5)) out.line(`  failed: task ${failure.taskId} (${failure.arm}): ${failure.message}`);
    const view = runView({ result, current: start.text, summary: '', model: info.modelName, tasks: info.tasks, taskSetHash: info.taskSetHash, finished: new Date().toISOString() });
    for (const line of candidateLines(view.candidates)) out.line(line);
    out.line();
    let summary = outcomeLine(result);
    let code = 0;
    if (result.outcome === 'promote' && result.winner) {
      const written = await this.writePrompt(result.winner.text, start, 'Candor: promote prompt');
      if (written.ok) {
        summary += `. Written to ${PROMPT_FILE} and saved.`;
      } else {
        code = 1;
        summary += `. Not written: ${written.reason}.`;
        // The registry recorded the promotion before the write; say that it never took effect.
        if (result.baselineVersion) {
          await (await this.registry()).rollback(result.baselineVersion).catch((err: unknown) => this.deps.log.warn(`prompt registry: ${errorText(err)}`));
          summary += ' The registry records it as withdrawn.';
        }
      }
    }
    out.line(summary);
    this.deps.log.info(`prompt evolution ${result.run}: ${summary}`);
    this.lastRun = { ...view, summary };
    if (result.outcome === 'promote' || result.outcome === 'near-miss') this.review.show();
    return code;
  }

  private async rollbackPrompt(): Promise<void> {
    const registry = await this.registry();
    const versions = await registry.versions();
    const current = await this.readPrompt();
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
        detail: `${view.created} · ${firstLine(version.text)}`,
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
    if (pick.history) {
      this.review.show();
      return;
    }
    if (pick.versionId) await this.restore(pick.versionId);
  }

  /** Makes a registry version's text the workspace prompt again, recorded as a rollback. */
  private async restore(versionId: string): Promise<void> {
    const registry = await this.registry();
    const target = await registry.version(versionId);
    if (!target) {
      void vscode.window.showWarningMessage(`Candor: no prompt version ${versionId}.`);
      return;
    }
    const labels = new Map((await registry.versions()).map((v, i) => [v.id, `v${i + 1}`]));
    const current = await this.readPrompt();
    if (current.text === target.text) {
      void vscode.window.showInformationMessage(`Candor: ${labels.get(target.id)} is already the prompt in force.`);
      return;
    }
    const written = await this.writePrompt(target.text, current, `Candor: roll back prompt to ${labels.get(target.id) ?? target.id}`);
    if (!written.ok) {
      void this.deps.notify.warn(`Candor: ${written.reason}`);
      return;
    }
    const recorded = await registry.rollback(target.id);
    this.versionIds.clear();
    this.deps.log.info(`prompt rolled back to ${target.id} (new version ${recorded.id})`);
    void vscode.window.showInformationMessage(`Candor: restored ${labels.get(target.id) ?? target.id} in ${PROMPT_FILE}.`);
    void this.review.refresh();
  }

  private async reviewState(): Promise<ReviewState> {
    const current = await this.readPrompt();
    const base = { prompt: { source: current.source }, running: this.running, ...(this.lastRun ? { lastRun: this.lastRun } : {}) };
    try {
      const registry = await this.registry();
      const versions = await registry.versions();
      const views = versionViews(versions, current.text);
      const inForce = views.find((v) => v.inForce)?.id;
      return {
        ...base,
        prompt: { source: current.source, ...(inForce ? { version: inForce } : {}) },
        queue: nearMissViews(await registry.nearMisses(), versions, inForce),
        versions: views,
      };
    } catch (err) {
      return { ...base, queue: [], versions: [], error: `The prompt registry could not be read: ${errorText(err)}` };
    }
  }
}

/** The registry scope of this window: the first workspace folder's id, or the shared one of windows with no folder. */
function registryScope(): string {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  return folder === undefined ? NO_FOLDER_WORKSPACE_ID : workspaceIdFor(folder);
}

function readSettings(): Partial<PromptEvolutionSettings> {
  const c = vscode.workspace.getConfiguration('candor.promptEvolution');
  const keys = ['candidates', 'concurrency', 'maxChangedLines', 'maxDrift', 'minTasks', 'minDiscordant', 'minEffect', 'alpha'] as const;
  return Object.fromEntries(keys.map((key) => [key, c.get<number>(key)]));
}

function firstLine(text: string): string {
  const line = text.split('\n').find((l) => l.trim() !== '') ?? '';
  return line.length > 100 ? `${line.slice(0, 100)}…` : line;
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

