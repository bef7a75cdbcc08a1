import * as vscode from 'vscode';
import type { HostMessage } from '../../protocol/chat';
import type { Logger } from '../../core/log';
import type { SecretSet } from '../../core/redact';
import { ViewRedaction } from '../../core/chat/viewRedaction';
import { Disposable } from '../platform/lifecycle';
import { safePreview, webviewPage } from '../platform/webviewPage';
import { MessageRouter, type MessageHandlers } from './router';

/**
 * The chat webview view (`candor.chat`). It renders what the host posts and
 * hands what the user does to `router`, where each feature handles its own
 * messages; it holds no state the host cannot rebuild.
 */
export class ChatView extends Disposable implements vscode.WebviewViewProvider {
  static readonly id = 'candor.chat';
  /** Features register the handlers of the messages they own here. */
  readonly router: MessageRouter;
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly redaction: ViewRedaction;
  private readonly becameReady = this.register(new vscode.EventEmitter<void>());
  /** The webview (re)started and said `ready`: each feature posts what it shows. */
  readonly onDidBecomeReady = this.becameReady.event;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly log: Logger,
    secrets: SecretSet,
  ) {
    super();
    this.redaction = new ViewRedaction(secrets);
    this.router = new MessageRouter(log, safePreview);
    this.router.register('chat view', this.messageHandlers());
    this.register(vscode.window.registerWebviewViewProvider(ChatView.id, this, { webviewOptions: { retainContextWhenHidden: true } }));
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = this.html(view.webview, dist);
    this.register(view.webview.onDidReceiveMessage((raw: unknown) => void this.router.route(raw)));
    this.register(view.onDidDispose(() => {
      this.view = undefined;
      this.ready = false;
    }));
  }

  /**
   * Posts now, or — before the webview said ready — drops it: `ready` triggers
   * a full `init`. Every message is redacted first, a streamed reply on its
   * accumulated text (docs/architecture.md, "Secrets"); the redaction keeps
   * its state even while nothing is posted.
   */
  post(message: HostMessage): void {
    const redacted: HostMessage[] = this.redaction.messages(message);
    if (!this.view || !this.ready) return;
    for (const m of redacted) void this.view.webview.postMessage(m);
  }

  /** The view's own messages: it is ready, or one of its buttons runs a command (from a fixed list). */
  private messageHandlers(): MessageHandlers<'chat view'> {
    return {
      ready: () => {
        this.ready = true;
        this.log.trace('chat view ready');
        this.becameReady.fire();
      },
      runCommand: async (message) => {
        await vscode.commands.executeCommand(message.command);
      },
    };
  }

  async reveal(): Promise<void> {
    if (this.view) this.view.show(true);
    else await vscode.commands.executeCommand(`${ChatView.id}.focus`);
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    return webviewPage(webview, dist, {
      title: 'Candor',
      script: 'webview.js',
      style: 'webview.css',
      // The toolkit applies one empty inline style; its hash (of "") allows exactly that and nothing else.
      extraStyleSources: ["'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"],
      body: `<header>
  <div class="header-row"><span id="provider"></span><span id="header-actions"></span></div>
  <div class="header-row"><span id="gauge" aria-live="polite"></span></div>
  <div class="header-row"><span id="git"></span></div>
  <div class="header-row"><span id="session-title"></span></div>
</header>
<main id="chat-view">
  <div id="untrusted" hidden>This workspace is not trusted: Candor chats, but its file tools, evolution runs and workspace settings that send your key or run commands are off. Trust the workspace to turn them on.</div>
  <section id="welcome" hidden aria-label="Welcome">
    <h2>Welcome to Candor</h2>
    <p>No provider is configured, so you are talking to the <strong>offline demo</strong>: scripted replies, not a model. It runs inside VS Code and needs no network.</p>
    <p>Try: “list files” (a tool call), “reply without usage” (the gauge warns), or <code>/rant</code> followed by a complaint.</p>
    <p>To use a real model, set <code>candor.baseUrl</code> (any OpenAI-compatible endpoint) and <code>candor.model</code>, then run <em>Candor: Set API Key</em> (or set <code>OPENAI_API_KEY</code>).</p>
  </section>
  <details id="rants-panel"><summary id="rants-summary">Rants</summary><div id="rants-body"></div></details>
  <div id="transcript" role="log" aria-label="Conversation" aria-live="polite" tabindex="0"></div>
  <div id="composer">
    <textarea id="input" aria-label="Message Candor" placeholder="Message Candor (Enter to send, Shift+Enter for a new line, /rant to complain)"></textarea>
    <div id="composer-actions"></div>
  </div>
</main>
<section id="drift-view" hidden aria-label="Drift">
  <div id="drift-back"></div>
  <div id="drift-body"></div>
</section>`,
    });
  }
}
