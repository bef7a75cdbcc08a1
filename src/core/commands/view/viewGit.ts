import * as fs from 'node:fs';
import * as path from 'node:path';
import { readBounded } from '../../boundedRead';
import type { ReadOnlyGit } from '../../git/guard';
import { removeTree } from '../../process/removeTree';
import type { GitStatus } from '../../git/status';
import { SHA1_ID, blobId } from './blobId';
import { ViewRefusedError } from './errors';
import { writeIndex, type IndexEntry } from './gitIndex';
import { buildTrees, viewCommit, type GitObject, type HeadEntry } from './gitObjects';
import { PackWriter } from './gitPack';
import { inside, parseStaged, parseWorkList } from './listing';
import type { ViewEntry, ViewGitState } from './manifest';
import { eachLimit } from './eachLimit';
import { readSmall, yieldNow } from './smallRead';
import type { ViewGitReport } from './types';

/**
 * The view's own repository (`<view>/.git`), made fresh by Candor and never
 * a copy of the workspace's: one commit whose tree is the workspace's HEAD
 * tree, and an index of that tree. So `git status` and `git diff` in the
 * view show what differs from HEAD — the workspace's uncommitted changes and
 * the overlays — and nothing of the workspace's history, config, hooks or
 * remotes comes along. HEAD's entries come from the workspace through the
 * guard (`ls-files --stage`, and `diff --cached --raw` when something is
 * staged); a blob's bytes from the view's own copy when it holds HEAD's
 * content, else from the guard (`show <oid>`), each checked against its id.
 * Objects, index and refs are written here (gitObjects.ts): no git runs on
 * the view. This costs a read of every file, so it is a step of its own.
 */

export interface ViewGitInput {
  readonly git: ReadOnlyGit;
  readonly prefix: string;
  readonly view: string;
  readonly files: ReadonlyMap<string, ViewEntry>;
  readonly status: GitStatus;
  /** Mount points and build outputs: listed in `info/exclude`, so git in the view does not call them untracked. */
  readonly emptyDirs: readonly string[];
}

export interface ViewGitBuilt {
  readonly state: ViewGitState;
  readonly report: ViewGitReport;
}

/** Blobs read between two yields to the event loop. */
const BATCH = 256;
/** The guard runs at most four git processes at once. */
const PARALLEL_FETCHES = 4;

export async function buildViewGit(input: ViewGitInput): Promise<ViewGitBuilt> {
  const started = performance.now();
  const head = input.status.branch.oid;
  const gitDir = path.join(input.view, '.git');
  await removeTree(gitDir);
  for (const dir of ['objects/pack', 'objects/info', 'refs/heads', 'refs/tags', 'info']) fs.mkdirSync(path.join(gitDir, dir), { recursive: true });
  fs.writeFileSync(path.join(gitDir, 'config'), '[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = false\n');
  fs.writeFileSync(path.join(gitDir, 'info', 'exclude'), input.emptyDirs.map((rel) => `/${escapePattern(rel)}/\n`).join(''));
  const branch = branchName(input.status);
  const refPath = `refs/heads/${branch}`;
  if (head === null) {
    writeIndex(path.join(gitDir, 'index'), []);
    const headFile = `ref: ${refPath}\n`;
    fs.writeFileSync(path.join(gitDir, 'HEAD'), headFile);
    return { state: { head, headFile, refFile: '', refPath: '' }, report: { built: true, objects: 0, fetched: 0, ms: Math.round(performance.now() - started) } };
  }
  const entries = await headEntries(input);
  const trees = buildTrees(entries);
  const expected = await input.git.revParse(input.prefix === '' ? 'HEAD^{tree}' : `HEAD:${input.prefix.slice(0, -1)}`);
  const root = trees?.[trees.length - 1]?.oid ?? EMPTY_TREE;
  if ((await input.git.headCommit()) !== head) throw failed('HEAD moved while the view was refreshed');
  if (trees === undefined || root !== expected) throw failed(`the tree Candor built (${root}) is not HEAD's (${expected ?? 'none'})`);
  const commit = viewCommit(root);
  const { index, objects, fetched } = await writeObjects(input, gitDir, entries, [...(trees ?? []), commit]);
  writeIndex(path.join(gitDir, 'index'), index);
  const refFile = `${commit.oid}\n`;
  const headFile = input.status.branch.detached ? refFile : `ref: ${refPath}\n`;
  fs.mkdirSync(path.dirname(path.join(gitDir, refPath)), { recursive: true });
  fs.writeFileSync(path.join(gitDir, refPath), refFile);
  fs.writeFileSync(path.join(gitDir, 'HEAD'), headFile);
  return { state: { head, headFile, refFile, refPath }, report: { built: true, objects, fetched, ms: Math.round(performance.now() - started) } };
}

