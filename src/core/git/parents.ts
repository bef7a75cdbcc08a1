import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitGuardError, classifyGitFailure } from './errors';
import { realOrResolved } from '../realPath';

/**
 * Repositories above a workspace folder (docs/architecture.md, "Git"). Git
 * looks for `.git` in the folder and then in every folder above it, so a
 * workspace folder inside a larger repository would show that repository's
 * files — files outside the folder, which the file tools refuse to read.
 * The guard stops git's search at the folder (`GIT_CEILING_DIRECTORIES` set
 * to its parent: git ignores a ceiling equal to the folder itself) unless the
 * user allows parent repositories.
 */

export type ParentFolderRule = 'always' | 'never';

/** The folder git may not search in or above, for a folder being opened; undefined when parent repositories are allowed. */
export function ceilingFor(folder: string, rule: ParentFolderRule): string | undefined {
  if (rule === 'always') return undefined;
  const parent = path.dirname(folder);
  // At a root (`/`, `C:\`) there is nothing above to exclude.
  return parent === folder ? undefined : parent;
}

/**
 * The nearest folder above `folder` holding a `.git` entry (folder or file),
 * found by looking at the disk only: no git runs. Undefined when there is none.
 */
export function parentRepository(folder: string): string | undefined {
  let current = realOrResolved(path.resolve(folder));
  for (;;) {
    const parent = path.dirname(current);
    if (parent === current) return undefined;
    current = parent;
    if (exists(path.join(current, '.git'))) return current;
  }
}

/** A not-a-repo failure says so when a repository above the folder was left closed on purpose. */
export function explainNotARepo(err: unknown, folder: string, rule: ParentFolderRule): GitGuardError {
  const failure = classifyGitFailure(err, folder);
  if (failure.kind !== 'not-a-repo' || rule !== 'never') return failure;
  const parent = parentRepository(folder);
  if (parent === undefined) return failure;
  return new GitGuardError('not-a-repo', `${folder} is not a git repository; the repository above it (${parent}) was not opened (openRepositoryInParentFolders is "never")`, failure.detail);
}

/** The same folder (compared as the platform does: case-insensitively on Windows, where git prints `C:/…`). */
export function samePath(a: string, b: string): boolean {
  return path.relative(a, b) === '';
}

function exists(target: string): boolean {
  try {
    fs.lstatSync(target);
    return true;
  } catch {
    return false;
  }
}
