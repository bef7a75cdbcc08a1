import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { formatCount, truncationMarker, type ToolOutput } from './bounded';
import { confine, displayPath } from './confine';
import { WorkspaceToolError } from './errors';
import { checkBound } from './readFile';
import { decodeUtf8, looksBinary, walk } from './walk';
import { clip } from '../text';
import { readBounded } from '../boundedRead';

export interface SearchTextOptions {
  /** Largest number of matching lines shown. Default 200. */
  readonly maxMatches?: number;
  /** Search only under this workspace path. Default: every folder. */
  readonly dir?: string;
  /** Default false: case is ignored. */
  readonly caseSensitive?: boolean;
  /** Files scanned at most. Default 20,000. */
  readonly maxFiles?: number;
}

/** Larger files are passed over: generated bundles, data dumps. */
const MAX_FILE_BYTES = 2 * 1024 * 1024;
const MAX_LINE_CHARS = 200;
const MAX_QUERY_CHARS = 1000;

/**
 * Plain-text search (no regular expressions) over the workspace: skips `.git`,
 * `node_modules`, symlinks, binary and non-UTF-8 files, and files over 2 MiB.
 * Prints `path:line: text`, bounded, with a marker saying how many matches
 * there were in all.
 */
export async function searchText(roots: readonly string[], query: string, options: SearchTextOptions = {}): Promise<ToolOutput> {
  const maxMatches = checkBound(options.maxMatches ?? 200, 'maxMatches');
  const maxFiles = checkBound(options.maxFiles ?? 20_000, 'maxFiles');
  if (typeof query !== 'string' || query === '' || query.length > MAX_QUERY_CHARS || /[\n\0]/.test(query)) {
    throw new WorkspaceToolError('invalid', `the search text must be one line of 1 to ${MAX_QUERY_CHARS} characters`);
  }
  if (roots.length === 0) throw new WorkspaceToolError('no-folder', 'no workspace folder is open, so there is nothing to search');
  const starts = options.dir !== undefined ? [await startFrom(roots, options.dir)] : roots.map((root) => ({ root, absolute: root, prefix: displayPath(roots, root, '') }));

  const needle = options.caseSensitive === true ? query : query.toLowerCase();
  const shown: string[] = [];
  let matches = 0;
  let files = 0;
  let skipped = 0;
  let stopped = false;
  for (const start of starts) {
    for await (const entry of walk(start.absolute)) {
      if (entry.kind !== 'file') continue;
      if (files >= maxFiles) {
        stopped = true;
        break;
      }
      files++;
      const text = await readText(entry.absolute);
      if (text === undefined) {
        skipped++;
        continue;
      }
      const lines = text.split('\n');
      for (let i = 0; i < lines.length; i++) {
        const line = lines[i] ?? '';
        const haystack = options.caseSensitive === true ? line : line.toLowerCase();
        if (!haystack.includes(needle)) continue;
        matches++;
        if (shown.length < maxMatches) shown.push(`${join(start.prefix, entry.relative)}:${i + 1}: ${clip(line.replace(/\r$/, ''), MAX_LINE_CHARS)}`);
      }
    }
    if (stopped) break;
  }

  const notes: string[] = [];
  if (matches > shown.length) notes.push(truncationMarker(shown.length, matches, 'matches'));
  if (stopped) notes.push(`[stopped after scanning ${formatCount(maxFiles)} files]`);
  if (skipped > 0) notes.push(`[skipped ${formatCount(skipped)} binary, non-UTF-8 or large files]`);
  const body = matches === 0 ? `no matches for ${JSON.stringify(query)}` : shown.join('\n');
  return { text: [body, ...notes].join('\n'), truncated: matches > shown.length || stopped };
}

async function startFrom(roots: readonly string[], dir: string): Promise<{ root: string; absolute: string; prefix: string }> {
  const target = await confine(roots, dir);
  const stat = await fs.stat(target.absolute);
  if (!stat.isDirectory()) throw new WorkspaceToolError('not-a-directory', `${target.display} is not a folder`);
  return { root: target.root, absolute: target.absolute, prefix: target.display === '.' ? '' : target.display };
}

/** A regular file's text, read through boundedRead (no link followed, no FIFO waited on); anything else is skipped. */
async function readText(file: string): Promise<string | undefined> {
  try {
    const bytes = await readBounded(file, MAX_FILE_BYTES);
    return bytes === undefined || looksBinary(bytes) ? undefined : decodeUtf8(bytes);
  } catch {
    return undefined;
  }
}

function join(prefix: string, relative: string): string {
  return prefix === '' || prefix === '.' ? relative : `${prefix}${path.posix.sep}${relative}`;
}
