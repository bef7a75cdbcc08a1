import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { AutoCondense } from '../../core/memory/autoCondense';
import { condenseMemory, type CondenseFailure, type CondenseFailureReason, type CondenseOutcome } from '../../core/memory/condense';
import { memoryPath } from '../../core/memory/location';
import { workspaceIdOf } from '../../core/workspaceId';
import { appendEntry, readForPrompt } from '../../core/memory/memory';
import { failed } from '../../core/memory/outcome';
import type { Settings } from '../settings/config';
import type { Notifier } from '../platform/notify';
import { Disposable } from '../platform/lifecycle';
import { registerCommand } from '../platform/command';
import type { Providers } from '../provider/provider';
import { vscodeUnsavedBuffers } from '../git/workspaceGit';
import { errorMessage } from '../../core/errorMessage';

/** Upper bound on the memory that goes into the system prompt (its newest part when larger). */
export const PROMPT_MEMORY_BYTES = 8192;

export interface MemoryDeps {
  readonly dataDir: string;
  readonly settings: Settings;
  readonly providers: Providers;
  readonly log: Logger;
  readonly notify: Notifier;
}

type Trigger = 'manual' | 'automatic';

/** What each refusal means in plain words, and what the user can do next. */
const EXPLAIN: Record<CondenseFailureReason, { readonly why: string; readonly next: string; readonly detail?: true }> = {
  'source-encoding-invalid': {
    why: 'the memory file is not valid UTF-8, so it was not sent to the model.',
    next: 'Open it (Candor: Open Memory), fix or re-save it as UTF-8, then condense again.',
  },
  'source-unsaved': {
    why: 'an editor holds unsaved changes to the memory file; condensing now would overwrite them or be overwritten by them.',
    next: 'Save or revert that editor, then run Candor: Condense Memory again.',
  },
  'source-changed': {
    why: 'another writer changed the memory file (not just appended to it) while the summary was written; the file was left as that writer left it.',
    next: 'Run Candor: Condense Memory again.',
  },
  'source-check-failed': {
    why: 'the memory file was missing or could not be read.',
    next: 'Check that it exists and is readable (Candor: Open Memory), then try again.',
    detail: true,
  },
  'not-smaller': {
    why: 'the summary was not shorter than the memory file, so nothing was replaced.',
    next: 'Nothing to do now; automatic condensing waits until the file has grown by a quarter.',
  },
  'still-growing': {
    why: 'notes kept arriving through every re-check, so nothing was swapped and no note was lost.',
    next: 'Try again when the agent is idle.',
  },
  cancelled: {
    why: 'the condense was cancelled; the memory file is unchanged.',
    next: 'Run Candor: Condense Memory when you want it.',
  },
  'model-failed': {
    why: 'the summary request failed; the memory file is unchanged.',
    next: 'Check the provider (Candor: Show Log), then try again.',
    detail: true,
  },
  'write-failed': {
    why: 'the condensed file could not be written; the memory file is untouched.',
    next: 'Check free space and permissions of its folder, then try again.',
    detail: true,
  },
  busy: {
    why: 'a condense of the memory file is already running.',
    next: 'Wait for it to finish.',
  },
};

/**
 * The workspace memory in VS Code: the `remember` tool's port, the memory in
 * the system prompt, `Candor: Open Memory`, and `Candor: Condense Memory` —
 * by hand or automatically once the file passes `candor.memory.condenseAboveBytes`.
 * One condense at a time; every outcome is shown and logged.
 */
export class MemoryFeature extends Disposable {
  private running: AbortController | undefined;
  private auto: { readonly key: string; readonly policy: AutoCondense } | undefined;
  private lastPromptError = '';

  constructor(private readonly deps: MemoryDeps) {
    super();
    this.register(registerCommand('candor.openMemory', () => this.open(), deps.notify));
    this.register(registerCommand('candor.condenseMemory', () => this.condense('manual'), deps.notify));
    this.register({ dispose: () => this.running?.abort() });
  }

  /** The memory file in force: `candor.memory.path`, or the workspace's file in the data folder. */
  file(): string {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return memoryPath({
      dataDir: this.deps.dataDir,
      // A window with no folder shares its memory with every such window.
      workspaceId: workspaceIdOf(folder),
      configuredPath: this.deps.settings.read().memoryPath,
      firstFolder: folder,
    });
  }

  /** The `remember` tool: appends one dated entry and tells the model so. Errors reach the model as tool errors. */
  async remember(text: string): Promise<string> {
    const file = this.file();
    const bytes = await appendEntry(file, text, new Date());
    this.deps.log.info(`memory: remembered a note (${bytes} bytes) in ${file}`);
    void this.condenseIfDue(file);
    return `Saved to the workspace memory (${bytes} bytes).`;
  }

