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
  /** From `workspaceIdFor` (src/core/workspaceId.ts). */
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
