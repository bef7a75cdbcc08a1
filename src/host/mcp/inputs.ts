import type * as vscode from 'vscode';
import { window } from 'vscode';
import type { McpInput, McpSource } from '../../core/mcp/types';

/**
 * `${input:<id>}`: asked once, in an input box (masked for a password), and
 * kept in SecretStorage, per configuration (the user's, or a folder's), so
 * a workspace cannot read what the user typed for their own servers.
 */
export class McpInputs {
  constructor(private readonly secrets: vscode.SecretStorage) {}

  async value(source: McpSource, server: string, input: McpInput | undefined, id: string): Promise<string | undefined> {
    const key = `candor.mcp.input:${source.kind === 'user' ? 'user' : source.folder}:${id}`;
    const stored = await this.secrets.get(key);
    if (stored !== undefined) return stored;
    const typed = await window.showInputBox({
      title: `MCP server "${server}": ${input?.description ?? id}`,
      prompt: `${input?.description ?? `A value for \${input:${id}}`} (kept in VS Code's secret storage)`,
      password: input?.password === true,
      value: input?.default,
      ignoreFocusOut: true,
    });
    if (typed === undefined) return undefined;
    await this.secrets.store(key, typed);
    return typed;
  }

}
