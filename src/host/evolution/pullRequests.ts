import * as vscode from 'vscode';
import { followRecordedCi, openPullRequestRuns, previewPullRequest, pushAndOpen, readCiCulprit, readRuns, type PullRequestContext, type PullRequestPreview } from '../../core/evolution';
import type { CiCulpritResult } from '../../core/github/ciHistory';
import type { Logger } from '../../core/log';
import type { SecretSet } from '../../core/redact';
import { errorMessage } from '../../core/errorMessage';
import type { Settings } from '../settings/config';
import type { Notifier } from '../platform/notify';
import { Disposable } from '../platform/lifecycle';
import { vscodeUnsavedBuffers } from '../git/workspaceGit';
import type { GitHubTokens } from '../github/tokens';
import { agentRepository, refusedUntrusted } from './agentRepository';

export interface PullRequestDeps {
  readonly dataDir: string;
  readonly settings: Settings;
  readonly secrets: SecretSet;
  readonly tokens: GitHubTokens;
  readonly log: Logger;
  readonly notify: Notifier;
  /** A pull request or its CI changed: the rant list refreshes. */
  readonly changed: () => void;
}

const PUSH = 'Push and Open';
const PREVIEW_SCHEME = 'candor-pull-request';
/** Lines of the pull request's body the dialog shows; the whole text is in the preview document beside it. */
const DIALOG_BODY_LINES = 6;

/**
 * Open Pull Request (docs/architecture.md, "Evolution"): always the user's
 * click, after a preview of what goes out; then the pull request's CI is
 * followed as a second gate, while the window is open and again from the
 * recorded pull request on the next activation.
 */
export class PullRequests extends Disposable {
  private readonly following = new Map<string, AbortController>();
  private readonly previews = new Map<string, string>();
  private readonly previewChanged = this.register(new vscode.EventEmitter<vscode.Uri>());

  constructor(private readonly deps: PullRequestDeps) {
    super();
    this.register({ dispose: () => this.following.forEach((follow) => follow.abort()) });
    this.register(vscode.workspace.registerTextDocumentContentProvider(PREVIEW_SCHEME, {
      onDidChange: this.previewChanged.event,
      provideTextDocumentContent: (uri) => this.previews.get(uri.path) ?? '',
    }));
  }

  /** Follows the CI of every recorded pull request whose CI had not finished (trusted windows only; nothing asks). */
  resume(): void {
    if (!vscode.workspace.isTrusted) return;
    const repository = this.deps.settings.read().repository.trim();
    if (repository === '') return;
    for (const run of openPullRequestRuns(this.deps.dataDir)) this.follow(repository, run.run, false);
  }

  async open(branch?: string): Promise<void> {
    if (refusedUntrusted(this.deps.log, 'opening a pull request runs git and pushes a branch')) return;
    const repository = agentRepository(this.deps.settings);
    if (repository === undefined) return;
    const chosen = branch ?? (await this.pickShipped());
    if (!chosen) return;
    const context = this.context(repository, true);
    try {
      const preview = await progress('Candor: preparing the pull request…', () => previewPullRequest(context, chosen));
      if (preview.existing) {
        await this.opened(`A pull request for ${chosen} is already open: #${preview.existing.number}.`, preview.existing.url);
        return;
      }
      await this.showPreview(preview);
      const answer = await vscode.window.showWarningMessage(`Push ${chosen} to ${context.remote} and open a pull request?`, { modal: true, detail: previewText(preview, DIALOG_BODY_LINES) }, PUSH);
      if (answer !== PUSH) return;
      const result = await progress(`Candor: pushing ${chosen} and opening the pull request…`, () => pushAndOpen(context, preview));
      this.deps.log.info(`pull request ${result.url} for ${chosen} (${result.existed ? 'already open' : 'opened'}; pushed the ${result.pushed === 'user-branch' ? "agent repository's branch as it is, with your commits" : 'evolution branch'})`);
      this.deps.changed();
      const extra = result.pushed === 'user-branch' ? ' The branch was pushed as it is in the agent repository, with the commits you added.' : '';
      void this.opened(`Pull request #${result.number} ${result.existed ? 'was already open' : 'is open'}.${extra} Candor follows its CI.`, result.url);
      this.follow(repository, preview.run, true);
    } catch (err) {
      this.deps.log.warn(`open pull request for ${chosen}: ${errorMessage(err)}`);
      void this.deps.notify.warn(`Candor did not open a pull request for ${chosen}: ${errorMessage(err)}`);
    }
  }

  /**
   * CI's culprit on the agent repository's default branch, read when an
   * evolution run starts (the run reverts it first). Undefined, with the
   * reason in the log, when GitHub cannot be read (no GitHub remote, no
   * token): the run goes on without it.
   */
  async ciCulprit(repository: string): Promise<CiCulpritResult | undefined> {
    try {
      return await readCiCulprit(this.context(repository, false));
    } catch (err) {
      this.deps.log.info(`evolution: CI history not read: ${errorMessage(err)}`);
      return undefined;
    }
  }

