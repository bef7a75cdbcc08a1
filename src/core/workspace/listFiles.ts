import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { boundLines, formatCount, type ToolOutput } from './bounded';
import { confine } from './confine';
import { WorkspaceToolError } from './errors';
import { checkBound } from './readFile';
import { entryKind, walk, type WalkEntry } from './walk';

export interface ListFilesOptions {
  /** Largest number of entries shown. Default 500. */
  readonly maxEntries?: number;
  /** Walk sub-folders too (never `.git` or `node_modules`, never through symlinks). */
  readonly recursive?: boolean;
}

/** Entries counted at most when walking recursively, so a huge tree still answers quickly. */
const WALK_LIMIT = 100_000;

/**
 * Lists a workspace folder: `name/` for folders, `name@` for symlinks, one per
 * line, paths as the other tools take them. With several workspace folders,
 * `.` lists the folders themselves.
 */
export async function listFiles(roots: readonly string[], relDir: string, options: ListFilesOptions = {}): Promise<ToolOutput> {
  const maxEntries = checkBound(options.maxEntries ?? 500, 'maxEntries');
  if (roots.length > 1 && path.normalize(relDir || '.') === '.') {
    return boundLines(roots.map((root) => `${path.basename(root)}/`), maxEntries, 'entries');
  }
  const dir = await confine(roots, relDir);
  const stat = await fs.stat(dir.absolute);
  if (!stat.isDirectory()) throw new WorkspaceToolError('not-a-directory', `${dir.display} is not a folder`);
  const base = dir.display === '.' ? '' : `${dir.display}/`;

  const lines: string[] = [];
  let total = 0;
  const add = (entry: Pick<WalkEntry, 'relative' | 'kind'>): void => {
    total++;
    if (lines.length < maxEntries) lines.push(`${base}${entry.relative}${suffix(entry.kind)}`);
  };
  if (options.recursive === true) {
    for await (const entry of walk(dir.absolute)) {
      add(entry);
      if (total >= WALK_LIMIT) break;
    }
  } else {
    const entries = await fs.readdir(dir.absolute, { withFileTypes: true });
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (entry.name === '.git') continue;
      const kind = entryKind(entry);
      add({ relative: entry.name, kind });
    }
  }

  if (total === 0) return { text: `${dir.display} is empty`, truncated: false };
  if (total <= maxEntries) return { text: lines.join('\n'), truncated: false };
  const counted = total >= WALK_LIMIT ? `more than ${formatCount(WALK_LIMIT)}` : formatCount(total);
  return { text: `${lines.join('\n')}\n[truncated: showed ${formatCount(maxEntries)} of ${counted} entries]`, truncated: true };
}

function suffix(kind: WalkEntry['kind']): string {
  return kind === 'dir' ? '/' : kind === 'symlink' ? '@' : '';
}
