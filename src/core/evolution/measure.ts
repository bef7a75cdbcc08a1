import * as fs from 'node:fs';
import * as path from 'node:path';
import { checkScratchPath, scratchGit, type Scratch, type ScratchGitOptions, type StagingEnv } from './scratchGit';
import { removeNestedRepositories, repositoriesInChange } from './nestedRepos';
import { listTree } from './treeListing';
import { manifestNumber } from '../manifest';

/** `candor.evolution.maxChangedBytes`' default (the manifest's, in bytes). */
export const DEFAULT_MAX_CHANGED_BYTES = manifestNumber('evolution.maxChangedBytes');

export interface ChangeLimits {
  /** Bytes of the files the change adds or rewrites, whole files (what git would store). */
  readonly maxBytes: number;
  /** Changed files; checked before staging too, so that a flood of files is never added. */
  readonly maxFiles?: number;
}

/** A change that was staged and measured. */
export interface ChangeSize {
  readonly staged: true;
  readonly files: number;
  readonly bytes: number;
  /** Added plus deleted lines; a binary file counts as one. */
  readonly lines: number;
  readonly insertions: number;
  readonly deletions: number;
  /** `git diff --stat` of the change, for the record. */
  readonly diffstat: string;
  /** The tree of the whole change, staged: exactly what a commit would hold (its objects are kept apart until keepChange). */
  readonly tree: string;
}

/** A change refused before anything of it reached git: too many bytes or files, or a git repository in it. */
export interface OversizeChange {
  readonly staged: false;
  readonly files: number;
  readonly bytes: number;
  /** The biggest changed paths and their sizes. */
  readonly diffstat: string;
  readonly reason: string;
}

export interface MeasureOptions extends ScratchGitOptions {
  /** The `.git` entries removed after the change phase's commands (GateRunner), beside those found now. */
  readonly planted?: readonly string[];
}

/**
 * Measures what the change phase left in the scratch clone (new files too;
 * ignored files and the dependency folder not), in three steps:
 *
 * 0. Before any git: every `.git` below the clone's top is removed
 *    (nestedRepos.ts). One that git would have reported (in a submodule's
 *    folder, or in a folder it would add) refuses the change, naming it;
 *    one in an ignored folder does not.
 * 1. Before git stores anything: the paths `git status` reports, sized with
 *    `lstat`. Over `limits` the change is refused here, and no blob of it
 *    is ever written.
 * 2. Staged into an index and an object folder of its own beside the clone
 *    (`<scratch>.staged/`, with the clone's objects as alternates), then
 *    `git diff --cached --numstat` against `base`. The clone's object store
 *    does not grow until the change is accepted (keepChange); a discarded
 *    change goes with the next reset.
 */
export async function measureChange(scratch: Scratch, base: string, limits: ChangeLimits = { maxBytes: DEFAULT_MAX_CHANGED_BYTES }, options: MeasureOptions = {}): Promise<ChangeSize | OversizeChange> {
  const repositories = await repositoriesLeft(scratch, base, options);
  if (repositories.length > 0) return { staged: false, files: repositories.length, bytes: 0, diffstat: repositories.map((entry) => ` ${entry}`).join('\n'), reason: repositoriesReason(repositories) };
  const changed = await changedPaths(scratch, limits.maxBytes, options);
  const bytes = changed.reduce((sum, c) => sum + c.bytes, 0);
  const over: string[] = [];
  const unmeasured = changed.find((c) => c.unmeasurable !== undefined);
  // What cannot be measured counts as over the limit, never as nothing.
  if (unmeasured !== undefined) over.push(`${unmeasured.path.length > 200 ? `…${unmeasured.path.slice(-200)}` : unmeasured.path} could not be measured (${unmeasured.unmeasurable}), and counts as over the limit`);
  else if (bytes > limits.maxBytes) over.push(`${bytes} changed bytes (limit ${limits.maxBytes})`);
  if (limits.maxFiles !== undefined && changed.length > limits.maxFiles) over.push(`${changed.length} changed files (limit ${limits.maxFiles})`);
  if (over.length > 0) return { staged: false, files: changed.length, bytes, diffstat: bytesStat(changed), reason: `the change is too big: ${over.join(', ')}` };
  if (changed.length === 0) return { staged: true, files: 0, bytes: 0, lines: 0, insertions: 0, deletions: 0, diffstat: '', tree: (await scratchGit(scratch, ['rev-parse', `${base}^{tree}`], options)).trim() };

  const staging = await stage(scratch, base, options);
  const withStaging = { ...options, staging };
  // --numstat and --stat in one run: the numbers for the limits, git's own stat for the record.
  const output = await scratchGit(scratch, ['diff', '--cached', '--no-renames', '--no-ext-diff', '--no-textconv', '--numstat', '--stat=120', base, '--'], withStaging);
  const counted = countNumstat(output);
  const tree = (await scratchGit(scratch, ['write-tree'], withStaging)).trim();
  return { staged: true, bytes, ...counted, tree };
}

