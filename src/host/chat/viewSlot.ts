import type * as vscode from 'vscode';
import type { HostMessage } from '../../protocol/chat';
import { DisposableStore } from '../platform/lifecycle';

/** What the slot uses of a webview view VS Code resolved. */
export type ResolvedView = Pick<vscode.WebviewView, 'onDidDispose' | 'show'> & {
  readonly webview: Pick<vscode.Webview, 'onDidReceiveMessage' | 'postMessage'>;
};

/**
 * The chat's one live webview view and its listeners. VS Code resolves the
 * view anew when it is moved or opened again; the view before is then done
 * with: its listeners are disposed at once, so a message or a close it sends
 * late reaches nothing, and a view's close disposes its own listeners
 * (docs/architecture.md, "Subscriptions").
 */
export class ViewSlot implements vscode.Disposable {
  private current: { readonly view: ResolvedView; readonly listeners: DisposableStore } | undefined;
  private ready = false;

  /** `onMessage`: each message of the live view, as it comes. */
  constructor(private readonly onMessage: (raw: unknown) => void) {}

  /** The view VS Code resolved last; not ready until it says so. */
  attach(view: ResolvedView): void {
    this.release();
    const listeners = new DisposableStore();
    this.current = { view, listeners };
    listeners.add(view.webview.onDidReceiveMessage((raw: unknown) => this.onMessage(raw)));
    listeners.add(view.onDidDispose(() => {
      if (this.current?.view === view) this.release();
    }));
  }

  /** The live view said `ready`. */
  markReady(): void {
    if (this.current) this.ready = true;
  }

  /** The view, while there is one. */
  get view(): ResolvedView | undefined {
    return this.current?.view;
  }

  /** A view is there and said ready: what is posted reaches it. */
  get live(): boolean {
    return this.current !== undefined && this.ready;
  }

  /** Posts to the live view; before it said ready, or with none, nothing. */
  post(messages: readonly HostMessage[]): void {
    if (!this.current || !this.ready) return;
    for (const m of messages) void this.current.view.webview.postMessage(m);
  }

  dispose(): void {
    this.release();
  }

  private release(): void {
    this.current?.listeners.dispose();
    this.current = undefined;
    this.ready = false;
  }
}
