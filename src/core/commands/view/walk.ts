import * as fs from 'node:fs';
import * as path from 'node:path';
import { ViewRefusedError, mebibytes } from './errors';
import { BIND_NAMES, OUTPUT_NAMES, isEnvName } from './ignoredFolders';
import type { Notes } from './notes';

/**
 * A folder without git has no list of its files and no word on what is
 * ignored, so the view walks it: dependency folders, build outputs and
 * caches by name (as git would list them, for layoutIgnored), `.env*`
 * files never (no one said they are meant to be shared), and `.git`
 * never. The walk stops as soon as the folder is larger than the bound,
 * so opening a home folder costs a moment, not a crawl of the disk.
 */

export interface Walked {
  /** Files and symlinks, relative `/`-separated. */
  readonly files: readonly string[];
  /** Folders found by name, as ignored records (`<path>/`; a symlinked one `<path>`). */
  readonly records: readonly string[];
  readonly totalBytes: number;
}

/** Past this many entries the walk stops too: a folder of millions of tiny files is no workspace to copy. */
const MAX_ENTRIES = 200_000;

export function walkFolder(realRoot: string, bindNames: readonly string[], maxTotalBytes: number, notes: Notes): Walked {
  const files: string[] = [];
  const records: string[] = [];
  let totalBytes = 0;
  let entries = 0;
  const pending: string[] = [''];
  const named = new Set([...BIND_NAMES, ...bindNames, ...OUTPUT_NAMES, '__pycache__']);
  while (pending.length > 0) {
    const dir = pending.pop() as string;
    for (const entry of fs.readdirSync(path.join(realRoot, dir), { withFileTypes: true })) {
      const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
      if (++entries > MAX_ENTRIES) throw tooLarge(`more than ${MAX_ENTRIES.toLocaleString('en-US')} files and folders`, maxTotalBytes);
      if (entry.name === '.git') continue;
      if (named.has(entry.name) && (entry.isDirectory() || entry.isSymbolicLink())) {
        records.push(entry.isDirectory() ? `${rel}/` : rel);
        continue;
      }
      if (isEnvName(entry.name)) {
        notes.add(`${rel}: without git no one says a .env file is meant to be shared, so it is not in the view`);
      } else if (entry.isDirectory()) {
        pending.push(rel);
      } else if (entry.isFile() || entry.isSymbolicLink()) {
        files.push(rel);
        if (entry.isFile()) totalBytes += fs.lstatSync(path.join(realRoot, rel)).size;
        if (totalBytes > maxTotalBytes) throw tooLarge(`more than ${mebibytes(maxTotalBytes)}`, maxTotalBytes);
      }
    }
  }
  return { files, records, totalBytes };
}

function tooLarge(what: string, bound: number): ViewRefusedError {
  return new ViewRefusedError(
    'folder-too-large',
    `This folder has no git repository, so commands would run in a full copy of it, and it holds ${what} (the bound is ${mebibytes(bound)}). Open a smaller folder, make it a git repository (its ignored files are then left out), or raise the bound.`,
  );
}