/** True when `<view>/.git` is still the repository Candor made for `head` (a command's commit or checkout in the view changes its HEAD or ref). */
export function viewGitIsCurrent(view: string, state: ViewGitState | undefined, head: string | null | undefined): boolean {
  if (state === undefined || state.head !== head) return false;
  const gitDir = path.join(view, '.git');
  if (fs.lstatSync(gitDir, { throwIfNoEntry: false })?.isDirectory() !== true) return false;
  const read = (rel: string): string | undefined => {
    try {
      return fs.readFileSync(path.join(gitDir, rel), 'utf8');
    } catch {
      return undefined;
    }
  };
  return read('HEAD') === state.headFile && (state.refPath === '' || read(state.refPath) === state.refFile);
}

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** HEAD's tree as a flat list: the index's entries, with HEAD's side put back for what is staged (and stage 2 for a conflict). */
async function headEntries(input: ViewGitInput): Promise<HeadEntry[]> {
  const listed = parseWorkList(await input.git.listFiles('work'), '');
  const byPath = new Map<string, HeadEntry>();
  for (const [file, entry] of listed.files) {
    if (entry.tracked && entry.mode !== undefined && entry.oid !== undefined) byPath.set(file, { path: file, mode: entry.mode, oid: entry.oid });
  }
  if (input.status.staged.length > 0) {
    for (const side of parseStaged(await input.git.listFiles('staged'))) {
      if (side.unmerged) continue;
      if (side.mode === undefined || side.oid === undefined) byPath.delete(side.path);
      else byPath.set(side.path, { path: side.path, mode: side.mode, oid: side.oid });
    }
  }
  const entries: HeadEntry[] = [];
  for (const entry of byPath.values()) {
    const rel = inside(entry.path, input.prefix);
    if (rel === undefined) continue;
    if (!SHA1_ID.test(entry.oid)) throw failed('the repository uses SHA-256 object names, which the view does not make');
    entries.push({ ...entry, path: rel });
  }
  return entries;
}

interface Written {
  readonly index: IndexEntry[];
  readonly objects: number;
  readonly fetched: number;
}

/** One pack of every object; each blob taken from the view when it holds HEAD's bytes, else from the workspace's repository. */
async function writeObjects(input: ViewGitInput, gitDir: string, entries: readonly HeadEntry[], fixed: readonly GitObject[]): Promise<Written> {
  const blobs = entries.filter((e) => e.mode !== '160000');
  const unique = new Set(blobs.map((e) => e.oid));
  const pack = new PackWriter(path.join(gitDir, 'objects', 'pack'), unique.size + fixed.length);
  const index: IndexEntry[] = entries.filter((e) => e.mode === '160000').map((e) => ({ ...e }));
  const packed = new Set<string>();
  let fetched = 0;
  try {
    for (const object of fixed) await pack.add(object.type, object.oid, object.body);
    const missing: HeadEntry[] = [];
    for (const [i, entry] of blobs.entries()) {
      if (i % BATCH === BATCH - 1) await yieldNow();
      const fromView = await readViewBlob(input, entry);
      index.push({ ...entry, stat: fromView?.stat });
      if (fromView === undefined) missing.push(entry);
      else if (!packed.has(entry.oid)) {
        packed.add(entry.oid);
        await pack.add('blob', entry.oid, fromView.bytes);
      }
    }
    await eachLimit(missing, PARALLEL_FETCHES, async (entry) => {
      if (packed.has(entry.oid)) return;
      packed.add(entry.oid);
      fetched++;
      const body = await input.git.blob(entry.oid);
      if (blobId(body) !== entry.oid) throw failed(`the workspace's repository gave other bytes for ${entry.path}`);
      await pack.add('blob', entry.oid, body);
    });
    pack.finish();
  } catch (err) {
    pack.abandon();
    throw err;
  }
  return { index, objects: unique.size + fixed.length, fetched };
}

/** The view's bytes at `entry.path` when they are HEAD's blob (checked by hash), with the file's lstat. */
async function readViewBlob(input: ViewGitInput, entry: HeadEntry): Promise<{ bytes: Buffer; stat: fs.BigIntStats } | undefined> {
  const held = input.files.get(entry.path);
  const wantLink = entry.mode === '120000';
  // The manifest's hash says whether the view holds HEAD's bytes; the read below makes sure.
  if (held === undefined || held.kind !== (wantLink ? 'link' : 'file') || held.hash !== entry.oid) return undefined;
  const file = path.join(input.view, entry.path);
  try {
    const small = wantLink ? Buffer.from(fs.readlinkSync(file)) : readSmall(file);
    const bytes = small === null ? await readBounded(file, Number.MAX_SAFE_INTEGER) : small;
    if (bytes === undefined || blobId(bytes) !== entry.oid) return undefined;
    return { bytes, stat: fs.lstatSync(file, { bigint: true }) };
  } catch {
    return undefined;
  }
}

/** The workspace's branch name when it is a plain one; `main` otherwise (detached HEAD writes the commit). */
function branchName(status: GitStatus): string {
  const name = status.branch.head;
  if (name === null || !/^[A-Za-z0-9][A-Za-z0-9._/-]{0,200}$/.test(name) || name.includes('..') || name.includes('//') || name.endsWith('/') || name.endsWith('.lock')) return 'main';
  return name;
}

function escapePattern(rel: string): string {
  return rel.replace(/[\\*?[\]!# ]/g, (ch) => `\\${ch}`);
}

function failed(why: string): ViewRefusedError {
  return new ViewRefusedError('git-failed', `Candor could not make the view's git repository: ${why}. Commands that need git can run after the next refresh; others are not affected.`);
}
