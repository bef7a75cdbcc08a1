import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';

export class DataDirError extends Error {
  readonly kind = 'inside-workspace';
}

/**
 * The data folder: `candor.dataDir`, or the extension's global storage. A
 * folder inside a workspace folder is refused, so Candor's own files never
 * make the user's repository dirty.
 */
export function resolveDataDir(configured: string, globalStorage: vscode.Uri): { dir: string; refused?: string } {
  const fallback = globalStorage.fsPath;
  if (!configured) return ensure(fallback);
  const dir = path.resolve(configured.replace(/^~(?=$|\/)/, process.env.HOME ?? '~'));
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    const rel = path.relative(folder.uri.fsPath, dir);
    if (rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel))) {
      return {
        ...ensure(fallback),
        refused: `candor.dataDir (${dir}) is inside the workspace folder "${folder.name}"; Candor uses ${fallback} instead. Pick a folder outside the workspace.`,
      };
    }
  }
  return ensure(dir);
}

function ensure(dir: string): { dir: string } {
  fs.mkdirSync(dir, { recursive: true });
  return { dir };
}
