import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ViewEntry } from './manifest';

/**
 * After a command: which of the view's files it changed, deleted or
 * replaced (lstat only: the inode and ctime Candor recorded no longer
 * match, and a write, chmod, rename over or swap for a link each changes
 * one). Those are put back at the next refresh. Files a command created
 * stay, as build output does. The walk yields to the event loop every few
 * thousand files.
 */
export async function changedByCommand(view: string, files: ReadonlyMap<string, ViewEntry>): Promise<Set<string>> {
  const drifted = new Set<string>();
  let n = 0;
  for (const [rel, entry] of files) {
    if (++n % 2000 === 0) await new Promise((resolve) => setImmediate(resolve));
    const stat = fs.lstatSync(path.join(view, rel), { throwIfNoEntry: false });
    if (stat === undefined || !sameAsWritten(stat, entry)) drifted.add(rel);
  }
  return drifted;
}

function sameAsWritten(stat: fs.Stats, entry: ViewEntry): boolean {
  if (entry.kind === 'dir') return stat.isDirectory();
  const kindOk = entry.kind === 'file' ? stat.isFile() : stat.isSymbolicLink();
  return kindOk && stat.ino === entry.ino && stat.ctimeMs === entry.ctime;
}
