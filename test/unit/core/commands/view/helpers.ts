import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { ReadOnlyGit } from '../../../../../src/core/git/guard';
import { WorkspaceView, type WorkspaceViewOptions } from '../../../../../src/core/commands/view/workspaceView';
import { git, tempDir } from '../../git/helpers/repo';

export { git, removeTempDirs, repoWith, tempDir, write } from '../../git/helpers/repo';

/** A view of `repo` under a fresh data folder, with the guard opened on it (unless `git: undefined` is asked for). */
export async function viewOf(repo: string, options: Partial<WorkspaceViewOptions> & { withoutGit?: boolean } = {}): Promise<{ view: WorkspaceView; viewDir: string; guard?: ReadOnlyGit }> {
  const viewDir = path.join(tempDir('candor-views-'), 'views', 'ws', path.basename(repo));
  const guard = options.withoutGit === true ? undefined : (options.git ?? (await ReadOnlyGit.open(repo)));
  const view = new WorkspaceView({ root: repo, viewDir, git: guard, ...options });
  return { view, viewDir, guard };
}

export function read(dir: string, rel: string): string | undefined {
  try {
    return fs.readFileSync(path.join(dir, rel), 'utf8');
  } catch {
    return undefined;
  }
}

/** Every file and link under `dir` (not `.git`, not folders), with its content; links as `-> target`. */
export function contents(dir: string, skip: (rel: string) => boolean = () => false): Map<string, string> {
  const out = new Map<string, string>();
  const visit = (rel: string): void => {
    for (const entry of fs.readdirSync(path.join(dir, rel), { withFileTypes: true })) {
      const child = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.name === '.git' || skip(child)) continue;
      const full = path.join(dir, child);
      if (entry.isSymbolicLink()) out.set(child, `-> ${fs.readlinkSync(full)}`);
      else if (entry.isDirectory()) visit(child);
      else out.set(child, fs.readFileSync(full).toString('base64'));
    }
  };
  visit('');
  return out;
}

/**
 * The view holds exactly what git lists for the workspace (tracked and
 * untracked, not ignored) as it is on disk, each overlay's bytes instead of
 * the disk's, and nothing else but empty folders.
 */
export function assertMirrors(repo: string, viewDir: string, overlays: Record<string, string> = {}): void {
  const listed = git(repo, 'ls-files', '-z', '--cached', '--others', '--exclude-standard').split('\0').filter((p) => p !== '');
  const disk = contents(repo);
  const expected = new Map<string, string>();
  for (const rel of listed) {
    const value = disk.get(rel);
    if (value !== undefined) expected.set(rel, value);
  }
  for (const [rel, text] of Object.entries(overlays)) expected.set(rel, Buffer.from(text).toString('base64'));
  assert.deepEqual(sorted(contents(viewDir)), sorted(expected));
}

function sorted(map: Map<string, string>): Array<[string, string]> {
  return [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export function overlay(rel: string, text: string): { path: string; bytes: Uint8Array } {
  return { path: rel, bytes: Buffer.from(text) };
}

/** Paths of `git status --porcelain` (untracked files one by one, renames as two paths). */
export function statusPaths(dir: string): string[] {
  return git(dir, 'status', '--porcelain', '--untracked-files=all', '--no-renames')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.slice(3))
    .sort();
}
