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

/** True when `child` is `parent` or lies below it, both compared by real path. */
export function isInsideReal(parent: string, child: string): boolean {
  const relative = path.relative(realPathLenient(parent), realPathLenient(child));
  return relative === '' || (relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative));
}

