import type { GitStatus } from '../../git/status';

/** One path of `ls-files --stage --cached --others`: tracked with its index entry, or untracked. */
export interface Listed {
  readonly tracked: boolean;
  /** Index mode (`100644`, `100755`, `120000`, `160000`) and blob id; for a conflict, stage 2's (HEAD's side). */
  readonly mode?: string;
  readonly oid?: string;
  /** Stage 0 means no conflict. */
  readonly stage?: number;
}

export interface WorkList {
  readonly files: Map<string, Listed>;
  /** Folders git lists as one untracked entry (`sub/`): a repository of their own. */
  readonly nested: readonly string[];
}

const STAGED = /^(\d{6}) ([0-9a-f]{40,64}) ([0-3])\t([\s\S]+)$/;

/**
 * Parses the `work` list. Paths are the repository's; `prefix` (`sub/`, or
 * '' when the workspace folder is the repository's top) keeps those inside
 * the workspace folder and makes them relative to it.
 */
export function parseWorkList(records: readonly string[], prefix: string): WorkList {
  const files = new Map<string, Listed>();
  const nested: string[] = [];
  for (const record of records) {
    const match = STAGED.exec(record);
    const full = match === null ? record : (match[4] ?? '');
    const rel = inside(full, prefix);
    if (rel === undefined) continue;
    if (match === null) {
      if (rel.endsWith('/')) nested.push(rel.slice(0, -1));
      else if (!files.has(rel)) files.set(rel, { tracked: false });
      continue;
    }
    const stage = Number(match[3]);
    const known = files.get(rel);
    // A conflict lists stages 1–3; HEAD's side is stage 2 (ours), absent when ours deleted it.
    if (stage === 1 || stage === 3) {
      if (known === undefined) files.set(rel, { tracked: true, stage });
      continue;
    }
    files.set(rel, { tracked: true, mode: match[1], oid: match[2], stage });
  }
  return { files, nested };
}

/** Every path git status names (both sides of a rename), inside the workspace folder and relative to it; `nested` gets the untracked repositories. */
export function changedPaths(status: GitStatus, prefix: string, nested?: string[]): { changed: Set<string>; untracked: Set<string> } {
  const changed = new Set<string>();
  const untracked = new Set<string>();
  const add = (full: string | undefined, into: Set<string>[]): void => {
    const rel = full === undefined ? undefined : inside(full, prefix);
    if (rel === undefined || rel === '') return;
    if (rel.endsWith('/')) {
      nested?.push(rel.slice(0, -1));
      return;
    }
    for (const set of into) set.add(rel);
  };
  for (const change of [...status.staged, ...status.unstaged]) {
    add(change.path, [changed]);
    add(change.from, [changed]);
  }
  for (const entry of status.conflicted) add(entry.path, [changed]);
  for (const file of status.untracked) add(file, [changed, untracked]);
  return { changed, untracked };
}

/** `ls-files`/status path → workspace-relative path, or undefined when outside the workspace folder. */
export function inside(full: string, prefix: string): string | undefined {
  if (prefix === '') return full;
  return full.startsWith(prefix) ? full.slice(prefix.length) : undefined;
}

/** A record of the `staged` list: HEAD's side of one path that differs in the index. */
export interface HeadSide {
  readonly path: string;
  /** Undefined when HEAD has no such path (added in the index). */
  readonly mode?: string;
  readonly oid?: string;
  /** Unmerged: the index holds conflict stages, HEAD's side comes from stage 2. */
  readonly unmerged: boolean;
}

/** Parses `diff --cached --raw -z --no-renames`: `:<old mode> <new mode> <old oid> <new oid> <status>` then the path. */
export function parseStaged(records: readonly string[]): HeadSide[] {
  const sides: HeadSide[] = [];
  for (let i = 0; i + 1 < records.length; i += 2) {
    const [oldMode, , oldOid, , status] = (records[i] ?? '').slice(1).split(' ');
    const file = records[i + 1] ?? '';
    const absent = oldMode === undefined || /^0+$/.test(oldMode);
    sides.push({ path: file, mode: absent ? undefined : oldMode, oid: absent ? undefined : oldOid, unmerged: status === 'U' });
  }
  return sides;
}
