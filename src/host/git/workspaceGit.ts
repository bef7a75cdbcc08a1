import * as path from 'node:path';
import * as vscode from 'vscode';
import { findRepositories, readOnlyReason, type GuardOptions, type ReadOnlyGit, type RepositoryEntry, type UnsavedBufferSource } from '../../core/git';
import type { Logger } from '../../core/log';
import type { GitInfo } from '../../protocol/chat';
import { Disposable } from '../platform/lifecycle';
import { errorMessage } from '../../core/errorMessage';
import { realPathLenient } from '../../core/realPath';

/** Unsaved editor buffers of files on disk: the host side of the dirty-buffer port. */
export const vscodeUnsavedBuffers: UnsavedBufferSource = {
  unsavedFiles: () => vscode.workspace.textDocuments.filter((d) => d.isDirty && d.uri.scheme === 'file').map((d) => d.uri.fsPath),
};

/** The header's line while the window is in Restricted Mode: no git process runs before trust. */
export const UNTRUSTED_GIT_INFO: GitInfo = {
  available: false,
  summary: 'Git: off until you trust this workspace (Restricted Mode runs no git).',
  readOnly: true,
  reasons: [],
};

/**
 * The workspace's repositories, seen through the read-only guard only, and
 * the git line of the chat header. It re-reads when files are saved, edited
 * or changed on disk (debounced), so typing into an editor without saving
 * turns Candor read-only and saving turns it back.
 *
 * In an untrusted window it runs no git at all, not even discovery (a
 * repository's config can name programs that git would run): it starts when
 * the user grants trust.
 */
export class WorkspaceGit extends Disposable {
  private entries: Promise<RepositoryEntry[]> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private last: GitInfo = { available: false, summary: 'Git: reading…', readOnly: false, reasons: [] };

  constructor(
    private readonly log: Logger,
    private readonly onChange: (info: GitInfo) => void,
    /** The guard's options as the settings say now (secrets, parent-folder rule). */
    private readonly guardOptions: () => GuardOptions,
  ) {
    super();
    const later = (): void => this.schedule();
    this.register(vscode.workspace.onDidGrantWorkspaceTrust(() => {
      this.entries = undefined;
      later();
    }));
    this.register(vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration('candor.git')) return;
      this.entries = undefined;
      later();
    }));
    this.register(vscode.workspace.onDidChangeWorkspaceFolders(() => {
      this.entries = undefined;
      later();
    }));
    this.register(vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.uri.scheme === 'file') later();
    }));
    this.register(vscode.workspace.onDidSaveTextDocument(later));
    this.register(vscode.workspace.onDidCloseTextDocument(later));
    const watcher = this.register(vscode.workspace.createFileSystemWatcher('**/*'));
    this.register(watcher.onDidChange(later));
    this.register(watcher.onDidCreate(later));
    this.register(watcher.onDidDelete(later));
    this.register({ dispose: () => clearTimeout(this.timer) });
    later();
  }

  get info(): GitInfo {
    return this.last;
  }

  async repository(folder?: string): Promise<ReadOnlyGit | undefined> {
    const entries = await this.repositories();
    // By its path, its real path (a folder opened through a symlinked path), or its name.
    const entry = folder ? entries.find((e) => e.folder === folder || e.folder.endsWith(`/${folder}`) || (path.isAbsolute(folder) && realPathLenient(e.folder) === realPathLenient(folder))) : entries[0];
    return entry?.status === 'repo' ? entry.repo : undefined;
  }

  repositories(): Promise<RepositoryEntry[]> {
    if (!vscode.workspace.isTrusted) return Promise.resolve([]);
    this.entries ??= findRepositories((vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath), this.guardOptions());
    return this.entries;
  }

  /** Re-reads now; the result is also what the chat header shows. */
  async refresh(): Promise<GitInfo> {
    if (!vscode.workspace.isTrusted) return this.publish(UNTRUSTED_GIT_INFO);
    const folders = vscode.workspace.workspaceFolders ?? [];
    if (folders.length === 0) {
      return this.publish({ available: false, summary: 'No folder is open: git features are off.', readOnly: true, reasons: [] });
    }
    const entries = await this.repositories();
    const reasons: string[] = [];
    const parts: string[] = [];
    let readOnly = false;
    let anyRepo = false;
    for (const entry of entries) {
      const name = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(entry.folder))?.name ?? entry.folder;
      if (entry.status === 'no-repo') {
        parts.push(`${name}: ${noRepoLine(entry)}`);
        continue;
      }
      anyRepo = true;
      try {
        const state = await entry.repo.dirtyState(vscodeUnsavedBuffers);
        if (state.dirty) {
          readOnly = true;
          const line = readOnlyReason(state) ?? 'dirty';
          reasons.push(`${name}: ${line}`);
          const unsaved = state.reasons.filter((r) => r.where === 'unsaved').length;
          const disk = state.reasons.length - unsaved;
          parts.push(`${name}: dirty (${[disk ? `${disk} on disk` : '', unsaved ? `${unsaved} unsaved` : ''].filter(Boolean).join(', ')})`);
        } else parts.push(`${name}: clean`);
      } catch (err) {
        parts.push(`${name}: git failed (${errorMessage(err)})`);
        readOnly = true;
      }
    }
    return this.publish({ available: anyRepo, summary: `Git: ${parts.join(' · ')}`, readOnly, reasons });
  }

  private publish(info: GitInfo): GitInfo {
    const changed = JSON.stringify(info) !== JSON.stringify(this.last);
    this.last = info;
    if (changed) {
      if (info.readOnly && info.reasons.length > 0) this.log.info(info.reasons.join(' | '));
      this.onChange(info);
    }
    return info;
  }

  private schedule(): void {
    if (!vscode.workspace.isTrusted) {
      this.publish(UNTRUSTED_GIT_INFO);
      return;
    }
    clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.refresh().catch((err: unknown) => this.log.warn(`git state: ${String(err)}`));
    }, 300);
  }
}

/** Why a folder has no repository, for the header. */
function noRepoLine(entry: Extract<RepositoryEntry, { status: 'no-repo' }>): string {
  if (entry.error.kind === 'git-missing') return 'git is not installed';
  if (entry.parent !== undefined) {
    return `not a git repository; the repository above it (${entry.parent}) was not opened — set candor.git.openRepositoryInParentFolders to "always" to use it`;
  }
  return 'not a git repository';
}
