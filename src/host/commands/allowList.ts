import type * as vscode from 'vscode';
import { prefixCovers } from '../../core/commands/commandText';

const KEY = 'candor.commands.alwaysAllow';
/** Most prefixes Always Allow keeps for a workspace; the oldest go first. */
const MAX_PREFIXES = 200;

/**
 * What lets a command run without a click: a prefix the user chose with
 * Always Allow, kept in this workspace's state (never in settings, which a
 * repository could write), or one of `candor.commands.autoApprove` from the
 * user's own settings.
 */
export class CommandAllowList {
  constructor(
    private readonly state: vscode.Memento,
    private readonly configured: () => readonly string[],
  ) {}

  /** What covers the line (for the chat: `Always Allow "npm test"`), or undefined. */
  covering(command: string): string | undefined {
    const remembered = this.remembered().find((prefix) => prefixCovers(prefix, command));
    if (remembered !== undefined) return `Always Allow ${JSON.stringify(remembered)}`;
    const configured = this.configured().find((prefix) => prefixCovers(prefix, command));
    return configured !== undefined ? `candor.commands.autoApprove ${JSON.stringify(configured)}` : undefined;
  }

  async remember(prefix: string): Promise<void> {
    const kept = this.remembered().filter((p) => p !== prefix);
    await this.state.update(KEY, [...kept, prefix].slice(-MAX_PREFIXES));
  }

  private remembered(): string[] {
    const value = this.state.get<unknown>(KEY);
    return Array.isArray(value) ? value.filter((p): p is string => typeof p === 'string' && p.trim() !== '') : [];
  }
}
