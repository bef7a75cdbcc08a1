import * as vscode from 'vscode';
import { createServices } from './host/services';

/** Thin on purpose: build the services, register what they contribute, return. */
export function activate(context: vscode.ExtensionContext): void {
  context.subscriptions.push(createServices(context));
}

export function deactivate(): void {
  // Everything is disposed through context.subscriptions.
}
