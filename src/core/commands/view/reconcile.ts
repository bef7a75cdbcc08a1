import * as fs from 'node:fs';
import * as path from 'node:path';
import { isUnsafeFile } from '../../boundedRead';
import { blobId, fileBlobId } from './blobId';
import type { ViewWriter } from './copy';
import { ViewRefusedError, mebibytes } from './errors';
import type { EntryKind, ViewEntry } from './manifest';
import type { Notes } from './notes';
import { SMALL_FILE_BYTES, readSmall, yieldNow } from './smallRead';
import { isInside } from '../../realPath';

/**
 * Brings paths of the view in line with the workspace: for each, what the
 * view should hold (an overlay's bytes, the workspace's file or link, or
 * nothing) against what the manifest says it holds. `stat` compares size,
 * mtime and mode only; `hash` also reads the workspace file when those are
 * equal, for a path in git's changed set — a file edited twice within one
 * mtime tick keeps its size and mtime, never its bytes. Only what differs
 * is written.
 */

export type Check = 'stat' | 'hash';

export interface Counts {
  copied: number;
  removed: number;
  overlaid: number;
  checked: number;
  hashed: number;
  restored: number;
  /** Paths whose manifest entry was added, changed or removed: what the manifest's journal gets. */
  readonly touched: Set<string>;
}

export function noCounts(): Counts {
  return { copied: 0, removed: 0, overlaid: 0, checked: 0, hashed: 0, restored: 0, touched: new Set() };
}

export interface ReconcileContext {
  /** The workspace folder's real path: where files are read. */
  readonly realRoot: string;
  /** The workspace folder as the sandbox shows it: where an absolute link must point. */
  readonly root: string;
  readonly writer: ViewWriter;
  readonly files: Map<string, ViewEntry>;
  /** Paths a command changed inside the view: rewritten whatever the manifest says. */
  readonly drifted: ReadonlySet<string>;
  readonly maxFileBytes: number;
  readonly isUntracked: (rel: string) => boolean;
  /** The index blob id of a file git calls clean: a large file's bytes need not be read to know their hash. */
  readonly cleanOid: (rel: string) => string | undefined;
  readonly counts: Counts;
  readonly notes: Notes;
}

type Item =
  | { readonly rel: string; readonly kind: 'overlay'; readonly bytes: Uint8Array }
  | { readonly rel: string; readonly kind: 'file'; readonly stat: fs.Stats; readonly check: Check }
  | { readonly rel: string; readonly kind: 'link'; readonly target: string }
  | { readonly rel: string; readonly kind: 'dir' };

/** Where small files are read: one buffer for all, each file's bytes used before the next is read. */
const SCRATCH = Buffer.allocUnsafe(SMALL_FILE_BYTES);

/** Files handled between two yields to the event loop. */
const BATCH = 256;

/** Reconciles `paths` (each once) and the overlays; removals go first, so a file may become a folder of the same name. */
export async function reconcile(ctx: ReconcileContext, paths: ReadonlyMap<string, Check>, overlays: ReadonlyMap<string, Uint8Array>): Promise<void> {
  const items: Item[] = [];
  const dirOk = new Map<string, boolean>();
  for (const [rel, bytes] of overlays) items.push({ rel, kind: 'overlay', bytes });
  let n = 0;
  for (const [rel, check] of paths) {
    if (overlays.has(rel)) continue;
    if (++n % (BATCH * 4) === 0) await yieldNow();
    ctx.counts.checked++;
    const item = sourceItem(ctx, rel, check, dirOk);
    if (item === undefined) removeEntry(ctx, rel);
    else items.push(item);
  }
  ctx.counts.checked += overlays.size;
  refuseLarge(ctx, items);
  for (const [i, item] of items.entries()) {
    if (i % BATCH === BATCH - 1) await yieldNow();
    await apply(ctx, item);
  }
}

/** What the workspace has at `rel`, or undefined when the view should have nothing there. */
function sourceItem(ctx: ReconcileContext, rel: string, check: Check, dirOk: Map<string, boolean>): Item | undefined {
  const source = path.join(ctx.realRoot, rel);
  const stat = lstat(source);
  if (stat === undefined) return undefined;
  if (!parentInside(ctx, path.dirname(source), dirOk)) {
    ctx.notes.add(`${rel} lies under a symbolic link that leaves the folder: not in the view`);
    return undefined;
  }
  if (stat.isFile()) return { rel, kind: 'file', stat, check };
  if (stat.isSymbolicLink()) {
    const target = fs.readlinkSync(source);
    if (linkStaysInside([ctx.root, ctx.realRoot], rel, target)) return { rel, kind: 'link', target };
    ctx.notes.add(`${rel} is a symbolic link to ${target}, outside the folder: not in the view`);
    return undefined;
  }
  if (stat.isDirectory()) {
    ctx.notes.add(`${rel} is a submodule or a repository of its own: an empty folder in the view`);
    return { rel, kind: 'dir' };
  }
  ctx.notes.add(`${rel} is not a regular file (a FIFO, socket or device): not in the view`);
  return undefined;
}