  /**
   * The memory for the system prompt, at most PROMPT_MEMORY_BYTES. The same
   * bytes while the file does not change; '' (and one log line) when it cannot be read.
   */
  async promptText(): Promise<string> {
    try {
      const text = await readForPrompt(this.file(), PROMPT_MEMORY_BYTES);
      this.lastPromptError = '';
      return text;
    } catch (err) {
      const message = errorMessage(err);
      if (message !== this.lastPromptError) this.deps.log.warn(`memory: left out of the system prompt: ${message}`);
      this.lastPromptError = message;
      return '';
    }
  }

  /** Opens the memory file in an editor, creating it with a one-line header when missing. */
  private async open(): Promise<void> {
    const file = this.file();
    await fs.mkdir(path.dirname(file), { recursive: true });
    try {
      await fs.writeFile(file, '# Candor memory: notes the agent keeps about this workspace\n', { flag: 'wx' });
      this.deps.log.info(`memory: created ${file}`);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    await vscode.window.showTextDocument(vscode.Uri.file(file), { preview: false });
  }

  private async condenseIfDue(file: string): Promise<void> {
    try {
      const policy = this.policyFor(file);
      const size = (await fs.stat(file)).size;
      if (this.running || !policy.shouldCondense(size)) return;
      await this.condense('automatic');
    } catch (err) {
      this.deps.log.error(`memory: automatic condense: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    }
  }

  /** Runs one condense with progress and cancel, then shows its outcome. Never two at once. */
  private async condense(trigger: Trigger): Promise<void> {
    const file = this.file();
    if (this.running) {
      this.show(failed('busy', 'a condense of the memory file is already running'), trigger, file);
      return;
    }
    const controller = new AbortController();
    this.running = controller;
    try {
      this.deps.log.info(`memory: condensing ${file} (${trigger})`);
      const outcome = await vscode.window.withProgress(
        {
          location: vscode.ProgressLocation.Notification,
          title: trigger === 'automatic' ? 'Candor: condensing memory (it passed candor.memory.condenseAboveBytes)' : 'Candor: condensing memory',
          cancellable: true,
        },
        async (progress, token) => {
          const onCancel = token.onCancellationRequested(() => controller.abort());
          try {
            progress.report({ message: `waiting for the summary from ${this.deps.providers.identity().model || 'the model'}…` });
            return await condenseMemory({
              file,
              // The chat's model, whatever it is when the summary is asked for.
              model: this.deps.providers,
              unsavedFiles: () => vscodeUnsavedBuffers.unsavedFiles(),
              signal: controller.signal,
              log: this.deps.log,
            });
          } finally {
            onCancel.dispose();
          }
        },
      );
      const size = await fs.stat(file).then((s) => s.size, () => 0);
      this.policyFor(file).record(outcome, size);
      this.show(outcome, trigger, file);
    } finally {
      this.running = undefined;
    }
  }

  private policyFor(file: string): AutoCondense {
    const threshold = this.deps.settings.read().condenseAboveBytes;
    const key = `${file}\0${threshold}`;
    if (this.auto?.key !== key) this.auto = { key, policy: new AutoCondense(threshold) };
    return this.auto.policy;
  }

  private show(outcome: CondenseOutcome, trigger: Trigger, file: string): void {
    if (outcome.ok) {
      const saved = outcome.beforeBytes - outcome.afterBytes;
      void vscode.window.showInformationMessage(
        `Candor: memory condensed: ${bytes(outcome.beforeBytes)} → ${bytes(outcome.afterBytes)}, ${bytes(saved)} saved ` +
          `(carried ${bytes(outcome.carriedBytes)} appended meanwhile). The previous version is kept as ${path.basename(file)}.bak.`,
      );
      return;
    }
    const text = abortText(outcome, trigger);
    void this.deps.notify.warn(text, 'Open Memory', 'Show Log').then((action) => {
      if (action === 'Open Memory') void vscode.commands.executeCommand('candor.openMemory');
      if (action === 'Show Log') void vscode.commands.executeCommand('candor.showLog');
    });
  }
}

function abortText(outcome: CondenseFailure, trigger: Trigger): string {
  const explain = EXPLAIN[outcome.reason];
  const detail = explain.detail ? ` (${outcome.detail})` : '';
  const what = trigger === 'automatic' ? 'automatic memory condense' : 'memory condense';
  return `Candor: ${what} stopped (${outcome.reason}): ${explain.why}${detail} ${explain.next}`;
}

function bytes(n: number): string {
  return `${n.toLocaleString('en-US')} bytes`;
}
