import * as vscode from 'vscode';
import type { Notifier } from './notify';

/**
 * The one way Candor registers a command: a command that throws is logged
 * with its stack and shown, redacted, with a Show Log button
 * (`Notifier.failed`), never left as an unhandled rejection.
 */
export function registerCommand(id: string, run: (...args: unknown[]) => unknown, notify: Notifier): vscode.Disposable {
  return vscode.commands.registerCommand(id, async (...args: unknown[]) => {
    try {
      await run(...args);
    } catch (err) {
      notify.failed(id, err);
    }
  });
}
