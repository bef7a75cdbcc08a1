import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { WorkspaceToolError } from './errors';
import { isInside } from '../realPath';
import { isKindError } from '../kindError';

export interface ConfinedPath {
  /** The workspace folder it belongs to. */
  readonly root: string;
  /** Real absolute path (symlinks resolved), inside a workspace folder. */
  readonly absolute: string;
  /** How tools print it: relative to its folder, prefixed by the folder's name when there are several. */
  readonly display: string;
}

/**
 * Resolve a path the model gave against the workspace folders, refusing
 * anything that ends up outside them: `..` escapes, absolute paths elsewhere,
 * and symlinks whose target is outside (checked on the real path). Git's own
 * directory is refused too.
 *
 * With several folders, `<folder name>/rest` picks a folder; a plain relative
 * path is looked up in each folder in order and the first that exists wins.
 */
export async function confine(roots: readonly string[], input: string): Promise<ConfinedPath> {
  if (roots.length === 0) throw new WorkspaceToolError('no-folder', 'no workspace folder is open, so there are no files to read');
  if (typeof input !== 'string' || input.includes('\0')) throw new WorkspaceToolError('invalid', 'the path is not a valid string');
  const candidates = lexicalCandidates(roots, input === '' ? '.' : input);
  let lastMissing: WorkspaceToolError | undefined;
  for (const { root, absolute } of candidates) {
    let real: string;
    try {
      real = await fs.realpath(absolute);
    } catch {
      lastMissing = new WorkspaceToolError('not-found', `${input} does not exist in the workspace`);
      continue;
    }
    const realRoots = await Promise.all(roots.map(realOrSelf));
    const owner = realRoots.findIndex((realRoot) => isInside(realRoot, real));
    if (owner === -1) {
      throw new WorkspaceToolError('symlink-outside', `${input} is a symlink (or goes through one) that leads outside the workspace folders, to ${real}`);
    }
    const ownerRoot = roots[owner] ?? root;
    const relative = path.relative(realRoots[owner] ?? ownerRoot, real);
    if (isGitInternal(relative)) throw new WorkspaceToolError('git-internal', `${input} is inside git's own directory; use the git tools instead`);
    return { root: ownerRoot, absolute: real, display: displayPath(roots, ownerRoot, relative) };
  }
  throw lastMissing ?? new WorkspaceToolError('not-found', `${input} does not exist in the workspace`);
}

function lexicalCandidates(roots: readonly string[], input: string): Array<{ root: string; absolute: string }> {
  if (path.isAbsolute(input)) {
    const absolute = path.resolve(input);
    const root = roots.find((r) => isInside(path.resolve(r), absolute));
    if (root === undefined) {
      throw new WorkspaceToolError('outside', `${input} is outside the workspace folders (${roots.join(', ')})`);
    }
    if (isGitInternal(path.relative(path.resolve(root), absolute))) {
      throw new WorkspaceToolError('git-internal', `${input} is inside git's own directory; use the git tools instead`);
    }
    return [{ root, absolute }];
  }
  const normalized = path.normalize(input);
  const [first, ...rest] = normalized.split(/[\\/]+/);
  const named = roots.length > 1 ? roots.find((r) => path.basename(r) === first) : undefined;
  const pairs = named !== undefined ? [{ root: named, relative: rest.join(path.sep) || '.' }] : roots.map((root) => ({ root, relative: normalized }));
  return pairs.map(({ root, relative }) => {
    const absolute = path.resolve(root, relative);
    if (!isInside(path.resolve(root), absolute)) {
      throw new WorkspaceToolError('escape', `${input} climbs out of the workspace folder ${root} with ".."`);
    }
    if (isGitInternal(path.relative(path.resolve(root), absolute))) {
      throw new WorkspaceToolError('git-internal', `${input} is inside git's own directory; use the git tools instead`);
    }
    return { root, absolute };
  });
}

export function isGitInternal(relative: string): boolean {
  return relative.split(/[\\/]+/).some((segment) => segment.toLowerCase() === '.git');
}

export function displayPath(roots: readonly string[], root: string, relative: string): string {
  const posix = relative.split(path.sep).join('/');
  if (roots.length <= 1) return posix === '' ? '.' : posix;
  return posix === '' ? path.basename(root) : `${path.basename(root)}/${posix}`;
}

async function realOrSelf(target: string): Promise<string> {
  try {
    return await fs.realpath(target);
  } catch {
    return path.resolve(target);
  }
}

/**
 * `confine` for a file that may not exist yet (an edit proposing a new
 * file): an existing path is confined as it is, and must be a file; a
 * missing one by its nearest existing folder, which must lie inside a
 * workspace folder.
 */
export async function confineTarget(roots: readonly string[], input: string): Promise<ConfinedPath> {
  const found = await confineMaybeMissing(roots, input);
  const stat = await fs.stat(found.absolute).catch(() => undefined);
  if (stat?.isDirectory() === true) throw new WorkspaceToolError('invalid', `${input} is a folder, not a file`);
  return found;
}

async function confineMaybeMissing(roots: readonly string[], input: string): Promise<ConfinedPath> {
  try {
    return await confine(roots, input);
  } catch (err) {
    if (!isKindError(err, WorkspaceToolError, 'not-found')) throw err;
  }
  const base = path.basename(input);
  if (base === '' || base === '.' || base === '..') throw new WorkspaceToolError('invalid', `${input} does not name a file`);
  const parent = await confineMaybeMissing(roots, path.dirname(input) || '.');
  const absolute = path.join(parent.absolute, base);
  // A link whose target is missing: writing the new file would write wherever it points.
  if ((await fs.lstat(absolute).catch(() => undefined))?.isSymbolicLink() === true) throw new WorkspaceToolError('symlink-outside', `${input} is a symlink to a file that does not exist; Candor does not write through it`);
  const relative = path.relative(await realOrSelf(parent.root), absolute);
  if (isGitInternal(relative)) throw new WorkspaceToolError('git-internal', `${input} is inside git's own directory`);
  return { root: parent.root, absolute, display: displayPath(roots, parent.root, relative) };
}
