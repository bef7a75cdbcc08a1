import * as vscode from 'vscode';
import type { HostMessage } from '../../protocol/chat';
import type { Logger } from '../../core/log';
import type { SecretSet } from '../../core/redact';
import { ViewRedaction } from '../../core/chat/viewRedaction';
import { Disposable } from '../platform/lifecycle';
import { safePreview, webviewPage } from '../platform/webviewPage';
import { MessageRouter, type MessageHandlers } from './router';
import { CHAT_BODY } from './chatPage';
import { ViewSlot } from './viewSlot';

/** globalState: the chat was shown on a first run. */
const FIRST_RUN_KEY = 'candor.chatShownOnFirstRun';
/** `<publisher>.<name>#<walkthrough id>` of the manifest's walkthrough. */
const WALKTHROUGH = 'candor.candor#candor.start';

/**
 * The chat webview view (`candor.chat`). It renders what the host posts and
 * hands what the user does to `router`, where each feature handles its own
 * messages; it holds no state the host cannot rebuild.
 */
export class ChatView extends Disposable implements vscode.WebviewViewProvider {
  static readonly id = 'candor.chat';
  /** Features register the handlers of the messages they own here. */
  readonly router: MessageRouter;
  /** The live webview view, its listeners, and whether it said ready. */
  private readonly slot: ViewSlot;
  /** A command showed the view before its webview said ready: the message box takes the focus once it does. */
  private focusWhenReady = false;
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
    this.slot = this.register(new ViewSlot((raw) => void this.router.route(raw)));
    this.router.register('chat view', this.messageHandlers());
    this.register(vscode.window.registerWebviewViewProvider(ChatView.id, this, { webviewOptions: { retainContextWhenHidden: true } }));
  }

  /** VS Code shows the view, the first time or anew (moved, opened again): this one replaces the one before. */
  resolveWebviewView(view: vscode.WebviewView): void {
    this.slot.attach(view);
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = this.html(view.webview, dist);
  }

  /**
   * Posts now, or — before the webview said ready — drops it: `ready` triggers
   * a full `init`. Every message is redacted first, a streamed reply on its
   * accumulated text (docs/architecture.md, "Secrets"); the redaction keeps
   * its state even while nothing is posted.
   */
  post(message: HostMessage): void {
    this.slot.post(this.redaction.messages(message));
  }

  /** The view's own messages: it is ready, or one of its buttons runs a command (from a fixed list). */
  private messageHandlers(): MessageHandlers<'chat view'> {
    return {
      ready: () => {
        this.slot.markReady();
        this.log.trace('chat view ready');
        this.becameReady.fire();
        if (this.focusWhenReady) this.focusInput();
      },
      runCommand: async (message) => {
        await vscode.commands.executeCommand(message.command);
      },
    };
  }

  /** Shows the chat with the cursor in the message box, as every command that shows it does. */
  async reveal(): Promise<void> {
    if (this.slot.view) this.slot.view.show(false);
    else await vscode.commands.executeCommand(`${ChatView.id}.focus`);
    this.focusInput();
  }

  /**
   * The first activation after install shows the chat once, so that a new
   * user finds it; the flag is set first, so a user who closes it never
   * sees it open by itself again. Its walkthrough opens beside it, behind
   * the chat's focus, as VS Code opens an extension's walkthrough when it is
   * installed from the Extensions view (an install from the command line,
   * as `npm start` does, opens none), and under the same setting: so Help:
   * Welcome shows "Get started with Candor" first, not VS Code's own. The
   * setting is machine-scoped: in a remote window (code-server) the
   * extension reads the remote machine's value.
   */
  async showOnFirstRun(state: vscode.Memento): Promise<void> {
    if (state.get<boolean>(FIRST_RUN_KEY)) return;
    await state.update(FIRST_RUN_KEY, true);
    const walkthrough = vscode.workspace.getConfiguration('workbench.welcomePage').get<boolean>('walkthroughs.openOnInstall', true);
    this.log.info(`first run: showing the chat${walkthrough ? ' and the walkthrough' : ''}`);
    if (walkthrough) {
      await vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH, { toSide: false, inactive: true }).then(undefined, (err: unknown) => {
        this.log.warn(`first run: the walkthrough did not open: ${String(err)}`);
      });
    }
    await this.reveal();
  }

  private focusInput(): void {
    if (!this.slot.live) {
      this.focusWhenReady = true;
      return;
    }
    this.focusWhenReady = false;
    this.post({ type: 'focus' });
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    return webviewPage(webview, dist, {
      title: 'Candor',
      script: 'webview.js',
      style: 'webview.css',
      // The toolkit applies one empty inline style; its hash (of "") allows exactly that and nothing else.
      extraStyleSources: ["'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"],
      body: CHAT_BODY,
    });
  }
}
