import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Content hashes for "the repository is exactly as it was" assertions in the unit tests. */

export function hashFile(file: string): string {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return 'missing';
  }
}

export function hashTree(dir: string, skip: (relative: string) => boolean, withTimes: boolean): string {
  const hash = createHash('sha256');
  const visit = (absolute: string, relative: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(absolute, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (skip(rel)) continue;
      const full = path.join(absolute, entry.name);
      const stat = fs.lstatSync(full);
      hash.update(`${rel}\0${stat.mode}\0${withTimes ? stat.mtimeMs : ''}\0`);
      if (entry.isSymbolicLink()) hash.update(fs.readlinkSync(full));
      else if (entry.isDirectory()) visit(full, rel);
      else if (entry.isFile()) hash.update(fs.readFileSync(full));
    }
  };
  visit(dir, '');
  return hash.digest('hex');
}
