import type { Dirent } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';

/** Folders no tool walks into: git's own data, and dependency trees. */
export const SKIPPED_DIRS = new Set(['.git', 'node_modules']);

export interface WalkEntry {
  readonly absolute: string;
  /** Relative to the walk's start, `/`-separated. */
  readonly relative: string;
  readonly kind: 'file' | 'dir' | 'symlink' | 'other';
}

/**
 * Depth-first, sorted, never following symlinks (so it cannot leave the
 * folder or loop), skipping `.git` and `node_modules`. Unreadable folders are
 * passed over: a tool reports what it could read.
 */
export async function* walk(start: string, prefix = ''): AsyncGenerator<WalkEntry> {
  let entries: Dirent[];
  try {
    entries = await fs.readdir(start, { withFileTypes: true });
  } catch {
    return;
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    if (entry.isDirectory() && SKIPPED_DIRS.has(entry.name)) continue;
    const absolute = path.join(start, entry.name);
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    const kind = entryKind(entry);
    yield { absolute, relative, kind };
    if (kind === 'dir') yield* walk(absolute, relative);
  }
}

export function entryKind(entry: Dirent): WalkEntry['kind'] {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isDirectory()) return 'dir';
  if (entry.isFile()) return 'file';
  return 'other';
}

/** Git's heuristic: a NUL byte in the first 8,000 bytes means binary. */
export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8000).includes(0);
}

const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

/** The text of valid UTF-8 bytes, or undefined. */
export function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return strictUtf8.decode(bytes);
  } catch {
    return undefined;
  }
}
