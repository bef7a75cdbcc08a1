import type * as vscode from 'vscode';
import { window } from 'vscode';
import { InputValues } from '../../core/mcp/inputValues';
import type { McpServerDefinition } from '../../core/mcp/types';
import type { ExpandResult } from '../../core/mcp/variables';

/**
 * `${input:<id>}` in VS Code: asked in an input box (masked for a
 * password), kept in SecretStorage once the server's start is confirmed
 * (core/mcp/inputValues.ts).
 */
export function mcpInputs(secrets: vscode.SecretStorage): InputValues {
  return new InputValues(
    { get: async (key) => secrets.get(key), store: async (key, value) => secrets.store(key, value) },
    async (server, input, id) =>
      window.showInputBox({
        title: `MCP server "${server}": ${input?.description ?? id}`,
        prompt: `${input?.description ?? `A value for \${input:${id}}`} (kept in VS Code's secret storage once you confirm the server's start)`,
        password: input?.password === true,
        value: input?.default,
        ignoreFocusOut: true,
      }),
  );
}

/** Expands a server; one that cannot start forgets what was typed for it. */
export async function expandKeepingInputs(inputs: InputValues, def: McpServerDefinition, expand: () => Promise<ExpandResult>): Promise<ExpandResult> {
  let result: ExpandResult;
  try {
    result = await expand();
  } catch (err) {
    inputs.forget(def.source, def.name);
    throw err;
  }
  if (!result.ok) inputs.forget(def.source, def.name);
  return result;
}

/** Asks to confirm a server's start; what was typed for it is stored when confirmed, forgotten otherwise. */
export async function confirmKeepingInputs(inputs: InputValues, def: McpServerDefinition, confirm: () => Promise<boolean>): Promise<boolean> {
  let confirmed = false;
  try {
    confirmed = await confirm();
  } finally {
    if (confirmed) await inputs.confirmed(def.source, def.name);
    else inputs.forget(def.source, def.name);
  }
  return confirmed;
}
