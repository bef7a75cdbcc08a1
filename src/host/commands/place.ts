import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import * as vscode from 'vscode';
import type { CommandPlace } from '../../core/commands/runCommandTool';
import { confine } from '../../core/workspace';

/**
 * The folder a `run_command` call names: a workspace folder's name, or a
 * path inside one (default: the first folder). One that resolves outside
 * its workspace folder, through `..` or a symlink, is refused (confine).
 * Paths are real: the view is mounted at the folder's real path.
 */
export async function commandPlace(folder: string | undefined): Promise<CommandPlace> {
  const roots = (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
  const first = roots[0];
  if (first === undefined) throw new Error('no workspace folder is open, so there is nowhere to run a command');
  const wanted = folder?.trim() ?? '';
  const named = wanted === '' ? first : roots.find((root) => path.basename(root) === wanted);
  if (named !== undefined) {
    const root = await fs.realpath(named);
    return { root, cwd: root, display: path.basename(named) };
  }
  const confined = await confine(roots, wanted);
  const stat = await fs.stat(confined.absolute);
  if (!stat.isDirectory()) throw new Error(`${wanted} is a file; give the folder to run in`);
  return { root: await fs.realpath(confined.root), cwd: confined.absolute, display: `${path.basename(confined.root)}/${path.relative(await fs.realpath(confined.root), confined.absolute).split(path.sep).join('/')}` };
}
