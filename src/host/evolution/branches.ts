import * as vscode from 'vscode';
import { branchDiff, handOff, readRuns } from '../../core/evolution';
import type { Logger } from '../../core/log';
import type { SecretSet } from '../../core/redact';
import type { Settings } from '../settings/config';
import type { Notifier } from '../platform/notify';
import { Disposable } from '../platform/lifecycle';
import { registerCommand } from '../platform/command';
import { vscodeUnsavedBuffers } from '../git/workspaceGit';
import { errorMessage } from '../../core/errorMessage';
import { agentRepository, refusedUntrusted } from './agentRepository';

const DIFF_SCHEME = 'candor-evolution-diff';

export interface BranchDeps {
  readonly dataDir: string;
  readonly settings: Settings;
  readonly log: Logger;
  readonly notify: Notifier;
  /** Kept out of git's environment in the scratch clone and the agent repository. */
  readonly secrets: SecretSet;
}

/** The shipped branches of evolution runs: their diff, read-only, and `Candor: Take Evolution Branch`. */
export class EvolutionBranches extends Disposable {
  private readonly diffs = new Map<string, string>();
  private readonly diffChanged = this.register(new vscode.EventEmitter<vscode.Uri>());

  constructor(private readonly deps: BranchDeps) {
    super();
    this.register(vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, {
      onDidChange: this.diffChanged.event,
      provideTextDocumentContent: (uri) => this.diffs.get(uri.path.replace(/^\//, '').replace(/\.diff$/, '')) ?? '',
    }));
    this.register(registerCommand('candor.handOffBranch', () => this.takeBranch(), deps.notify));
  }

  /** The shipped commit and its diff, read-only, from the scratch clone of the agent's repository. */
  async showDiff(branch: string): Promise<void> {
    if (refusedUntrusted(this.deps.log, 'showing an evolution branch runs git')) return;
    const repository = agentRepository(this.deps.settings);
    if (repository === undefined) return;
    try {
      const content = await branchDiff(this.deps.dataDir, repository, branch, { secrets: this.deps.secrets.values() });
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
    if (refusedUntrusted(this.deps.log, 'taking an evolution branch runs git and writes a branch')) return;
    const repository = agentRepository(this.deps.settings);
    if (repository === undefined) return;
    const chosen = branch ?? (await this.pickShipped(repository));
    if (!chosen) return;
    try {
      const result = await handOff(this.deps.dataDir, repository, chosen, vscodeUnsavedBuffers, { secrets: this.deps.secrets.values() });
      this.deps.log.info(`hand-off: ${result.branch} at ${result.commit} into ${repository}`);
      void vscode.window.showInformationMessage(`Branch ${result.branch} is now in the agent's repository ${repository} (not checked out).`);
    } catch (err) {
      const message = errorMessage(err);
      this.deps.log.warn(`hand-off of ${chosen} refused: ${message}`);
      void this.deps.notify.warn(`Candor did not take ${chosen}: ${message}`);
    }
  }

  private async pickShipped(repository: string): Promise<string | undefined> {
    const shipped = readRuns(this.deps.dataDir).filter((r) => r.branch && (r.outcome === 'shipped' || r.outcome === 'revert-prepared')).reverse();
    if (shipped.length === 0) {
      void vscode.window.showInformationMessage('No evolution run has shipped a branch yet. Run "Candor: Run Evolution".');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      shipped.map((r) => ({ label: r.branch ?? '', description: `${r.outcome} · ${r.commit?.slice(0, 12) ?? ''}`, detail: r.reason })),
      { title: 'Candor: Take Evolution Branch', placeHolder: `Fetch the branch into ${repository} (no checkout; it must be clean)` },
    );
    return pick?.label;
  }
}
