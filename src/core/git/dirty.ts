import type { GitStatus } from './status';

export type DirtyKind =
  | 'staged'
  | 'unstaged'
  | 'untracked'
  | 'conflict'
  | 'unsaved'
  | 'merge-in-progress'
  | 'rebase-in-progress'
  | 'cherry-pick-in-progress'
  | 'revert-in-progress'
  | 'am-in-progress';

export interface DirtyReason {
  /**
   * Repository-relative `/` path. For an operation in progress, the marker
   * git left (for example `.git/MERGE_HEAD`).
   */
  readonly file: string;
  readonly kind: DirtyKind;
  readonly where: 'disk' | 'unsaved';
  /** The source path of a rename. */
  readonly from?: string;
}

export interface DirtyState {
  readonly dirty: boolean;
  readonly reasons: readonly DirtyReason[];
}

/** Named as states, not commands: the guard never starts any of these. */
export type InProgressOperation = 'merging' | 'rebasing' | 'cherry-picking' | 'reverting' | 'applying-mailbox' | 'bisecting';

export interface InProgress {
  readonly operation: InProgressOperation;
  /** The marker in the git directory, relative to the work tree root when inside it. */
  readonly marker: string;
}

const OPERATION_KIND: Readonly<Record<InProgressOperation, DirtyKind | undefined>> = {
  merging: 'merge-in-progress',
  rebasing: 'rebase-in-progress',
  'cherry-picking': 'cherry-pick-in-progress',
  reverting: 'revert-in-progress',
  'applying-mailbox': 'am-in-progress',
  // A bisect moves HEAD but leaves nothing uncommitted: not dirty (docs/architecture.md, "Git").
  bisecting: undefined,
};

/**
 * docs/architecture.md, "Git": dirty = staged, unstaged or untracked (not ignored) changes,
 * a merge or rebase (or cherry-pick, revert, am) in progress, or an unsaved
 * buffer of a (not ignored) file of the repository.
 */
export function computeDirtyState(status: GitStatus, operations: readonly InProgress[], unsaved: readonly string[]): DirtyState {
  const reasons: DirtyReason[] = [];
  for (const op of operations) {
    const kind = OPERATION_KIND[op.operation];
    if (kind !== undefined) reasons.push({ file: op.marker, kind, where: 'disk' });
  }
  for (const entry of status.conflicted) reasons.push({ file: entry.path, kind: 'conflict', where: 'disk' });
  for (const entry of status.staged) reasons.push(entry.from !== undefined ? { file: entry.path, kind: 'staged', where: 'disk', from: entry.from } : { file: entry.path, kind: 'staged', where: 'disk' });
  for (const entry of status.unstaged) reasons.push({ file: entry.path, kind: 'unstaged', where: 'disk' });
  for (const file of status.untracked) reasons.push({ file, kind: 'untracked', where: 'disk' });
  for (const file of unsaved) reasons.push({ file, kind: 'unsaved', where: 'unsaved' });
  return { dirty: reasons.length > 0, reasons };
}

const LOG_PREFIX = 'dirty working tree — read-only cycle';
const FILES_PER_KIND = 5;

/**
 * The log line of a read-only cycle, or undefined when the state is clean.
 * Bounded: at most five files per kind, then a count.
 */
export function readOnlyReason(state: DirtyState): string | undefined {
  if (!state.dirty) return undefined;
  const byKind = new Map<DirtyKind, string[]>();
  for (const reason of state.reasons) {
    const files = byKind.get(reason.kind) ?? [];
    files.push(reason.from !== undefined ? `${reason.from} → ${reason.file}` : reason.file);
    byKind.set(reason.kind, files);
  }
  const parts = [...byKind].map(([kind, files]) => {
    if (kind.endsWith('-in-progress')) return kind.replace(/-/g, ' ');
    const shown = files.slice(0, FILES_PER_KIND).join(', ');
    const more = files.length > FILES_PER_KIND ? `, … ${formatCount(files.length - FILES_PER_KIND)} more` : '';
    return `${formatCount(files.length)} ${kind} (${shown}${more})`;
  });
  return `${LOG_PREFIX}: ${parts.join('; ')}`;
}

export function formatCount(n: number): string {
  return n.toLocaleString('en-US');
}
