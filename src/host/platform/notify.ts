import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { errorMessage } from '../../core/errorMessage';
import type { SecretSet } from '../../core/redact';

/**
 * Notifications, redacted: an error message can quote a provider's answer or
 * a command's output, and either may hold the key (docs/architecture.md,
 * "Secrets"). Every feature shows its messages through this one object.
 */
export class Notifier {
  constructor(
    private readonly secrets: SecretSet,
    private readonly log: Logger,
    private readonly channel?: vscode.LogOutputChannel,
  ) {}

  info<T extends string>(text: string, ...actions: T[]): Thenable<T | undefined> {
    return vscode.window.showInformationMessage(this.secrets.redact(text), ...actions);
  }

  warn<T extends string>(text: string, ...actions: T[]): Thenable<T | undefined> {
    return vscode.window.showWarningMessage(this.secrets.redact(text), ...actions);
  }

  error<T extends string>(text: string, ...actions: T[]): Thenable<T | undefined> {
    return vscode.window.showErrorMessage(this.secrets.redact(text), ...actions);
  }

  /** What a command that threw shows: its message, and the stack in the log. */
  failed(what: string, err: unknown): void {
    this.log.error(`${what}: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    void this.error(`Candor: ${errorMessage(err)}`, 'Show Log').then((action) => {
      if (action) this.channel?.show();
    });
  }

  redact(text: string): string {
    return this.secrets.redact(text);
  }

  /** For a webview message: every string inside redacted. */
  redactDeep<T>(value: T): T {
    return this.secrets.redactDeep(value);
  }
}
