import { GitGuardError, classifyGitFailure } from './errors';
import { ReadOnlyGit, type GuardOptions } from './guard';

export type RepositoryEntry =
  | { readonly folder: string; readonly status: 'repo'; readonly repo: ReadOnlyGit }
  /** `error.kind` says why: `not-a-repo`, `git-missing`, `corrupt`, `failed`. */
  | { readonly folder: string; readonly status: 'no-repo'; readonly error: GitGuardError };

/**
 * One entry per workspace folder, in order. Folders in the same repository
 * share one guard (and so one dirty state). No folders, no entries: the host
 * says that a window without a folder has no git features.
 */
export async function findRepositories(folders: readonly string[], options: GuardOptions = {}): Promise<RepositoryEntry[]> {
  const byRoot = new Map<string, ReadOnlyGit>();
  const entries: RepositoryEntry[] = [];
  for (const folder of folders) {
    try {
      const opened = await ReadOnlyGit.open(folder, options);
      const repo = byRoot.get(opened.root) ?? opened;
      byRoot.set(repo.root, repo);
      entries.push({ folder, status: 'repo', repo });
    } catch (err) {
      entries.push({ folder, status: 'no-repo', error: classifyGitFailure(err, folder) });
    }
  }
  return entries;
}
