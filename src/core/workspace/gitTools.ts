import type { ReadOnlyGit } from '../git/guard';
import type { GitStatus } from '../git/status';
import { noUnsavedBuffers, type UnsavedBufferSource } from '../git/unsaved';
import { boundLines, boundText, formatCount, type ToolOutput } from './bounded';

/** Agent tools over the read-only git guard: git's answers as bounded text. */

export interface GitStatusToolOptions {
  /** Largest number of file lines shown. Default 200. */
  readonly maxEntries?: number;
  readonly unsaved?: UnsavedBufferSource;
}

export async function gitStatusTool(repo: ReadOnlyGit, options: GitStatusToolOptions = {}): Promise<ToolOutput> {
  const { status, inProgress, dirty } = await repo.overview(options.unsaved ?? noUnsavedBuffers);
  const header = [branchLine(status)];
  for (const op of inProgress) header.push(`${op.operation} in progress (${op.marker})`);
  const files: string[] = [];
  for (const entry of status.conflicted) files.push(`conflict  ${entry.code} ${entry.path}`);
  for (const entry of status.staged) files.push(`staged    ${entry.change}${entry.from !== undefined ? ` ${entry.from} →` : ''} ${entry.path}`);
  for (const entry of status.unstaged) files.push(`unstaged  ${entry.change} ${entry.path}`);
  for (const path of status.untracked) files.push(`untracked ${path}`);
  for (const reason of dirty.reasons) if (reason.kind === 'unsaved') files.push(`unsaved   ${reason.file}`);
  if (files.length === 0) header.push(inProgress.length === 0 ? 'working tree clean' : 'no changed files');
  else header.push(`${formatCount(files.length)} changed ${files.length === 1 ? 'entry' : 'entries'}:`);
  const body = boundLines(files, options.maxEntries ?? 200, 'entries');
  return { text: files.length === 0 ? header.join('\n') : `${header.join('\n')}\n${body.text}`, truncated: body.truncated };
}

function branchLine(status: GitStatus): string {
  const { branch } = status;
  const at = branch.oid === null ? 'no commits yet' : `at ${branch.oid.slice(0, 12)}`;
  if (branch.detached) return `HEAD detached ${at}`;
  const upstream = branch.upstream !== undefined ? `, upstream ${branch.upstream} (ahead ${branch.ahead ?? 0}, behind ${branch.behind ?? 0})` : '';
  return `on branch ${branch.head ?? '?'} ${at}${upstream}`;
}

export interface GitDiffToolOptions {
  /** `staged` (index vs HEAD), `unstaged` (work tree vs index) or `both`. Default both. */
  readonly which?: 'staged' | 'unstaged' | 'both';
  /** Largest number of bytes of each diff. Default 64 KiB. */
  readonly maxBytes?: number;
}

export async function gitDiffTool(repo: ReadOnlyGit, options: GitDiffToolOptions = {}): Promise<ToolOutput> {
  const which = options.which ?? 'both';
  const maxBytes = options.maxBytes ?? 64 * 1024;
  const parts: ToolOutput[] = [];
  if (which !== 'unstaged') parts.push(section('staged changes (index against HEAD)', await repo.diffStaged(), maxBytes));
  if (which !== 'staged') parts.push(section('unstaged changes (work tree against index)', await repo.diffUnstaged(), maxBytes));
  return { text: parts.map((part) => part.text).join('\n\n'), truncated: parts.some((part) => part.truncated) };
}

function section(title: string, diff: string, maxBytes: number): ToolOutput {
  if (diff.trim() === '') return { text: `## ${title}\n(none)`, truncated: false };
  const bounded = boundText(diff, maxBytes);
  return { text: `## ${title}\n${bounded.text}`, truncated: bounded.truncated };
}

export interface GitLogToolOptions {
  /** Commits shown. Default 20, at most 500. */
  readonly maxCount?: number;
}

export async function gitLogTool(repo: ReadOnlyGit, options: GitLogToolOptions = {}): Promise<ToolOutput> {
  const maxCount = Math.min(Math.max(1, Math.floor(options.maxCount ?? 20)), 500);
  const commits = await repo.log(maxCount + 1);
  if (commits.length === 0) return { text: 'no commits yet', truncated: false };
  const lines = commits.slice(0, maxCount).map((c) => `${c.shortHash} ${c.date.slice(0, 10)} ${c.author}: ${c.subject}`);
  if (commits.length <= maxCount) return { text: lines.join('\n'), truncated: false };
  return { text: `${lines.join('\n')}\n[truncated: showed ${formatCount(maxCount)} commits; older ones exist]`, truncated: true };
}
