import * as path from 'node:path';
import * as vscode from 'vscode';
import { realPathLenient, isInside } from '../../core/realPath';

/**
 * Files by their real path, as Candor keeps them (proposals, the view of a
 * folder), and by the path the editor knows them by. A folder opened
 * through a symlinked path names its documents by that path, and a
 * document opened by the real path would be a second one for the same file.
 */

/** The real path of a file document (`file` scheme), else undefined. */
export function realFileOf(document: vscode.TextDocument): string | undefined {
  return document.uri.scheme === 'file' ? realPathLenient(document.uri.fsPath) : undefined;
}

/** The editor's URI for the file at real path `file`: its open document's, else under the workspace folder as it was opened, else the path itself. */
export function editorUri(file: string): vscode.Uri {
  const open = vscode.workspace.textDocuments.find((document) => document.uri.scheme === 'file' && (document.uri.fsPath === file || realFileOf(document) === file));
  if (open) return open.uri;
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    if (folder.uri.scheme !== 'file') continue;
    const real = realPathLenient(folder.uri.fsPath);
    if (real !== folder.uri.fsPath && isInside(real, file)) return vscode.Uri.joinPath(folder.uri, ...path.relative(real, file).split(path.sep));
  }
  return vscode.Uri.file(file);
}
