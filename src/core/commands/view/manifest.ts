import * as fs from 'node:fs';
import * as path from 'node:path';
import { isRecord } from '../../text';

/**
 * What the view holds, kept beside the view folder (never inside it, where a
 * command could change it): per path the source's size, mtime and mode when
 * copied, the blob id of the bytes, and the view file's own inode and ctime
 * after Candor wrote it, so that a later difference shows someone else did.
 *
 * Stored as a JSON file written whole after a build, and a journal of one
 * JSON line per refresh with the entries it changed, so that a refresh that
 * copies one file writes one line, not 20,000 entries; the journal is folded
 * into the file once it has grown. A line cut short by a crash is ignored,
 * and the "unsettled" marker (present while a refresh or a command may be
 * changing the view) makes the next refresh check every file of the view.
 */

export type EntryKind = 'file' | 'link' | 'dir';

export interface ViewEntry {
  kind: EntryKind;
  /** Blob id of the bytes the view holds (a link: of its target); '' for a folder. */
  hash: string;
  /** The source's size and mtimeMs when copied; -1 when the bytes came from an overlay. */
  size: number;
  mtime: number;
  /** Permission bits of the view's file. */
  mode: number;
  ino: number;
  ctime: number;
  /** The bytes came from an overlay. */
  overlay: boolean;
}

/** The view's own repository, as Candor made it. */
export interface ViewGitState {
  readonly head: string | null;
  /** The contents of `.git/HEAD` and of the branch ref it names, as written. */
  readonly headFile: string;
  readonly refFile: string;
  readonly refPath: string;
}

export interface Manifest {
  /** The workspace folder the view copies. */
  root: string;
  /** HEAD's commit at the last refresh; null unborn; undefined without git. */
  head: string | null | undefined;
  /** Paths changed (git status) or overlaid at the last refresh: checked again at the next. */
  changed: string[];
  /** Folders of the workspace that hold view files, and their mtime when the ignored list was last read (-1: read it next time). */
  dirs: Record<string, number>;
  /** The records of the last ignored list. */
  ignored: string[];
  /** Folders made empty in the view: mount points and build outputs. */
  emptyDirs: string[];
  git: ViewGitState | undefined;
  files: Map<string, ViewEntry>;
  /** Bytes in the journal since the last whole write. */
  journalBytes: number;
}

const VERSION = 1;

export function emptyManifest(root: string): Manifest {
  return { root, head: undefined, changed: [], dirs: {}, ignored: [], emptyDirs: [], git: undefined, files: new Map(), journalBytes: 0 };
}

/** `<parent>/<name>.manifest.json` for the view `<parent>/<name>`. */
export function manifestPath(viewDir: string): string {
  return path.join(path.dirname(viewDir), `${path.basename(viewDir)}.manifest.json`);
}

function journalPath(viewDir: string): string {
  return `${manifestPath(viewDir)}.log`;
}

/** Present while a refresh or a command may be changing the view and the manifest does not say so yet. */
export function unsettledMarkerPath(viewDir: string): string {
  return path.join(path.dirname(viewDir), `${path.basename(viewDir)}.unsettled`);
}

/** Every file of a view besides the view folder itself. */
export function viewSideFiles(viewDir: string): string[] {
  return [manifestPath(viewDir), journalPath(viewDir), unsettledMarkerPath(viewDir)];
}

type Row = [string, string, number, number, number, number, number, number];
const KIND_CODES: Record<EntryKind, string> = { file: 'f', link: 'l', dir: 'd' };
const KINDS: Record<string, EntryKind> = { f: 'file', l: 'link', d: 'dir' };

/** The manifest on disk, its journal applied; undefined when missing, unreadable or of another shape (the view is then built again). */
export function loadManifest(viewDir: string): Manifest | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(fs.readFileSync(manifestPath(viewDir), 'utf8'));
  } catch {
    return undefined;
  }
  if (!isRecord(parsed) || parsed.version !== VERSION || typeof parsed.root !== 'string' || !isRecord(parsed.files)) return undefined;
  const m = emptyManifest(parsed.root);
  if (!applyRecord(m, parsed)) return undefined;
  let journal = '';
  try {
    journal = fs.readFileSync(journalPath(viewDir), 'utf8');
  } catch {
    // No journal yet.
  }
  for (const line of journal.split('\n')) {
    let record: unknown;
    try {
      record = JSON.parse(line);
    } catch {
      break;
    }
    if (!isRecord(record) || !applyRecord(m, record)) break;
  }
  m.journalBytes = journal.length;
  return m;
}

