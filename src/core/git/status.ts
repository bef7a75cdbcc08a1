/**
 * Parser for `git status --porcelain=v2 --branch -z`. Pure: text in, record
 * out. The format is documented in git-status(1), "Porcelain Format Version 2".
 */

export type ChangeKind = 'modified' | 'type-changed' | 'added' | 'deleted' | 'renamed' | 'copied';

export interface SubmoduleState {
  readonly commitChanged: boolean;
  readonly trackedChanges: boolean;
  readonly untrackedChanges: boolean;
}

export interface StatusChange {
  /** Path relative to the repository root, `/`-separated. */
  readonly path: string;
  readonly change: ChangeKind;
  /** The source path of a rename or copy. */
  readonly from?: string;
  /** Present when the path is a submodule. */
  readonly submodule?: SubmoduleState;
}

/** The two sides of an unmerged entry, as git's XY code (`UU`, `AA`, `DU`, …). */
export interface ConflictEntry {
  readonly path: string;
  readonly code: string;
}

export interface RenameEntry {
  readonly from: string;
  readonly to: string;
  readonly where: 'staged' | 'unstaged';
  /** Similarity score, 0–100. */
  readonly score: number;
}

export interface BranchState {
  /** Commit of HEAD; null on an unborn branch. */
  readonly oid: string | null;
  /** Branch name; null when HEAD is detached. */
  readonly head: string | null;
  readonly detached: boolean;
  readonly upstream?: string;
  readonly ahead?: number;
  readonly behind?: number;
}

export interface GitStatus {
  readonly branch: BranchState;
  /** Index differs from HEAD. */
  readonly staged: readonly StatusChange[];
  /** Work tree differs from the index. */
  readonly unstaged: readonly StatusChange[];
  readonly untracked: readonly string[];
  readonly conflicted: readonly ConflictEntry[];
  readonly renamed: readonly RenameEntry[];
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

const CHANGE_BY_CODE: Readonly<Record<string, ChangeKind>> = {
  M: 'modified',
  T: 'type-changed',
  A: 'added',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
};

export function parsePorcelainV2(output: string): GitStatus {
  const branch: Mutable<BranchState> = { oid: null, head: null, detached: false };
  const staged: StatusChange[] = [];
  const unstaged: StatusChange[] = [];
  const untracked: string[] = [];
  const conflicted: ConflictEntry[] = [];
  const renamed: RenameEntry[] = [];

  const records = output.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i] ?? '';
    if (record === '') continue;
    const tag = record[0];
    if (tag === '#') {
      readHeader(record, branch);
    } else if (tag === '1') {
      const fields = splitFields(record, 8);
      const xy = fields[1] ?? '..';
      const entry = { path: fields[8] ?? '', submodule: parseSubmodule(fields[2] ?? 'N...') };
      pushSides(xy, entry, staged, unstaged);
    } else if (tag === '2') {
      const fields = splitFields(record, 9);
      const xy = fields[1] ?? '..';
      // With -z the source path is the next NUL-terminated record.
      const from = records[++i] ?? '';
      const to = fields[9] ?? '';
      const score = Number.parseInt((fields[8] ?? '').slice(1), 10);
      const entry = { path: to, from, submodule: parseSubmodule(fields[2] ?? 'N...') };
      pushSides(xy, entry, staged, unstaged);
      const where = xy[0] === 'R' || xy[0] === 'C' ? 'staged' : 'unstaged';
      if (xy.includes('R')) renamed.push({ from, to, where, score: Number.isNaN(score) ? 0 : score });
    } else if (tag === 'u') {
      const fields = splitFields(record, 10);
      conflicted.push({ path: fields[10] ?? '', code: fields[1] ?? 'UU' });
    } else if (tag === '?') {
      untracked.push(record.slice(2));
    }
    // '!' (ignored) is never requested; unknown tags from a newer git are skipped.
  }

  return { branch, staged, unstaged, untracked, conflicted, renamed };
}

function readHeader(record: string, branch: Mutable<BranchState>): void {
  const [key, ...rest] = record.slice(2).split(' ');
  const value = rest.join(' ');
  switch (key) {
    case 'branch.oid':
      branch.oid = value === '(initial)' ? null : value;
      break;
    case 'branch.head':
      branch.detached = value === '(detached)';
      branch.head = branch.detached ? null : value;
      break;
    case 'branch.upstream':
      branch.upstream = value;
      break;
    case 'branch.ab': {
      const match = /^\+(\d+) -(\d+)$/.exec(value);
      if (match) {
        branch.ahead = Number(match[1]);
        branch.behind = Number(match[2]);
      }
      break;
    }
  }
}

/** The first `count` space-separated fields, then the rest (a path may hold spaces). */
function splitFields(record: string, count: number): string[] {
  const fields: string[] = [];
  let start = 0;
  for (let n = 0; n < count; n++) {
    const space = record.indexOf(' ', start);
    if (space === -1) break;
    fields.push(record.slice(start, space));
    start = space + 1;
  }
  fields.push(record.slice(start));
  return fields;
}

function parseSubmodule(field: string): SubmoduleState | undefined {
  if (field[0] !== 'S') return undefined;
  return { commitChanged: field[1] === 'C', trackedChanges: field[2] === 'M', untrackedChanges: field[3] === 'U' };
}

function pushSides(
  xy: string,
  entry: { path: string; from?: string; submodule?: SubmoduleState },
  staged: StatusChange[],
  unstaged: StatusChange[],
): void {
  const indexSide = CHANGE_BY_CODE[xy[0] ?? '.'];
  const treeSide = CHANGE_BY_CODE[xy[1] ?? '.'];
  if (indexSide !== undefined) staged.push(change(entry, indexSide));
  if (treeSide !== undefined) unstaged.push(change(entry, treeSide));
}

function change(entry: { path: string; from?: string; submodule?: SubmoduleState }, kind: ChangeKind): StatusChange {
  const out: Mutable<StatusChange> = { path: entry.path, change: kind };
  if ((kind === 'renamed' || kind === 'copied') && entry.from !== undefined) out.from = entry.from;
  if (entry.submodule !== undefined) out.submodule = entry.submodule;
  return out;
}
