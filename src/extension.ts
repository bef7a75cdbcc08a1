import * as vscode from 'vscode';
import { createServices, flushWrites } from './host/services';

/** Thin on purpose: build the services, register what they contribute, return. */
export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(createServices(context));
}

/** Everything is disposed through context.subscriptions; session records still queued are written before the host goes (docs/architecture.md, "Sessions"). */
export function deactivate(): Promise<void> {
  return flushWrites();
}
