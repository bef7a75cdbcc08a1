import * as path from 'node:path';
import { realPathLenient, isInside } from '../realPath';

/**
 * The port through which the host reports editor buffers with unsaved
 * changes. The VS Code host backs it with the dirty `file:` text documents;
 * the CLI has none (`noUnsavedBuffers`).
 */
export interface UnsavedBufferSource {
  /** Absolute file-system paths of documents with unsaved changes. */
  unsavedFiles(): readonly string[];
}

export const noUnsavedBuffers: UnsavedBufferSource = { unsavedFiles: () => [] };

/**
 * The unsaved files that lie in this repository's work tree, as
 * repository-relative `/` paths, sorted. Files inside the git directory (a
 * commit message open in the editor) are not work-tree files and do not count.
 * Paths are compared after resolving symlinks, because the editor may hold a
 * path through a link that git reports resolved.
 */
export function unsavedInWorktree(files: readonly string[], root: string, gitDir: string): string[] {
  const realRoot = realPathLenient(root);
  const realGitDir = realPathLenient(gitDir);
  const inside = new Set<string>();
  for (const file of files) {
    if (!path.isAbsolute(file)) continue;
    const real = realPathLenient(file);
    if (isInside(realGitDir, real)) continue;
    if (!isInside(realRoot, real) || real === realRoot) continue;
    inside.add(path.relative(realRoot, real).split(path.sep).join('/'));
  }
  return [...inside].sort();
}