  /** `Candor: Set GitHub Token`: for `candor.github.apiUrl`, else for github.com. */
  private follow(repository: string, run: string, interactive: boolean): void {
    if (this.following.has(run)) return;
    const follow = new AbortController();
    this.following.set(run, follow);
    const timeoutMs = this.deps.settings.read().pullRequests.ciTimeoutMinutes * 60_000;
    void followRecordedCi(this.context(repository, interactive), run, { timeoutMs, signal: follow.signal, onState: () => this.deps.changed() })
      .then((ci) => {
        this.deps.log.info(`CI of run ${run}: ${ci.state}`);
        this.deps.changed();
      })
      .catch((err: unknown) => this.deps.log.warn(`CI of run ${run} is not followed: ${errorMessage(err)}`))
      .finally(() => this.following.delete(run));
  }

  private context(repository: string, interactive: boolean): PullRequestContext {
    const { pullRequests } = this.deps.settings.read();
    return {
      dataDir: this.deps.dataDir,
      repository,
      remote: pullRequests.remote,
      ...(pullRequests.apiUrl ? { apiUrl: pullRequests.apiUrl } : {}),
      ...(pullRequests.baseRepository ? { baseRepository: pullRequests.baseRepository } : {}),
      token: (apiUrl) => this.deps.tokens.get(apiUrl, interactive),
      unsaved: vscodeUnsavedBuffers,
      secrets: this.deps.secrets,
      onWait: (ms, why) => void vscode.window.setStatusBarMessage(`Candor: GitHub asks to wait ${Math.ceil(ms / 1000)} s (${why})`, ms),
    };
  }

  private async pickShipped(): Promise<string | undefined> {
    const open = readRuns(this.deps.dataDir).filter((r) => r.branch && !r.pr && (r.outcome === 'shipped' || r.outcome === 'revert-prepared')).reverse();
    if (open.length === 0) {
      void vscode.window.showInformationMessage('No shipped evolution branch waits for a pull request. Run "Candor: Run Evolution".');
      return undefined;
    }
    const pick = await vscode.window.showQuickPick(
      open.map((r) => ({ label: r.branch ?? '', description: `${r.outcome} · ${r.commit?.slice(0, 12) ?? ''}`, detail: r.reason })),
      { title: 'Candor: Open Pull Request', placeHolder: 'The branch to push and open a pull request for (a preview comes first)' },
    );
    return pick?.label;
  }

  /** Everything that goes out, read-only, beside the dialog: the commit message and the whole body. */
  private async showPreview(preview: PullRequestPreview): Promise<void> {
    const uri = vscode.Uri.from({ scheme: PREVIEW_SCHEME, path: `/${preview.branch}.md` });
    this.previews.set(uri.path, previewText(preview));
    this.previewChanged.fire(uri);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(document, 'markdown');
    await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true });
  }

  private async opened(message: string, url: string): Promise<void> {
    const answer = await vscode.window.showInformationMessage(message, 'Open on GitHub');
    if (answer) await vscode.env.openExternal(vscode.Uri.parse(url));
  }
}

function progress<T>(title: string, task: () => Promise<T>): Promise<T> {
  return Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, task));
}

/**
 * What goes out, redacted, before anything is pushed: a push to a public
 * remote cannot be undone. `bodyLines`: the dialog's short form, which
 * points to the whole text.
 */
function previewText(preview: PullRequestPreview, bodyLines?: number): string {
  const { repository, target } = preview;
  const where = `${repository.owner}/${repository.repo} (${repository.public ? 'public: anyone can read what is pushed' : 'private'}${repository.fork ? `, a fork of ${target.owner}/${target.repo}` : ''})`;
  return [
    `Remote: ${preview.remoteUrl}`,
    preview.pushRedirects.length > 0 ? `The push goes elsewhere: the repository's ${preview.pushRedirects.join(', ')} sends it to another URL.` : '',
    `Repository: ${where}`,
    `Branch: ${preview.branch} → ${target.owner}/${target.repo}:${preview.base}`,
    preview.handOff === 'needed' ? 'The branch is first taken into the agent repository (as Take Evolution Branch does).' : '',
    preview.handOff === 'taken-with-user-commits' ? "The agent repository's branch has commits you added: it is pushed as it is." : '',
    'Pushed with your own git credentials, never forced, without tags; pre-push hooks do not run.',
    '',
    ...(bodyLines === undefined ? ['Commit message:', preview.commitMessage.trim(), ''] : []),
    `Pull request: ${preview.title}`,
    ...(bodyLines === undefined ? [preview.body.trim()] : shortBody(preview.body, bodyLines)),
  ].filter((line, i, all) => line !== '' || all[i - 1] !== '').join('\n');
}

function shortBody(body: string, lines: number): string[] {
  const all = body.trim().split('\n');
  if (all.length <= lines) return all;
  return [...all.slice(0, lines), `… (${all.length - lines} more lines, and the commit message: in the preview beside this dialog)`];
}
