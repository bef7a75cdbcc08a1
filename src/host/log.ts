import * as vscode from 'vscode';
import type { Logger } from '../core/log';

/** The one log: a LogOutputChannel named "Candor". Never given an API key. */
export function createLog(): { channel: vscode.LogOutputChannel; logger: Logger } {
  const channel = vscode.window.createOutputChannel('Candor', { log: true });
  const logger: Logger = {
    trace: (m) => channel.trace(m),
    info: (m) => channel.info(m),
    warn: (m) => channel.warn(m),
    error: (m) => channel.error(m),
  };
  return { channel, logger };
}
