import { scratchGit, type Scratch, type ScratchGitOptions } from './scratchGit';

export interface ChangeSize {
  readonly files: number;
  /** Added plus deleted lines; a binary file counts as one. */
  readonly lines: number;
  readonly insertions: number;
  readonly deletions: number;
  /** `git diff --stat` of the change, for the record. */
  readonly diffstat: string;
  /** The tree of the whole change, staged: exactly what a commit would hold. */
  readonly tree: string;
}

/**
 * Stages everything the change phase left in the scratch clone (new files
 * too; ignored files and the dependency folder not) and measures it against
 * `base` with `git diff --cached --numstat`.
 */
export async function measureChange(scratch: Scratch, base: string, options: ScratchGitOptions = {}): Promise<ChangeSize> {
  await scratchGit(scratch, ['add', '--all'], options);
  // --numstat and --stat in one run: the numbers for the limits, git's own stat for the record.
  const output = await scratchGit(scratch, ['diff', '--cached', '--no-renames', '--no-ext-diff', '--no-textconv', '--numstat', '--stat=120', base, '--'], options);
  let files = 0;
  let insertions = 0;
  let deletions = 0;
  let binary = 0;
  const stat: string[] = [];
  for (const line of output.split('\n')) {
    const match = /^(-|\d+)\t(-|\d+)\t/.exec(line);
    if (match === null) {
      if (line.trim() !== '') stat.push(line);
      continue;
    }
    files++;
    if (match[1] === '-') binary++;
    else {
      insertions += Number(match[1]);
      deletions += Number(match[2]);
    }
  }
  const diffstat = stat.join('\n');
  const tree = (await scratchGit(scratch, ['write-tree'], options)).trim();
  return { files, lines: insertions + deletions + binary, insertions, deletions, diffstat, tree };
}

/** Undefined when the change fits, else the reason it is too big. */
export function tooBig(size: ChangeSize, maxLines: number, maxFiles: number): string | undefined {
  const over: string[] = [];
  if (size.lines > maxLines) over.push(`${size.lines} changed lines (limit ${maxLines})`);
  if (size.files > maxFiles) over.push(`${size.files} changed files (limit ${maxFiles})`);
  return over.length === 0 ? undefined : `the change is too big: ${over.join(', ')}`;
}
