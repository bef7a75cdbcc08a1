import { createHash } from 'node:crypto';
import * as path from 'node:path';

/**
 * The one id of a workspace folder, wherever Candor keeps something per
 * workspace in its data folder: the memory (`memory/<id>/`), the prompt
 * registry's scope in traces.sqlite, and evolution's scratch clone
 * (`scratch/<id>/`). Its sanitized name is for the human browsing the data
 * folder; a short hash of the full path keeps two folders with the same name
 * apart.
 */
export function workspaceIdFor(folderPath: string): string {
  const full = trimTrailingSeparators(path.resolve(folderPath));
  const hash = createHash('sha256').update(full, 'utf8').digest('hex').slice(0, 12);
  const name = path.basename(full).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `${name || 'workspace'}-${hash}`;
}

/** The id shared by every window with no folder open. */
export const NO_FOLDER_WORKSPACE_ID = 'no-folder';

/** A window's workspace id: its first folder's, or NO_FOLDER_WORKSPACE_ID. */
export function workspaceIdOf(firstFolder: string | undefined): string {
  return firstFolder === undefined ? NO_FOLDER_WORKSPACE_ID : workspaceIdFor(firstFolder);
}

function trimTrailingSeparators(p: string): string {
  const root = path.parse(p).root;
  let out = p;
  while (out.length > root.length && (out.endsWith('/') || out.endsWith(path.sep))) out = out.slice(0, -1);
  return out;
}
