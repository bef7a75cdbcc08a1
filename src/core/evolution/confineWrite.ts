import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { isGitInternal } from '../workspace/confine';
import { WorkspaceToolError } from '../workspace/errors';
import { DEPENDENCY_DIR } from '../sandbox/dependencies';
import { describeType } from '../boundedRead';
import { isInside } from '../realPath';

export interface WritablePath {
  /** Real absolute path to write (a symlink inside the clone resolved to its target). */
  readonly absolute: string;
  /** Relative to the clone, `/`-separated. */
  readonly display: string;
  readonly exists: boolean;
}

/**
 * A path the model may write or delete in the scratch clone: relative, not
 * climbing out with `..`, not in `.git` or the dependency folder, and — checked on the real path of
 * the deepest part that exists — not through a symlink leading outside; a
 * path that exists is a regular file.
 */
export async function confineForWrite(root: string, input: unknown): Promise<WritablePath> {
  const relative = checkRelative(input);
  const realRoot = await fs.realpath(root);
  const lexical = path.join(realRoot, relative);
  let existing = lexical;
  let exists = true;
  while (!(await lstatOrUndefined(existing))) {
    exists = false;
    existing = path.dirname(existing);
  }
  let real: string;
  try {
    real = await fs.realpath(existing);
  } catch {
    throw new WorkspaceToolError('symlink-outside', `${relative} is a symlink whose target does not exist; it could lead anywhere`);
  }
  if (!isInside(realRoot, real)) {
    throw new WorkspaceToolError('symlink-outside', `${relative} is a symlink (or goes through one) that leads outside the scratch clone, to ${real}`);
  }
  const absolute = exists ? real : path.join(real, path.relative(existing, lexical));
  const inside = path.relative(realRoot, absolute);
  if (isGitInternal(inside)) throw new WorkspaceToolError('git-internal', `${relative} is inside git's own directory`);
  // Setup's folder survives between runs: a file written there would outlive the change and sit under the next gate.
  if (inside.split(path.sep)[0] === DEPENDENCY_DIR) throw new WorkspaceToolError('invalid', `${relative} is in ${DEPENDENCY_DIR}, which only the setup command fills; change the manifest instead`);
  // A FIFO, socket or device a command left (regularFile.ts checks the descriptor again when it opens it).
  const stat = exists ? await fs.lstat(absolute) : undefined;
  if (stat !== undefined && !stat.isFile()) throw new WorkspaceToolError('not-a-file', `${relative} is ${describeType(stat)}; the change tools read and write regular files only`);
  return { absolute, display: inside.split(path.sep).join('/'), exists };
}

/** Refuses absolute paths, drive letters, NUL bytes, `..` escapes and `.git`; returns the normalized relative path. */
export function checkRelative(input: unknown): string {
  if (typeof input !== 'string' || input.trim() === '' || input.includes('\0')) {
    throw new WorkspaceToolError('invalid', 'the path must be a non-empty string');
  }
  if (path.isAbsolute(input) || path.win32.isAbsolute(input) || /^[A-Za-z]:/.test(input)) {
    throw new WorkspaceToolError('outside', `${input} is absolute; give a path relative to the repository`);
  }
  const normalized = path.normalize(input.replace(/\\/g, '/'));
  // Normalized, a path climbs out only by a leading `..` step (`..name` is a name).
  if (normalized.split(path.sep)[0] === '..') {
    throw new WorkspaceToolError('escape', `${input} climbs out of the repository with ".."`);
  }
  if (isGitInternal(normalized)) throw new WorkspaceToolError('git-internal', `${input} is inside git's own directory`);
  return normalized === '' ? '.' : normalized;
}

async function lstatOrUndefined(target: string): Promise<boolean> {
  try {
    await fs.lstat(target);
    return true;
  } catch {
    return false;
  }
}
