import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { folderHolding } from '../../core/realPath';

/**
 * The data folder: `candor.dataDir`, or the extension's global storage. A
 * folder inside a workspace folder (compared by real path, so a symlink
 * cannot smuggle it in) is refused, so Candor's own files never make the
 * user's repository dirty.
 */
export function resolveDataDir(configured: string, globalStorage: vscode.Uri): { dir: string; refused?: string } {
  const fallback = globalStorage.fsPath;
  if (!configured) return ensure(fallback);
  const dir = path.resolve(configured.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => ({ name: f.name, path: f.uri.fsPath }));
  const holder = folderHolding(dir, folders);
  if (holder !== undefined) {
    return {
      ...ensure(fallback),
      refused: `candor.dataDir (${dir}) is inside the workspace folder "${holder.name}"; Candor uses ${fallback} instead. Pick a folder outside the workspace.`,
    };
  }
  return ensure(dir);
}

function ensure(dir: string): { dir: string } {
  fs.mkdirSync(dir, { recursive: true });
  return { dir };
}