/** The `.git` entries of the change (removed by now), those the commands left before and those found now. */
async function repositoriesLeft(scratch: Scratch, base: string, options: MeasureOptions): Promise<string[]> {
  const removed = [...(options.planted ?? []), ...(await removeNestedRepositories(scratch))];
  if (removed.length === 0) return [];
  return repositoriesInChange(scratch, removed, (await listTree(scratch, base, options)).gitlinks, options);
}

function repositoriesReason(entries: readonly string[]): string {
  const named = entries.slice(0, 5).join(', ') + (entries.length > 5 ? ` and ${entries.length - 5} more` : '');
  return `the change holds a git repository (${named}): a .git folder or file that a command left in a submodule's folder or in a folder git would add. Candor removed it (its git never enters a repository the model could have made), and commits nothing of this change`;
}

/** Undefined when the change fits, else the reason it is too big. */
export function tooBig(size: ChangeSize, maxLines: number, maxFiles: number): string | undefined {
  const over: string[] = [];
  if (size.lines > maxLines) over.push(`${size.lines} changed lines (limit ${maxLines})`);
  if (size.files > maxFiles) over.push(`${size.files} changed files (limit ${maxFiles})`);
  return over.length === 0 ? undefined : `the change is too big: ${over.join(', ')}`;
}

/** `<dataDir>/scratch/<repo-id>.staged`: the index and new objects of the change being measured. Outside the clone: the gate cannot see it. */
export function stagingDir(scratch: Scratch): string {
  return `${checkScratchPath(scratch)}.staged`;
}

/**
 * The variables that make a scratch git command see the staged change: its
 * index, its new objects, and the clone's objects beneath. Pass them as
 * `staging` to read the change's `tree` before keepChange (a diff of it).
 */
export function stagingEnv(scratch: Scratch): StagingEnv {
  const staged = stagingDir(scratch);
  return {
    GIT_INDEX_FILE: path.join(staged, 'index'),
    GIT_OBJECT_DIRECTORY: path.join(staged, 'objects'),
    GIT_ALTERNATE_OBJECT_DIRECTORIES: path.join(checkScratchPath(scratch), '.git', 'objects'),
  };
}

/**
 * Moves the staged change's objects into the clone, so that a commit can
 * be made of `tree`: call it only for a change that ships, just before
 * shipChange.
 */
export async function keepChange(scratch: Scratch): Promise<void> {
  const from = path.join(stagingDir(scratch), 'objects');
  const to = path.join(checkScratchPath(scratch), '.git', 'objects');
  for (const entry of await fs.promises.readdir(from, { withFileTypes: true }).catch(() => [])) {
    // Loose objects live in two-hex-digit folders; a large add may write a pack.
    if (!entry.isDirectory() || !(/^[0-9a-f]{2}$/.test(entry.name) || entry.name === 'pack')) continue;
    await fs.promises.mkdir(path.join(to, entry.name), { recursive: true });
    for (const file of await fs.promises.readdir(path.join(from, entry.name))) {
      const target = path.join(to, entry.name, file);
      if (fs.existsSync(target)) continue;
      await fs.promises.rename(path.join(from, entry.name, file), target);
    }
  }
  await discardStaging(scratch);
}

/** Removes a staged change and its objects (every reset does). */
export async function discardStaging(scratch: Scratch): Promise<void> {
  await fs.promises.rm(stagingDir(scratch), { recursive: true, force: true });
}

/**
 * A fresh index of `base` (the clone's own, copied for its stat data, then
 * read from `base`), with everything the work tree holds added; new objects
 * go to the staging folder only.
 */
