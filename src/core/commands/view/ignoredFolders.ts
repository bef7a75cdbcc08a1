import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ReadOnlyMount, ViewMounts } from './types';
import { isInside } from '../../realPath';

/**
 * Ignored folders are not copied. Dependency folders are bound read-only
 * from the workspace (copying `node_modules` would cost more than the
 * command); build outputs start empty in the view and are writable, so a
 * build in the view never reads the workspace's stale output; caches a
 * tool writes while it runs get a tmpfs. All of it only for folders git
 * ignores that exist, found by `ls-files --others --ignored --directory`
 * (one walk by git, which stops at each wholly ignored folder, so
 * `node_modules` is never entered) or, without git, by the view's own walk.
 */

export const BIND_NAMES: readonly string[] = ['node_modules', '.venv', 'venv', 'vendor'];
export const OUTPUT_NAMES: readonly string[] = ['target', 'dist', 'build', '.next'];
const CACHE_NAMES = ['__pycache__'];
/** Folders a bound `node_modules` holds that tools write while they run. */
const NODE_MODULES_CACHES = ['.cache', '.vite'];

export interface IgnoredLayout {
  readonly mounts: ViewMounts;
  /** Folders made empty in the view: mount points and build outputs. */
  readonly emptyDirs: readonly string[];
  readonly notes: readonly string[];
  /** True for a path git ignores or one below an ignored folder: neither a file nor an overlay of it goes into the view. */
  covers(rel: string): boolean;
}

export interface LayoutInput {
  /** The workspace root as the sandbox shows it: the base of every `dest`. */
  readonly root: string;
  readonly realRoot: string;
  readonly bindNames: readonly string[];
  /** Real paths no bound folder may be, contain, or (outside the workspace) lie in. */
  readonly hidden: readonly string[];
}

/** `.env`, `.env.local`, `.envrc`: never bound, never copied when ignored. */
export function isEnvName(name: string): boolean {
  return name.startsWith('.env');
}

/** The layout of ignored records as git lists them: a wholly ignored folder as `<path>/`, anything else (a file, a symlink) as `<path>`. */
export function layoutIgnored(records: readonly string[], input: LayoutInput): IgnoredLayout {
  const readOnly: ReadOnlyMount[] = [];
  const tmpfs: string[] = [];
  const emptyDirs: string[] = [];
  const notes: string[] = [];
  const covered = new Set<string>();
  for (const record of records) {
    const rel = record.replace(/\/+$/, '');
    if (rel === '') continue;
    covered.add(rel);
    const name = path.posix.basename(rel);
    if (isEnvName(name)) continue;
    const dest = path.join(input.root, ...rel.split('/'));
    if (input.bindNames.includes(name)) {
      const source = bindSource(rel, input, notes);
      if (source === undefined) continue;
      readOnly.push({ source, dest });
      emptyDirs.push(rel);
      if (name === 'node_modules') {
        for (const cache of NODE_MODULES_CACHES) if (isRealDir(path.join(source, cache))) tmpfs.push(path.join(dest, cache));
      }
    } else if (OUTPUT_NAMES.includes(name) && isRealDir(path.join(input.realRoot, rel))) {
      emptyDirs.push(rel);
    } else if (CACHE_NAMES.includes(name) && isRealDir(path.join(input.realRoot, rel))) {
      tmpfs.push(dest);
      emptyDirs.push(rel);
    }
  }
  const byPath = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
  readOnly.sort((a, b) => byPath(a.dest, b.dest));
  tmpfs.sort(byPath);
  const empty = new Set(emptyDirs);
  return {
    mounts: { readOnly, tmpfs },
    emptyDirs: [...empty].sort(byPath),
    notes,
    covers: (rel) => coveredBy(rel, covered) || coveredBy(rel, empty),
  };
}

/**
 * The real folder to bind for `rel`, or undefined (with a note) when it is
 * none: not a folder, a dangling link, or a symlink whose target is, holds,
 * or lies (outside the workspace) in a hidden folder — `node_modules`
 * pointing into the home would show the sandbox the home.
 */
function bindSource(rel: string, input: LayoutInput, notes: string[]): string | undefined {
  const lexical = path.join(input.realRoot, rel);
  let real: string;
  try {
    real = fs.realpathSync.native(lexical);
  } catch {
    notes.push(`${rel} is a dangling link: not bound in the view`);
    return undefined;
  }
  if (!fs.statSync(real, { throwIfNoEntry: false })?.isDirectory()) return undefined;
  const hidden = input.hidden.find((h) => real === h || isInside(real, h) || (isInside(h, real) && !isInside(input.realRoot, real)));
  if (hidden !== undefined) {
    notes.push(`${rel} points to ${real}, which ${real === hidden || isInside(hidden, real) ? 'is in' : 'holds'} a folder commands never see (${hidden}): not bound in the view`);
    return undefined;
  }
  return real;
}

function coveredBy(rel: string, set: ReadonlySet<string>): boolean {
  if (set.size === 0) return false;
  for (let at = rel; at !== '.' && at !== ''; at = path.posix.dirname(at)) if (set.has(at)) return true;
  return false;
}

function isRealDir(dir: string): boolean {
  return fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true;
}
