import type { Dirent } from 'node:fs';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { removeTrees } from '../process/removeTree';
import type { TreeListing } from './treeListing';

/**
 * The reset's clean (docs/architecture.md, "Evolution"): everything in the
 * clone's work tree that the commit does not hold goes, ignored files
 * included, whatever it is (a FIFO, a socket, a folder of any depth); so
 * does a tracked name of the wrong kind (a folder where a file belongs, a
 * link where a folder belongs), which git then checks out again; and every
 * submodule folder is emptied (submodules are never populated here). The
 * walk enters only folders the commit holds, whose paths git could check
 * out, and never follows a link; what goes is removed by removeTrees, which
 * no depth stops. `git clean` cannot do this: it fails past PATH_MAX and
 * never enters a submodule's folder.
 *
 * `keep` is a top-level name left for the caller to decide on (the
 * dependency folder), when it is a real folder the commit does not hold.
 */
export async function clearToTree(dir: string, listing: TreeListing, keep: string): Promise<void> {
  const doomed: string[] = [];
  const gitlinks = new Set(listing.gitlinks);
  const pending = [''];
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    for (const entry of await entries(path.join(dir, folder))) {
      const relative = folder === '' ? entry.name : `${folder}/${entry.name}`;
      const full = path.join(dir, relative);
      if (folder === '' && (entry.name === '.git' || (entry.name === keep && entry.isDirectory() && !listing.folders.has(relative)))) continue;
      if (listing.folders.has(relative) && entry.isDirectory()) pending.push(relative);
      else if (gitlinks.has(relative) && entry.isDirectory()) doomed.push(...(await entries(full)).map((child) => path.join(full, child.name)));
      else if (!fitsMode(entry, listing.files.get(relative))) doomed.push(full);
    }
  }
  await removeTrees(doomed);
}

/** After git's checkout: every submodule folder is there, empty, as a clone that never initialised them has it. */
export async function restoreGitlinkFolders(dir: string, listing: TreeListing): Promise<void> {
  for (const link of listing.gitlinks) await fs.promises.mkdir(path.join(dir, link), { recursive: true });
}

/** A tracked file or link of the kind git's mode says; undefined mode: not tracked at all. */
function fitsMode(entry: Dirent, mode: string | undefined): boolean {
  if (mode === undefined) return false;
  return mode === '120000' ? entry.isSymbolicLink() : entry.isFile();
}

/**
 * A folder's entries. Not root, a folder the command made unreadable or
 * unwritable (folder modes are not git's to restore) is made the user's to
 * enter and change first: its untracked entries could not go otherwise.
 */
async function entries(folder: string): Promise<Dirent[]> {
  if (process.getuid?.() !== 0 && process.platform !== 'win32') {
    const stat = await fs.promises.lstat(folder);
    if (stat.isDirectory() && (stat.mode & 0o700) !== 0o700) await fs.promises.chmod(folder, (stat.mode & 0o7777) | 0o700);
  }
  return fs.promises.readdir(folder, { withFileTypes: true });
}
