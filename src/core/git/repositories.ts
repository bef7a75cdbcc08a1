import { GitGuardError, classifyGitFailure } from './errors';
import { ReadOnlyGit, type GuardOptions } from './guard';
import { parentRepository } from './parents';

export type RepositoryEntry =
  | { readonly folder: string; readonly status: 'repo'; readonly repo: ReadOnlyGit }
  /**
   * `error.kind` says why: `not-a-repo`, `git-missing`, `corrupt`, `failed`.
   * `parent`: a repository above the folder that was not opened because
   * `openRepositoryInParentFolders` is `never` (found without running git).
   */
  | { readonly folder: string; readonly status: 'no-repo'; readonly error: GitGuardError; readonly parent?: string };

/**
 * One entry per workspace folder, in order. Folders in the same repository
 * share one guard (and so one dirty state). No folders, no entries: the host
 * says that a window without a folder has no git features. Every folder
 * counts as untrusted for finding git: none of them may provide the binary.
 */
export async function findRepositories(folders: readonly string[], options: GuardOptions = {}): Promise<RepositoryEntry[]> {
  const byRoot = new Map<string, ReadOnlyGit>();
  const entries: RepositoryEntry[] = [];
  const opening: GuardOptions = { ...options, untrustedRoots: [...(options.untrustedRoots ?? []), ...folders] };
  for (const folder of folders) {
    try {
      const opened = await ReadOnlyGit.open(folder, opening);
      const repo = byRoot.get(opened.root) ?? opened;
      byRoot.set(repo.root, repo);
      entries.push({ folder, status: 'repo', repo });
    } catch (err) {
      const error = classifyGitFailure(err, folder);
      const parent = error.kind === 'not-a-repo' && (options.openRepositoryInParentFolders ?? 'never') === 'never' ? parentRepository(folder) : undefined;
      entries.push(parent === undefined ? { folder, status: 'no-repo', error } : { folder, status: 'no-repo', error, parent });
    }
  }
  return entries;
}