/** Before anything is written: an untracked file over the bound stops the refresh (its size is known from lstat, nothing is read). */
function refuseLarge(ctx: ReconcileContext, items: readonly Item[]): void {
  for (const item of items) {
    if (item.kind !== 'file' || item.stat.size <= ctx.maxFileBytes || !ctx.isUntracked(item.rel)) continue;
    throw new ViewRefusedError(
      'file-too-large',
      `The untracked file ${item.rel} is ${mebibytes(item.stat.size)}, more than the ${mebibytes(ctx.maxFileBytes)} a command's copy of the folder takes per file. Add it to .gitignore (or delete it), or raise the bound, then run the command again.`,
    );
  }
}

async function apply(ctx: ReconcileContext, item: Item): Promise<void> {
  switch (item.kind) {
    case 'overlay':
      return applyOverlay(ctx, item.rel, item.bytes);
    case 'file':
      if (item.stat.size <= SMALL_FILE_BYTES && applySmallFile(ctx, item.rel, item.stat, item.check)) return;
      return applyLargeFile(ctx, item.rel, item.stat, item.check);
    case 'link':
      return applyLink(ctx, item.rel, item.target);
    case 'dir':
      return applyDir(ctx, item.rel);
  }
}

function applyOverlay(ctx: ReconcileContext, rel: string, bytes: Uint8Array): void {
  const hash = blobId(bytes);
  const held = heldAs(ctx, rel, 'file');
  if (held?.hash === hash) {
    update(ctx, rel, held, { overlay: true });
    return;
  }
  const disk = lstat(path.join(ctx.realRoot, rel));
  const mode = disk?.isFile() === true ? disk.mode & 0o777 : 0o644;
  record(ctx, rel, { kind: 'file', hash, size: -1, mtime: -1, mode, ...ctx.writer.writeBytes(rel, bytes, mode), overlay: true });
  ctx.counts.overlaid++;
}

/** True when the view's copy is known to be the workspace's file without reading it: same size, mtime and mode, and no `hash` check asked. */
function sameByStat(held: ViewEntry, stat: fs.Stats, check: Check): boolean {
  return check === 'stat' && !held.overlay && held.size === stat.size && held.mtime === stat.mtimeMs && held.mode === (stat.mode & 0o777);
}

/** Read, hashed and written on this thread; false when the file is no longer a small regular file (then handled as a large one). */
function applySmallFile(ctx: ReconcileContext, rel: string, stat: fs.Stats, check: Check): boolean {
  const held = heldAs(ctx, rel, 'file');
  const mode = stat.mode & 0o777;
  if (held !== undefined && sameByStat(held, stat, check)) return true;
  ctx.counts.hashed++;
  // Hashed and written before anything else reads into the scratch buffer: this function never waits.
  const bytes = readSmall(path.join(ctx.realRoot, rel), SMALL_FILE_BYTES, SCRATCH);
  if (bytes === undefined) {
    removeEntry(ctx, rel);
    return true;
  }
  if (bytes === null) return false;
  const hash = blobId(bytes);
  if (held !== undefined && held.hash === hash && held.mode === mode) {
    update(ctx, rel, held, { size: stat.size, mtime: stat.mtimeMs, overlay: false });
    return true;
  }
  record(ctx, rel, { kind: 'file', hash, size: stat.size, mtime: stat.mtimeMs, mode, ...ctx.writer.writeBytes(rel, bytes, mode), overlay: false });
  ctx.counts.copied++;
  return true;
}

