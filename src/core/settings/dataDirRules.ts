import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, realPathLenient } from '../realPath';
import { KindError, isKindError } from '../kindError';

/**
 * The rules a data folder must meet (docs/architecture.md, "Settings and
 * trust"). Candor keeps in it what decides what runs: the scratch clones and
 * their hooks folder, the setup stamps, the record of gated commits. A
 * folder that someone else can write, or that overlaps a folder Candor
 * guards, would let that someone steer an evolution run; so it is refused,
 * with a message naming `candor.dataDir`.
 */

export type DataDirRefusalKind =
  /** The filesystem root. */
  | 'filesystem-root'
  /** The home folder itself. */
  | 'home'
  /** It holds, or lies inside, the agent's repository or a workspace folder. */
  | 'overlaps'
  /** An existing part of its path belongs to someone other than the user or root. */
  | 'foreign-owner'
  /** An existing part of its path is writable by group or others and not sticky. */
  | 'open-permissions'
  /** It exists and is not a folder. */
  | 'not-a-folder';

export interface GuardedFolder {
  /** How the message names it: `the workspace folder "app"`, `the agent's repository`. */
  readonly label: string;
  readonly path: string;
}

export interface DataDirContext {
  readonly home: string;
  /** The uid Candor runs as; undefined where there are none (Windows): owners and modes are not checked then. */
  readonly uid: number | undefined;
  /** The agent's repository (and its main checkout, worktrees…) and the workspace folders. */
  readonly guarded: readonly GuardedFolder[];
}

export interface DataDirRefusal {
  readonly kind: DataDirRefusalKind;
  readonly message: string;
}

export class DataDirError extends KindError<DataDirRefusalKind> {
  override readonly name = 'DataDirError';
}

export function isDataDirError(value: unknown): value is DataDirError {
  return isKindError(value, DataDirError);
}

const NEXT_STEP = 'Set candor.dataDir to a folder of its own that only you can write, for example ~/.candor.';

/** Why `dir` cannot be Candor's data folder, or undefined when it can. Reads the file system (lstat), changes nothing. */
export function dataDirRefusal(dir: string, context: DataDirContext): DataDirRefusal | undefined {
  const absolute = path.resolve(dir);
  const real = realPathLenient(absolute);
  const refuse = (kind: DataDirRefusalKind, why: string): DataDirRefusal => ({ kind, message: `candor.dataDir (${absolute}) ${why}. ${NEXT_STEP}` });
  if (real === path.parse(real).root) return refuse('filesystem-root', 'is the filesystem root');
  if (context.home !== '' && real === realPathLenient(context.home)) return refuse('home', 'is the home folder itself');
  for (const folder of context.guarded) {
    const guarded = realPathLenient(folder.path);
    if (isInside(real, guarded)) return refuse('overlaps', `holds ${folder.label} (${folder.path}); Candor writes clones and records there`);
    if (isInside(guarded, real)) return refuse('overlaps', `is inside ${folder.label} (${folder.path}); Candor's files would change it`);
  }
  // The path as written (a symlink on the way is checked as a link), then as resolved.
  const uid = context.uid;
  if (uid !== undefined) {
    for (const chain of new Set([absolute, real])) {
      const refusal = componentRefusal(chain, uid, refuse);
      if (refusal !== undefined) return refusal;
    }
  }
  const stat = lstatOrUndefined(real);
  if (stat !== undefined && !stat.isDirectory()) return refuse('not-a-folder', 'exists and is not a folder');
  return undefined;
}

/** Every existing component of `absolute`, from `/` down: owned by the user or root; not writable by group or others unless sticky. */
function componentRefusal(absolute: string, uid: number, refuse: (kind: DataDirRefusalKind, why: string) => DataDirRefusal): DataDirRefusal | undefined {
  const root = path.parse(absolute).root;
  const parts = absolute.slice(root.length).split(path.sep).filter((p) => p !== '');
  let current = root;
  for (let i = 0; i <= parts.length; i++) {
    if (i > 0) current = path.join(current, parts[i - 1] as string);
    const stat = lstatOrUndefined(current);
    if (stat === undefined) return undefined;
    if (stat.uid !== uid && stat.uid !== 0) return refuse('foreign-owner', `has ${current} on its path, owned by uid ${stat.uid}, neither you (uid ${uid}) nor root`);
    // A symlink's own mode is always 0777 and means nothing; where it leads is checked on the resolved path.
    if (!stat.isSymbolicLink() && (stat.mode & 0o022) !== 0 && (stat.mode & 0o1000) === 0) {
      return refuse('open-permissions', `has ${current} on its path, writable by ${(stat.mode & 0o002) !== 0 ? 'everyone' : 'its group'} (mode ${(stat.mode & 0o7777).toString(8)}) without the sticky bit`);
    }
  }
  return undefined;
}

/**
 * Checks `dir`, creates what is missing of it with mode 0700, and checks
 * again (a folder planted in between is caught); returns it resolved.
 * Throws `DataDirError`.
 */
export function ensureDataDir(dir: string, context: DataDirContext): string {
  const absolute = path.resolve(dir);
  const before = dataDirRefusal(absolute, context);
  if (before !== undefined) throw new DataDirError(before.kind, before.message);
  if (lstatOrUndefined(absolute) === undefined) {
    fs.mkdirSync(absolute, { recursive: true, mode: 0o700 });
    // mkdir's mode passes through the umask; the data folder itself is exactly 0700.
    fs.chmodSync(absolute, 0o700);
  }
  const after = dataDirRefusal(absolute, context);
  if (after !== undefined) throw new DataDirError(after.kind, after.message);
  return absolute;
}

function lstatOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}
