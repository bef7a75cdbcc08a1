import * as vscode from 'vscode';
import { safePreview, webviewPage } from '../platform/webviewPage';
import type { Logger } from '../../core/log';
import { parseReviewMessage, type ReviewHostMessage, type ReviewState } from '../../protocol/review';
import { Disposable } from '../platform/lifecycle';
import type { Notifier } from '../platform/notify';
import { errorMessage } from '../../core/errorMessage';

/** What the panel shows and what its buttons do; the feature behind it owns both. */
export interface ReviewSource {
  state(): Promise<ReviewState>;
  retest(candidateId: string): Promise<void>;
  dismiss(candidateId: string): Promise<void>;
  promoteAnyway(candidateId: string): Promise<void>;
  restore(versionId: string): Promise<void>;
}

/**
 * "Candor: Prompt Evolution": an editor panel with the last run (each
 * candidate's diff, its six checks with their numbers, the outcome), the
 * review queue of near-misses, and the registry's versions with their
 * lineage. It holds no state the host cannot rebuild: on `ready` and after
 * every change the host posts the whole (small) review state.
 */
export class PromptReviewPanel extends Disposable {
  static readonly viewType = 'candor.promptReview';
  private panel: vscode.WebviewPanel | undefined;
  private ready = false;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly source: ReviewSource,
    private readonly log: Logger,
    private readonly notify: Notifier,
  ) {
    super();
    this.register({ dispose: () => this.panel?.dispose() });
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal(undefined, true);
      void this.refresh();
      return;
    }
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    const panel = vscode.window.createWebviewPanel(
      PromptReviewPanel.viewType,
      'Candor: Prompt Evolution',
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: true },
      { enableScripts: true, localResourceRoots: [dist] },
    );
    this.panel = panel;
    this.ready = false;
    panel.webview.html = this.html(panel.webview, dist);
    const subscriptions = [
      panel.webview.onDidReceiveMessage((raw: unknown) => this.receive(raw)),
      panel.onDidDispose(() => {
        this.panel = undefined;
        this.ready = false;
        for (const s of subscriptions) s.dispose();
      }),
    ];
  }

  /** Posts the current state if the panel is open and ready. */
  async refresh(): Promise<void> {
    if (!this.panel || !this.ready) return;
    try {
      const message: ReviewHostMessage = { type: 'state', state: await this.source.state() };
      await this.panel?.webview.postMessage(this.notify.redactDeep(message));
    } catch (err) {
      this.log.warn(`prompt review: ${errorMessage(err)}`);
    }
  }

  private receive(raw: unknown): void {
    const message = parseReviewMessage(raw);
    if (!message) {
      this.log.warn(`ignored a malformed message from the prompt review panel: ${safePreview(raw)}`);
      return;
    }
    const fail = (err: unknown): void => {
      this.log.error(`prompt review ${message.type}: ${errorMessage(err)}`);
      void this.notify.error(`Candor: ${errorMessage(err)}`);
    };
    switch (message.type) {
      case 'ready':
        this.ready = true;
        void this.refresh();
        break;
      case 'refresh':
        void this.refresh();
        break;
      case 'retest':
        void this.source.retest(message.candidateId).catch(fail);
        break;
      case 'dismiss':
        void this.source.dismiss(message.candidateId).catch(fail);
        break;
      case 'promoteAnyway':
        void this.source.promoteAnyway(message.candidateId).catch(fail);
        break;
      case 'restore':
        void this.source.restore(message.versionId).catch(fail);
        break;
    }
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    return webviewPage(webview, dist, {
      title: 'Candor: Prompt Evolution',
      script: 'promptReview.js',
      style: 'promptReview.css',
      body: `<main id="review" aria-label="Prompt evolution">
  <header id="review-header"><h1>Prompt evolution</h1><span id="prompt-source"></span><span id="actions"></span></header>
  <div id="error" role="alert" hidden></div>
  <section id="last-run" aria-label="Last run"></section>
  <section id="queue" aria-label="Review queue"></section>
  <section id="versions" aria-label="Prompt history"></section>
</main>`,
    });
  }
}
