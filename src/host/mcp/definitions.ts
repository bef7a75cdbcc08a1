import * as path from 'node:path';
import * as vscode from 'vscode';
import { readBounded } from '../../core/boundedRead';
import { errorMessage } from '../../core/errorMessage';
import { parseMcpConfig, parseMcpConfigText, type McpConfig } from '../../core/mcp/config';
import type { McpInput, McpServerDefinition, McpSource } from '../../core/mcp/types';

/** Largest `.vscode/mcp.json` read. */
const MAX_CONFIG_BYTES = 1024 * 1024;

/** The definitions in force, and the inputs of the configuration each came from. */
export interface ReadDefinitions {
  readonly servers: readonly McpServerDefinition[];
  readonly problems: readonly string[];
  readonly inputsOf: (def: McpServerDefinition) => readonly McpInput[];
}

/**
 * MCP servers as VS Code 1.100 defines them (docs/architecture.md, "MCP"):
 * the user's `mcp` setting, read as the user wrote it (`inspect().globalValue`:
 * `getConfiguration('mcp')` would merge a workspace's value into it), and
 * in a trusted window each folder's `.vscode/mcp.json` and the workspace's
 * own `mcp` setting, both workspace definitions. Servers the user turned off
 * for this workspace are left out.
 */
export async function readDefinitions(turnedOff: ReadonlySet<string>): Promise<ReadDefinitions> {
  const configs: McpConfig[] = [parseMcpConfig(vscode.workspace.getConfiguration().inspect('mcp')?.globalValue, { kind: 'user' })];
  if (vscode.workspace.isTrusted) configs.push(...onePerName(await workspaceConfigs()));
  const inputs = new Map<McpServerDefinition, readonly McpInput[]>();
  for (const config of configs) for (const server of config.servers) inputs.set(server, config.inputs);
  return {
    servers: configs.flatMap((c) => c.servers).filter((s) => !turnedOff.has(s.name)),
    problems: configs.flatMap((c) => c.problems),
    inputsOf: (def) => inputs.get(def) ?? [],
  };
}

/**
 * VS Code reads a folder's `.vscode/mcp.json` into the `mcp` setting's
 * workspace value too: a server the file defines shows up again there. Of
 * the workspace's definitions, the first of each name is kept (the file's,
 * then the folder setting's, then the workspace's).
 */
function onePerName(configs: readonly McpConfig[]): McpConfig[] {
  const seen = new Set<string>();
  return configs.map((config) => ({
    ...config,
    servers: config.servers.filter((server) => {
      const key = `${server.source.kind === 'workspace' ? server.source.folder : ''}\0${server.name}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    }),
  }));
}

async function workspaceConfigs(): Promise<McpConfig[]> {
  const configs: McpConfig[] = [];
  const folders = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file');
  for (const folder of folders) {
    const file = path.join(folder.uri.fsPath, '.vscode', 'mcp.json');
    const source: McpSource = { kind: 'workspace', folder: folder.uri.fsPath, file };
    try {
      const bytes = await readBounded(file, MAX_CONFIG_BYTES, '.vscode/mcp.json');
      if (bytes !== undefined) configs.push(parseMcpConfigText(bytes.toString('utf8'), source));
    } catch (err) {
      configs.push({ servers: [], inputs: [], problems: [`${file}: ${errorMessage(err)}`] });
    }
    // A folder's own `mcp` setting is a workspace definition like mcp.json, with the same rules.
    const own = vscode.workspace.getConfiguration(undefined, folder.uri).inspect('mcp')?.workspaceFolderValue;
    if (own !== undefined) configs.push(parseMcpConfig(own, { kind: 'workspace', folder: folder.uri.fsPath, file: path.join(folder.uri.fsPath, '.vscode', 'settings.json') }));
  }
  const shared = vscode.workspace.getConfiguration().inspect('mcp')?.workspaceValue;
  const first = folders[0];
  if (shared !== undefined && first !== undefined) {
    const file = vscode.workspace.workspaceFile?.scheme === 'file' ? vscode.workspace.workspaceFile.fsPath : path.join(first.uri.fsPath, '.vscode', 'settings.json');
    configs.push(parseMcpConfig(shared, { kind: 'workspace', folder: first.uri.fsPath, file }));
  }
  return configs;
}
