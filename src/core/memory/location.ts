import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { MemoryError } from './errors';

/**
 * Where a workspace's memory file lives. By default it sits in Candor's data
 * folder, so the agent's notes never make the repository dirty;
 * `candor.memory.path` may point elsewhere at the user's choice.
 */

export interface MemoryPathOptions {
  /** Candor's data folder (`candor.dataDir` or the extension's global storage). */
  readonly dataDir: string;
  /** From `workspaceIdFor`. */
  readonly workspaceId: string;
  /** `candor.memory.path`: absolute, or relative to the first workspace folder; blank = default. */
  readonly configuredPath?: string;
  readonly firstFolder?: string;
}

export const MEMORY_FILE_NAME = 'memory.md';

export function memoryPath(options: MemoryPathOptions): string {
  const configured = options.configuredPath?.trim() ?? '';
  if (configured === '') return path.join(options.dataDir, 'memory', options.workspaceId, MEMORY_FILE_NAME);
  if (path.isAbsolute(configured)) return path.normalize(configured);
  if (options.firstFolder === undefined) {
    throw new MemoryError('path-relative-without-folder', `candor.memory.path "${configured}" is relative, but no workspace folder is open`);
  }
  return path.resolve(options.firstFolder, configured);
}

/**
 * A stable, readable id for a workspace folder: its sanitized name (for the
 * human browsing the data folder) plus a short hash of its full path (so two
 * folders with the same name never share a memory).
 */
export function workspaceIdFor(folderPath: string): string {
  const full = trimTrailingSeparators(path.resolve(folderPath));
  const hash = createHash('sha256').update(full, 'utf8').digest('hex').slice(0, 12);
  const name = path.basename(full).toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return `${name || 'workspace'}-${hash}`;
}

function trimTrailingSeparators(p: string): string {
  const root = path.parse(p).root;
  let out = p;
  while (out.length > root.length && (out.endsWith('/') || out.endsWith(path.sep))) out = out.slice(0, -1);
  return out;
}