async function applyLargeFile(ctx: ReconcileContext, rel: string, listed: fs.Stats, check: Check): Promise<void> {
  const source = path.join(ctx.realRoot, rel);
  // Looked at again: a small file that grew, or one swapped for a FIFO (which a copy would wait on forever).
  const stat = listed.size <= SMALL_FILE_BYTES ? lstat(source) : listed;
  if (stat === undefined || !stat.isFile()) {
    ctx.notes.add(`${rel} stopped being a regular file while it was read: not in the view`);
    removeEntry(ctx, rel);
    return;
  }
  const mode = stat.mode & 0o777;
  const held = heldAs(ctx, rel, 'file');
  if (held !== undefined && sameByStat(held, stat, check)) return;
  let hash: string | null | undefined;
  if (held !== undefined) {
    hash = await hashSource(ctx, source);
    if (hash === null) {
      ctx.notes.add(`${rel} stopped being a regular file while it was read: not in the view`);
      removeEntry(ctx, rel);
      return;
    }
    if (hash === held.hash && held.mode === mode) {
      update(ctx, rel, held, { size: stat.size, mtime: stat.mtimeMs, overlay: false });
      return;
    }
  }
  const written = await ctx.writer.copyFile(rel, source);
  hash ??= ctx.cleanOid(rel) ?? (await hashView(ctx, rel));
  record(ctx, rel, { kind: 'file', hash, size: stat.size, mtime: stat.mtimeMs, mode, ...written, overlay: false });
  ctx.counts.copied++;
}

function applyLink(ctx: ReconcileContext, rel: string, target: string): void {
  const hash = blobId(Buffer.from(target));
  if (heldAs(ctx, rel, 'link')?.hash === hash) return;
  record(ctx, rel, { kind: 'link', hash, size: -1, mtime: -1, mode: 0o777, ...ctx.writer.writeLink(rel, target), overlay: false });
  ctx.counts.copied++;
}

function applyDir(ctx: ReconcileContext, rel: string): void {
  if (heldAs(ctx, rel, 'dir') !== undefined) return;
  record(ctx, rel, { kind: 'dir', hash: '', size: -1, mtime: -1, mode: 0o755, ...ctx.writer.ensureDir(rel), overlay: false });
}

/** The manifest's entry when the view still holds it as Candor wrote it, of that kind. */
function heldAs(ctx: ReconcileContext, rel: string, kind: EntryKind): ViewEntry | undefined {
  const entry = ctx.files.get(rel);
  return entry?.kind === kind && !ctx.drifted.has(rel) ? entry : undefined;
}

function record(ctx: ReconcileContext, rel: string, entry: ViewEntry): void {
  if (ctx.drifted.has(rel)) ctx.counts.restored++;
  ctx.files.set(rel, entry);
  ctx.counts.touched.add(rel);
}

function update(ctx: ReconcileContext, rel: string, entry: ViewEntry, patch: Partial<ViewEntry>): void {
  const keys = Object.keys(patch) as Array<keyof ViewEntry>;
  if (keys.every((key) => entry[key] === patch[key])) return;
  Object.assign(entry, patch);
  ctx.counts.touched.add(rel);
}

export function removeEntry(ctx: Pick<ReconcileContext, 'files' | 'writer' | 'counts'>, rel: string): void {
  if (!ctx.files.has(rel)) return;
  ctx.writer.remove(rel);
  ctx.files.delete(rel);
  ctx.counts.removed++;
  ctx.counts.touched.add(rel);
}

/** The blob id of the workspace's file; null when it is no longer a regular file (swapped for a link or a FIFO since lstat). */
async function hashSource(ctx: ReconcileContext, source: string): Promise<string | null> {
  ctx.counts.hashed++;
  try {
    return (await fileBlobId(source)) ?? null;
  } catch (err) {
    if (isUnsafeFile(err)) return null;
    throw err;
  }
}

async function hashView(ctx: ReconcileContext, rel: string): Promise<string> {
  ctx.counts.hashed++;
  return (await fileBlobId(path.join(ctx.writer.dir, rel))) ?? '';
}

/**
 * A link is copied only when what it names stays inside the folder,
 * resolved from where it is; an absolute target may name the folder by the
 * path it was opened at or by its real path (the sandbox shows the view at
 * the real one).
 */
export function linkStaysInside(roots: readonly string[], rel: string, target: string): boolean {
  return roots.some((root) => isInside(root, path.resolve(path.dirname(path.join(root, rel)), target)));
}

/** A folder whose real path leaves the workspace (a parent swapped for a symlink after git listed it) is not read. */
function parentInside(ctx: ReconcileContext, dir: string, known: Map<string, boolean>): boolean {
  let ok = known.get(dir);
  if (ok === undefined) {
    let real: string | undefined;
    try {
      real = fs.realpathSync.native(dir);
    } catch {
      real = undefined;
    }
    ok = real !== undefined && isInside(ctx.realRoot, real);
    known.set(dir, ok);
  }
  return ok;
}

function lstat(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw err;
  }
}
