import * as vscode from 'vscode';
import type { RequestTrace } from '../../core/chat/conversation';
import { errorMessage } from '../../core/errorMessage';
import type { Logger } from '../../core/log';
import type { PromptSnapshot } from '../../core/prompt/promptFile';
import type { PromptRegistry } from '../../core/promptEvolution/registry';
import { openPromptRegistry, registryFile } from '../../core/promptEvolution/run';
import type { SecretSet } from '../../core/redact';
import { workspaceIdOf } from '../../core/workspaceId';
import type { ReviewState } from '../../protocol/review';
import type { MessageHandlers } from '../chat/router';
import { registerCommand } from '../platform/command';
import { Disposable } from '../platform/lifecycle';
import type { Notifier } from '../platform/notify';
import type { Providers } from '../provider/provider';
import type { Settings } from '../settings/config';
import { WorkspacePromptFile } from './promptFile';
import { PromptReviewPanel } from './promptReview';
import { restorePrompt, rollbackPrompt, type RollbackDeps } from './rollback';
import { dismissCandidate, promoteCandidateAnyway, type NearMissDeps } from './nearMiss';
import { PromptEvolutionTask } from './task';
import { TraceSink } from './traceSink';
import { nearMissViews, versionViews } from './views';

/**
 * Prompt evolution in VS Code: the prompt in force (built in until the
 * workspace has `.candor/prompt.md`, see promptFile.ts), the trace store fed
 * by the chat (traceSink.ts), the `candor-prompt-evolution` task (task.ts),
 * the rollback (rollback.ts), and the review panel. The run itself is the
 * core's `runPromptEvolution`, the same one the CLI runs.
 */

export interface PromptEvolutionDeps {
  readonly extensionUri: vscode.Uri;
  readonly dataDir: string;
  readonly providers: Providers;
  readonly log: Logger;
  readonly notify: Notifier;
  /** The extension host's secrets: evidence, candidates, traces and output are redacted with them. */
  readonly secrets: SecretSet;
  readonly settings: Settings;
}

export class PromptEvolution extends Disposable {
  private opening: Promise<PromptRegistry> | undefined;
  /** The workspace scope `opening` was opened for. */
  private openedScope: string | undefined;
  private readonly prompt: WorkspacePromptFile;
  private readonly traces: TraceSink;
  private readonly task: PromptEvolutionTask;
  private readonly review: PromptReviewPanel;

  constructor(private readonly deps: PromptEvolutionDeps) {
    super();
    this.prompt = new WorkspacePromptFile(deps.log);
    this.traces = new TraceSink(() => this.registry(), deps.log);
    const refresh = (): void => void this.review.refresh();
    this.task = this.register(new PromptEvolutionTask({
      dataDir: deps.dataDir,
      providers: deps.providers,
      promptFile: this.prompt,
      registry: () => this.registry(),
      log: deps.log,
      secrets: deps.secrets,
      settings: () => deps.settings.read(),
      changed: refresh,
      review: () => this.review.show(),
    }));
    const rollback: RollbackDeps = { registry: () => this.registry(), promptFile: this.prompt, log: deps.log, notify: deps.notify, showHistory: () => this.review.show(), changed: refresh };
    const nearMiss: NearMissDeps = { registry: () => this.registry(), promptFile: this.prompt, log: deps.log, notify: deps.notify, running: () => this.task.running, changed: refresh };
    this.review = this.register(new PromptReviewPanel(deps.extensionUri, {
      state: () => this.reviewState(),
      retest: (candidateId) => this.task.start(candidateId),
      dismiss: (candidateId) => dismissCandidate(nearMiss, candidateId),
      promoteAnyway: (candidateId) => promoteCandidateAnyway(nearMiss, candidateId),
      restore: (versionId) => restorePrompt(rollback, versionId),
    }, deps.log, deps.notify));
    this.register(registerCommand('candor.evolvePrompt', () => this.task.start(), deps.notify));
    this.register(registerCommand('candor.rollbackPrompt', () => rollbackPrompt(rollback), deps.notify));
    this.register({ dispose: () => void this.traces.flushed().finally(() => void this.opening?.then((r) => r.close(), () => undefined)) });
  }

  /** The system prompt's own text: `.candor/prompt.md` (its editor buffer if open, else the disk) or the built-in one. */
  currentPrompt(): Promise<PromptSnapshot> {
    return this.prompt.read();
  }

  /** For the chat: records each request in traces.sqlite, tagged with the version of the prompt it was built from. Never throws, never waits. */
  traceSink(): (trace: RequestTrace) => void {
    return (trace) => this.traces.trace(trace);
  }

  /** Thumbs up or down on a reply in the chat view, in the session open there. */
  messageHandlers(currentSession: () => string): MessageHandlers<'prompt evolution'> {
    return {
      feedback: (message) => {
        this.deps.log.info(`feedback ${message.value} on ${message.entryId}`);
        this.traces.feedback(message.entryId, message.value, currentSession());
      },
    };
  }

  /** A rant saved while a session was open: the proposer reads it as evidence. */
  linkRant(rantId: string, session: string | null): void {
    this.traces.linkRant(rantId, session);
  }

  /** Resolves when every queued trace and signal has been written (or given up on). */
  flushed(): Promise<void> {
    return this.traces.flushed();
  }

  /**
   * The registry for this window's workspace: prompt versions and
   * evaluations are kept per workspace (the scope is the first folder's
   * workspace id, as for memory), though every workspace shares the data
   * folder's traces.sqlite. Reopened when the first folder changes.
   */
  registry(): Promise<PromptRegistry> {
    const scope = workspaceIdOf(vscode.workspace.workspaceFolders?.[0]?.uri.fsPath);
    if (this.opening && this.openedScope !== scope) {
      // Closing only frees the cached copy; a run still holding it reloads from disk.
      void this.opening.then((r) => r.close(), () => undefined);
      this.opening = undefined;
    }
    if (!this.opening) {
      this.openedScope = scope;
      const location = {
        file: registryFile(this.deps.dataDir),
        scope,
        // sql.js's wasm ships beside the bundle (dist/sql-wasm.wasm); node_modules is not in the VSIX.
        locateFile: (name: string) => vscode.Uri.joinPath(this.deps.extensionUri, 'dist', name).fsPath,
        secrets: this.deps.secrets,
      };
      const opening: Promise<PromptRegistry> = openPromptRegistry(location, (message) => {
        this.deps.log.warn(message);
        void this.deps.notify.warn(`Candor: ${message}`);
      }).catch((err: unknown) => {
        if (this.opening === opening) this.opening = undefined;
        throw err;
      });
      this.opening = opening;
    }
    return this.opening;
  }

  private async reviewState(): Promise<ReviewState> {
    const current = await this.prompt.read();
    const lastRun = this.task.lastRun;
    const base = { prompt: { source: current.source }, running: this.task.running, ...(lastRun ? { lastRun } : {}) };
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
      return { ...base, queue: [], versions: [], error: `The prompt registry could not be read: ${errorMessage(err)}` };
    }
  }
}
