import * as vscode from 'vscode';
import type { Logger } from '../../core/log';
import { redactingLogger, type SecretSet } from '../../core/redact';

/**
 * The one log: a LogOutputChannel named "Candor". Every line is redacted
 * before the channel gets it (docs/architecture.md, "Secrets"); the channel
 * itself is handed out only to show it.
 */
export function createLog(secrets: SecretSet): { channel: vscode.LogOutputChannel; logger: Logger } {
  const channel = vscode.window.createOutputChannel('Candor', { log: true });
  const logger = redactingLogger({
    trace: (m) => channel.trace(m),
    info: (m) => channel.info(m),
    warn: (m) => channel.warn(m),
    error: (m) => channel.error(m),
  }, secrets);
  return { channel, logger };
}