async function stage(scratch: Scratch, base: string, options: ScratchGitOptions): Promise<StagingEnv> {
  const dir = checkScratchPath(scratch);
  await discardStaging(scratch);
  const staging = stagingEnv(scratch);
  await fs.promises.mkdir(staging.GIT_OBJECT_DIRECTORY, { recursive: true, mode: 0o700 });
  await fs.promises.copyFile(path.join(dir, '.git', 'index'), staging.GIT_INDEX_FILE).catch(() => undefined);
  await scratchGit(scratch, ['read-tree', '-m', base], { ...options, staging });
  await scratchGit(scratch, ['add', '--all'], { ...options, staging });
  return staging;
}

interface ChangedPath {
  readonly path: string;
  readonly bytes: number;
  /** Why it could not be measured (too deep, unreadable): then it is over any limit. */
  readonly unmeasurable?: string;
}

/**
 * What `git status` says changed (untracked files included, ignored not),
 * each with the bytes it would store: a file's size, a symlink's target
 * length, a nested folder's files (summed with lstat, never followed, and
 * no further than just past `stopAbove`); 0 for a deletion.
 */
async function changedPaths(scratch: Scratch, stopAbove: number, options: ScratchGitOptions): Promise<ChangedPath[]> {
  const dir = checkScratchPath(scratch);
  const status = await scratchGit(scratch, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=all'], options);
  const found: ChangedPath[] = [];
  let total = 0;
  for (const entry of status.split('\0')) {
    if (entry.length < 4) continue;
    const relative = entry.slice(3).replace(/\/$/, '');
    const size = await sizeOf(path.join(dir, relative), Math.max(0, stopAbove - total));
    total += size.bytes;
    found.push({ path: relative, ...size });
  }
  return found;
}

/**
 * A changed path's bytes; a folder's summed, no further than just past
 * `stopAbove`. A path that is gone is 0 (a deletion); one that cannot be
 * read (a path past PATH_MAX, 25 folders of 200 characters deep; a folder
 * the model made unreadable) is unmeasurable, never 0.
 */
async function sizeOf(file: string, stopAbove: number): Promise<{ bytes: number; unmeasurable?: string }> {
  let stat: fs.Stats;
  try {
    stat = await fs.promises.lstat(file);
  } catch (error) {
    return gone(error) ? { bytes: 0 } : { bytes: 0, unmeasurable: errorCode(error) };
  }
  if (!stat.isDirectory()) return { bytes: stat.isFile() || stat.isSymbolicLink() ? stat.size : 0 };
  let total = 0;
  const pending = [file];
  try {
    while (pending.length > 0 && total <= stopAbove) {
      const current = pending.pop() as string;
      for (const entry of await fs.promises.readdir(current, { withFileTypes: true }).catch((error: unknown) => (gone(error) ? [] : Promise.reject(error)))) {
        const full = path.join(current, entry.name);
        if (entry.isDirectory()) pending.push(full);
        else if (entry.isFile() || entry.isSymbolicLink()) total += (await fs.promises.lstat(full).catch((error: unknown) => (gone(error) ? undefined : Promise.reject(error))))?.size ?? 0;
      }
    }
  } catch (error) {
    return { bytes: total, unmeasurable: errorCode(error) };
  }
  return { bytes: total };
}

function gone(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

function errorCode(error: unknown): string {
  return (error as NodeJS.ErrnoException | undefined)?.code ?? String(error);
}

function bytesStat(changed: readonly ChangedPath[]): string {
  const biggest = [...changed].sort((a, b) => b.bytes - a.bytes).slice(0, 20);
  const lines = biggest.map((c) => ` ${c.path} | ${c.bytes} bytes`);
  if (changed.length > biggest.length) lines.push(` … and ${changed.length - biggest.length} more`);
  lines.push(` ${changed.length} file(s) changed, ${changed.reduce((sum, c) => sum + c.bytes, 0)} bytes`);
  return lines.join('\n');
}

function countNumstat(output: string): Omit<ChangeSize, 'staged' | 'bytes' | 'tree'> {
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  let binary = 0;
  const stat: string[] = [];
  for (const line of output.split('\n')) {
    const match = /^(-|\d+)\t(-|\d+)\t/.exec(line);
    if (match === null) {
      if (line.trim() !== '') stat.push(line);
      continue;
    }
    files++;
    if (match[1] === '-') binary++;
    else {
      insertions += Number(match[1]);
      deletions += Number(match[2]);
    }
  }
  return { files, lines: insertions + deletions + binary, insertions, deletions, diffstat: stat.join('\n') };
}
