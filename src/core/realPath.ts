import * as fs from 'node:fs';
import * as path from 'node:path';

/** The real path of `target`, or its resolved path when it cannot be read (missing, no permission). */
export function realOrResolved(target: string): string {
  try {
    return fs.realpathSync.native(target);
  } catch {
    return path.resolve(target);
  }
}

/**
 * The real path of `target` even when it does not exist yet: the nearest
 * existing parent is resolved (symlinks followed) and the rest appended. A
 * data folder `~/link/sub` where `~/link` points into a workspace folder is
 * inside that folder, although its lexical path says otherwise.
 */
export function realPathLenient(target: string): string {
  const absolute = path.resolve(target);
  try {
    return fs.realpathSync.native(absolute);
  } catch {
    const parent = path.dirname(absolute);
    return parent === absolute ? absolute : path.join(realPathLenient(parent), path.basename(absolute));
  }
}

/** The `path` module of one platform: `node:path` itself, or `path.posix` for paths that are posix everywhere (cgroups). */
export type PathFlavour = Pick<typeof path, 'resolve' | 'sep'>;

/**
 * True when `candidate` is `folder` or lies below it: the one test of
 * "inside" (docs/architecture.md, "Layout"). Lexical: `..` and trailing
 * separators are resolved as text, and a name that only starts like the
 * folder (`/a/bc` beside `/a/b`) is not inside it. So the caller resolves
 * both with `realpath` first (`realOrResolved`, `realPathLenient`, or
 * `fs.promises.realpath`, all the native call): a symlink is not followed
 * here. Case is compared exactly, on every platform: on macOS and Windows
 * the native real path gives each name the case it has on disk, so two
 * forms of one path compare equal without lower-casing, which would let a
 * case-sensitive folder (`/a/B`) pass for another (`/a/b`).
 */
export function isInside(folder: string, candidate: string, paths: PathFlavour = path): boolean {
  const outer = paths.resolve(folder);
  const inner = paths.resolve(candidate);
  if (inner === outer) return true;
  const below = outer.endsWith(paths.sep) ? outer : `${outer}${paths.sep}`;
  return inner.startsWith(below);
}
