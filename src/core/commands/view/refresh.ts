import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ReadOnlyGit } from '../../git/guard';
import type { GitStatus } from '../../git/status';
import { SHA1_ID } from './blobId';
import type { ViewWriter } from './copy';
import { checkDirs, foldersOf } from './dirs';
import { ViewRefusedError, mebibytes } from './errors';
import { layoutIgnored, type IgnoredLayout } from './ignoredFolders';
import { changedPaths, inside, parseWorkList, type WorkList } from './listing';
import type { Manifest } from './manifest';
import type { Notes } from './notes';
import { admitOverlays } from './overlays';
import { reconcile, removeEntry, type Check, type Counts, type ReconcileContext } from './reconcile';
import type { ViewMounts, ViewOverlay, ViewOwner } from './types';
import { walkFolder } from './walk';
import { isInside } from '../../realPath';

/** The view's fixed settings, resolved once. */
export interface ViewSettings {
  readonly root: string;
  readonly realRoot: string;
  readonly viewDir: string;
  readonly git: ReadOnlyGit | undefined;
  readonly bindNames: readonly string[];
  readonly hidden: readonly string[];
  readonly maxFileBytes: number;
  readonly maxTotalBytes: number;
  readonly owner: ViewOwner | undefined;
}

/** One refresh's inputs and the tallies it keeps. */
export interface RefreshRun {
  readonly settings: ViewSettings;
  /** Updated in place. */
  readonly manifest: Manifest;
  readonly firstBuild: boolean;
  readonly overlays: readonly ViewOverlay[];
  readonly drifted: ReadonlySet<string>;
  readonly writer: ViewWriter;
  readonly counts: Counts;
  readonly notes: Notes;
}

export interface Refreshed {
  readonly mounts: ViewMounts;
  readonly status?: GitStatus;
}

/**
 * With git: the paths to compare are git status's (changed, deleted,
 * renamed, untracked), the overlays, and the last refresh's changed set
 * (a file put back as HEAD has it leaves git status but not the view). All
 * other files are left alone, unread. Only when HEAD moved (a commit, a
 * checkout) is the whole list (`ls-files`) compared, by size and mtime.
 */
export async function refreshWithGit(run: RefreshRun, git: ReadOnlyGit): Promise<Refreshed> {
  const { settings: s, manifest: m } = run;
  const prefix = repositoryPrefix(git, s.realRoot);
  const dirs = checkDirs(s.realRoot, m.dirs);
  const listingEarly = run.firstBuild ? handled(git.listFiles('work')) : undefined;
  let ignoredAsked = run.firstBuild || dirs.moved ? handled(git.listFiles('ignored')) : undefined;
  const status = await git.status();
  const nested: string[] = [];
  const { changed, untracked } = changedPaths(status, prefix, nested);
  if (ignoredAsked === undefined && [...changed, ...m.changed].some((rel) => ignoreRulesMoved(s.realRoot, rel, m))) ignoredAsked = git.listFiles('ignored');
  const ignored = ignoredAsked === undefined ? m.ignored : recordsUnder(await ignoredAsked, prefix);
  const layout = layoutOf(s, ignored);
  const head = status.branch.oid;
  const listing = run.firstBuild || m.head !== head ? parseWorkList(await (listingEarly ?? git.listFiles('work')), prefix) : undefined;
  for (const folder of [...nested, ...(listing?.nested ?? [])]) run.notes.add(`${folder} is a repository of its own: not in the view`);
  const isListed = (rel: string): boolean => changed.has(rel) || m.files.has(rel) || listing?.files.has(rel) === true;
  const overlays = admitOverlays(run.overlays, { covers: layout.covers, isListed, shapeProblem: shapeIn(s.realRoot), maxBytes: s.maxFileBytes }, run.notes);
  const ctx = contextOf(run, {
    isUntracked: (rel) => untracked.has(rel) || listing?.files.get(rel)?.tracked === false,
    cleanOid: (rel) => (changed.has(rel) ? undefined : cleanOidOf(listing, rel)),
  });
  const paths = new Map<string, Check>();
  if (listing !== undefined) for (const rel of listing.files.keys()) paths.set(rel, 'stat');
  for (const rel of [...changed, ...m.changed, ...run.drifted]) paths.set(rel, 'hash');
  // Every held path is looked at only when the lists changed; else only the paths to compare.
  for (const rel of listing !== undefined || ignoredAsked !== undefined ? [...paths.keys(), ...m.files.keys()] : [...paths.keys()]) {
    const gone = layout.covers(rel) || (listing !== undefined && !listing.files.has(rel) && !changed.has(rel));
    if (!gone || overlays.has(rel)) continue;
    paths.delete(rel);
    removeEntry(ctx, rel);
  }
  await reconcile(ctx, paths, overlays);
  placeEmptyDirs(run, layout);
  m.head = head;
  m.changed = [...new Set([...changed, ...overlays.keys()])].sort();
  m.ignored = [...ignored];
  const added = [...run.counts.touched].filter((rel) => m.files.has(rel));
  m.dirs = listing !== undefined || ignoredAsked !== undefined ? foldersOf([...m.files.keys(), ...m.emptyDirs, ...ignored], dirs.now) : { ...foldersOf(added, dirs.now), ...dirs.now };
  return { mounts: layout.mounts, status };
}

