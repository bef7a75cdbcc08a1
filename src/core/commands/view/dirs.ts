import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * When to ask git for the ignored folders again. A new ignored folder (an
 * `npm install`, a first build) adds an entry to a folder the view knows,
 * which changes that folder's mtime; so the folders' mtimes are compared
 * (a few hundred lstat calls, not a walk) and the list is asked for only
 * when one moved. A folder first seen is recorded as -1: asked once more.
 */

export interface DirCheck {
  /** The known folders' mtimes now; a folder gone is left out. */
  readonly now: Record<string, number>;
  readonly moved: boolean;
}

export function checkDirs(realRoot: string, known: Readonly<Record<string, number>>): DirCheck {
  const now: Record<string, number> = {};
  let moved = !('' in known);
  for (const [rel, mtime] of Object.entries({ '': -1, ...known })) {
    const stat = fs.lstatSync(path.join(realRoot, rel), { throwIfNoEntry: false });
    if (stat?.isDirectory() !== true) {
      moved = true;
      continue;
    }
    now[rel] = stat.mtimeMs;
    if (stat.mtimeMs !== mtime) moved = true;
  }
  return { now, moved };
}

/** The folders holding `paths`, with their mtime from `now`, or -1 when not seen before. */
export function foldersOf(paths: Iterable<string>, now: Readonly<Record<string, number>>): Record<string, number> {
  const dirs: Record<string, number> = { '': now[''] ?? -1 };
  for (const rel of paths) {
    for (let dir = path.posix.dirname(rel.replace(/\/+$/, '')); dir !== '.' && !(dir in dirs); dir = path.posix.dirname(dir)) {
      dirs[dir] = now[dir] ?? -1;
    }
  }
  return dirs;
}