/** Writes the whole manifest (a temporary file renamed over the old one) and empties the journal. */
export function saveManifest(viewDir: string, m: Manifest): void {
  const files: Record<string, Row> = {};
  for (const [rel, e] of m.files) files[rel] = rowOf(e);
  const file = manifestPath(viewDir);
  const temp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(temp, JSON.stringify({ version: VERSION, root: m.root, ...meta(m), files }));
  fs.renameSync(temp, file);
  fs.rmSync(journalPath(viewDir), { force: true });
  m.journalBytes = 0;
}

/** Appends one journal line with the entries of `touched` and the rest of the manifest; writes it whole instead when the journal has grown past half its size. */
export function journalManifest(viewDir: string, m: Manifest, touched: ReadonlySet<string>): void {
  const set: Record<string, Row> = {};
  const del: string[] = [];
  for (const rel of touched) {
    const entry = m.files.get(rel);
    if (entry === undefined) del.push(rel);
    else set[rel] = rowOf(entry);
  }
  const line = `${JSON.stringify({ ...meta(m), set, del })}\n`;
  if (m.journalBytes + line.length > Math.max(1024 * 1024, m.files.size * 60)) {
    saveManifest(viewDir, m);
    return;
  }
  fs.appendFileSync(journalPath(viewDir), line);
  m.journalBytes += line.length;
}

function meta(m: Manifest): Record<string, unknown> {
  return { head: m.head ?? null, changed: m.changed, dirs: m.dirs, ignored: m.ignored, emptyDirs: m.emptyDirs, git: m.git ?? null };
}

function rowOf(e: ViewEntry): Row {
  return [KIND_CODES[e.kind], e.hash, e.size, e.mtime, e.mode, e.ino, e.ctime, e.overlay ? 1 : 0];
}

/** Applies the whole file (`files`) or one journal line (`set`, `del`); false when it is of another shape. */
function applyRecord(m: Manifest, record: Record<string, unknown>): boolean {
  const rows = isRecord(record.files) ? record.files : isRecord(record.set) ? record.set : {};
  for (const [rel, row] of Object.entries(rows)) {
    const entry = entryFrom(row);
    if (entry === undefined) return false;
    m.files.set(rel, entry);
  }
  for (const rel of strings(record.del)) m.files.delete(rel);
  m.head = record.head === null || typeof record.head === 'string' ? record.head : undefined;
  m.changed = strings(record.changed);
  m.dirs = numbers(record.dirs);
  m.ignored = strings(record.ignored);
  m.emptyDirs = strings(record.emptyDirs);
  m.git = gitState(record.git);
  return true;
}

function entryFrom(row: unknown): ViewEntry | undefined {
  if (!Array.isArray(row) || row.length !== 8) return undefined;
  const [kind, hash, size, mtime, mode, ino, ctime, overlay] = row as unknown[];
  if (typeof kind !== 'string' || KINDS[kind] === undefined || typeof hash !== 'string') return undefined;
  const nums = [size, mtime, mode, ino, ctime, overlay];
  if (!nums.every((n) => typeof n === 'number' && Number.isFinite(n))) return undefined;
  return { kind: KINDS[kind], hash, size: size as number, mtime: mtime as number, mode: mode as number, ino: ino as number, ctime: ctime as number, overlay: overlay === 1 };
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function numbers(value: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (isRecord(value)) for (const [key, n] of Object.entries(value)) if (typeof n === 'number') out[key] = n;
  return out;
}

function gitState(value: unknown): ViewGitState | undefined {
  if (!isRecord(value)) return undefined;
  const { head, headFile, refFile, refPath } = value;
  if ((head !== null && typeof head !== 'string') || typeof headFile !== 'string' || typeof refFile !== 'string' || typeof refPath !== 'string') return undefined;
  return { head, headFile, refFile, refPath };
}