/**
 * Without git: the folder is walked (walk.ts) and every file compared by
 * size and mtime, the overlays and the last refresh's overlaid paths by
 * hash. The report says so, with the size against the bound.
 */
export async function refreshWithoutGit(run: RefreshRun): Promise<Refreshed> {
  const { settings: s, manifest: m } = run;
  const walked = walkFolder(s.realRoot, s.bindNames, s.maxTotalBytes, run.notes);
  const found = new Set(walked.files);
  const layout = layoutOf(s, walked.records);
  const overlays = admitOverlays(run.overlays, { covers: layout.covers, isListed: (rel) => found.has(rel), shapeProblem: shapeIn(s.realRoot), maxBytes: s.maxFileBytes }, run.notes);
  const ctx = contextOf(run, { isUntracked: () => true, cleanOid: () => undefined });
  const paths = new Map<string, Check>(walked.files.map((rel) => [rel, 'stat']));
  for (const rel of [...m.changed, ...run.drifted]) paths.set(rel, 'hash');
  for (const rel of [...m.files.keys()]) {
    if (found.has(rel) || overlays.has(rel)) continue;
    paths.delete(rel);
    removeEntry(ctx, rel);
  }
  await reconcile(ctx, paths, overlays);
  placeEmptyDirs(run, layout);
  m.head = undefined;
  m.changed = [...overlays.keys()].sort();
  run.notes.add(`no git repository: the whole folder was compared with the view (${walked.files.length} files, ${mebibytes(walked.totalBytes)} of the ${mebibytes(s.maxTotalBytes)} a folder without git may have)`);
  return { mounts: layout.mounts };
}

/** `sub/` when the workspace folder is `sub` inside the repository, '' at its top. */
export function repositoryPrefix(git: ReadOnlyGit, realRoot: string): string {
  if (!isInside(git.root, realRoot)) {
    throw new ViewRefusedError('git-failed', `The repository at ${git.root} does not contain the folder ${realRoot}; open the folder's own repository.`);
  }
  const relative = path.relative(git.root, realRoot);
  return relative === '' ? '' : `${relative.split(path.sep).join('/')}/`;
}

/** What the workspace has at an overlay's place that a file cannot take: a folder there, or a file (or link) where a folder above it must be. */
function shapeIn(realRoot: string): (rel: string) => string | undefined {
  return (rel) => {
    const parts = rel.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const stat = fs.lstatSync(path.join(realRoot, ...parts.slice(0, i)), { throwIfNoEntry: false });
      if (stat === undefined) return undefined;
      if (i === parts.length) return stat.isDirectory() ? 'is a folder' : undefined;
      if (!stat.isDirectory()) return 'lies under a file or a link';
    }
    return undefined;
  };
}

function layoutOf(s: ViewSettings, records: readonly string[]): IgnoredLayout {
  return layoutIgnored(records, { root: s.root, realRoot: s.realRoot, bindNames: s.bindNames, hidden: s.hidden });
}

function contextOf(run: RefreshRun, rules: Pick<ReconcileContext, 'isUntracked' | 'cleanOid'>): ReconcileContext {
  const s = run.settings;
  return { realRoot: s.realRoot, root: s.root, writer: run.writer, files: run.manifest.files, drifted: run.drifted, maxFileBytes: s.maxFileBytes, counts: run.counts, notes: run.notes, ...rules };
}

/** Mount points and build outputs, made empty in the view; those no longer needed removed when still empty. */
function placeEmptyDirs(run: RefreshRun, layout: IgnoredLayout): void {
  const m = run.manifest;
  const keep = new Set(layout.emptyDirs);
  for (const rel of m.emptyDirs) if (!keep.has(rel)) run.writer.removeEmptyDir(rel);
  for (const rel of layout.emptyDirs) {
    removeEntry({ files: m.files, writer: run.writer, counts: run.counts }, rel);
    run.writer.ensureDir(rel);
  }
  for (const note of layout.notes) run.notes.add(note);
  m.emptyDirs = [...layout.emptyDirs];
}

/** A `.gitignore` among the changed paths whose size or mtime differs from the view's copy: the ignored list may have changed. */
function ignoreRulesMoved(realRoot: string, rel: string, m: Manifest): boolean {
  if (path.posix.basename(rel) !== '.gitignore') return false;
  const entry = m.files.get(rel);
  const stat = fs.lstatSync(path.join(realRoot, rel), { throwIfNoEntry: false });
  return entry === undefined || stat === undefined || entry.size !== stat.size || entry.mtime !== stat.mtimeMs;
}

/** The same promise, its rejection marked handled: it is awaited later, and may not be if an earlier step throws. */
function handled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

function cleanOidOf(listing: WorkList | undefined, rel: string): string | undefined {
  const listed = listing?.files.get(rel);
  return listed?.stage === 0 && listed.oid !== undefined && SHA1_ID.test(listed.oid) ? listed.oid : undefined;
}

function recordsUnder(records: readonly string[], prefix: string): string[] {
  const out: string[] = [];
  for (const record of records) {
    const rel = inside(record, prefix);
    if (rel !== undefined && rel !== '') out.push(rel);
  }
  return out;
}
