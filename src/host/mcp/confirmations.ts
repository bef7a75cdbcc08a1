import * as path from 'node:path';
import * as vscode from 'vscode';
import type { McpServerDefinition } from '../../core/mcp/types';

const WORKSPACE_KEY = 'candor.mcp.confirmed';
const USER_KEY = 'candor.mcp.userConfirmed';
/** Most hashes kept; the oldest go first. */
const MAX_KEPT = 500;

/** The line every confirmation ends with: an allow-list of variables is not a sandbox. */
const RIGHTS = 'A server runs with your rights: it can read what you can, the extension host\'s environment included. Its environment holds only a short allow-list plus what its definition names.';

/**
 * Whether a server may start (docs/architecture.md, "MCP"). A workspace
 * server asks once per definition, by its hash (as written and as
 * expanded), in a modal dialog naming it, with Start and Cancel; the answer
 * is kept in the workspace's state. Each of the user's own servers asks
 * once too (a user may have turned some off in Copilot), remembered for
 * every workspace. The servers ask one at a time (McpServers), since VS
 * Code shows one modal dialog at a time.
 */
export class McpConfirmations {
  constructor(
    private readonly workspaceState: vscode.Memento,
    private readonly globalState: vscode.Memento,
  ) {}

  confirm(def: McpServerDefinition, hash: string, lines: readonly string[]): Promise<boolean> {
    if (def.source.kind === 'user') {
      if (this.kept(this.globalState, USER_KEY).includes(hash)) return Promise.resolve(true);
      return this.askUser(def, hash, lines);
    }
    if (this.kept(this.workspaceState, WORKSPACE_KEY).includes(hash)) return Promise.resolve(true);
    return this.askWorkspace(def, hash, lines);
  }

  private async askWorkspace(def: McpServerDefinition, hash: string, lines: readonly string[]): Promise<boolean> {
    const file = def.source.kind === 'workspace' ? path.relative(def.source.folder, def.source.file) || def.source.file : 'your settings';
    const answer = await vscode.window.showWarningMessage(
      `Start the MCP server "${def.name}" that this workspace defines (${file})?`,
      { modal: true, detail: [...lines, '', RIGHTS].join('\n') },
      'Start',
    );
    if (answer !== 'Start') return false;
    await this.keep(this.workspaceState, WORKSPACE_KEY, hash);
    return true;
  }

  private async askUser(def: McpServerDefinition, hash: string, lines: readonly string[]): Promise<boolean> {
    const answer = await vscode.window.showInformationMessage(
      `Start the MCP server "${def.name}" of your user settings?`,
      { modal: true, detail: [...lines, '', 'If you turned it off elsewhere (in Copilot Chat, say), Cancel and turn it off for Candor with "Candor: MCP Servers".', RIGHTS].join('\n') },
      'Start',
    );
    if (answer !== 'Start') return false;
    await this.keep(this.globalState, USER_KEY, hash);
    return true;
  }

  private kept(state: vscode.Memento, key: string): string[] {
    const value = state.get<unknown>(key);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  }

  private async keep(state: vscode.Memento, key: string, hash: string): Promise<void> {
    await state.update(key, [...this.kept(state, key).filter((h) => h !== hash), hash].slice(-MAX_KEPT));
  }
}
