import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { ensureDataDir, isDataDirError, type GuardedFolder } from '../../core/settings/dataDirRules';

/**
 * The data folder: `candor.dataDir`, or the extension's global storage.
 * The setting must pass the rules of `core/settings/dataDirRules` (not `/`,
 * not the home, no overlap with a workspace folder or the agent's
 * repository, compared by real path; no part of its path that another user
 * owns or can write); a missing folder is created with mode 0700. A refused
 * setting falls back to the global storage, with the message naming
 * `candor.dataDir`. The global storage is VS Code's own choice and is used
 * as it is (created 0700 when missing).
 */
export function resolveDataDir(configured: string, globalStorage: vscode.Uri, agentRepository = ''): { dir: string; refused?: string } {
  const fallback = globalStorage.fsPath;
  if (!configured) return { dir: ensureFallback(fallback) };
  const dir = path.resolve(configured.replace(/^~(?=$|\/)/, os.homedir()));
  const guarded: GuardedFolder[] = (vscode.workspace.workspaceFolders ?? []).map((f) => ({ label: `the workspace folder "${f.name}"`, path: f.uri.fsPath }));
  if (agentRepository.trim() !== '') guarded.push({ label: "the agent's repository (candor.evolution.repository)", path: path.resolve(agentRepository) });
  try {
    return { dir: ensureDataDir(dir, { home: os.homedir(), uid: typeof process.getuid === 'function' ? process.getuid() : undefined, guarded }) };
  } catch (err) {
    if (!isDataDirError(err)) throw err;
    return { dir: ensureFallback(fallback), refused: `${err.message} Candor uses ${fallback} instead.` };
  }
}

function ensureFallback(dir: string): string {
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}
