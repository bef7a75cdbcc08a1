import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { applyPatch, parsePatch } from 'diff';
import { WorkspaceToolError } from '../workspace/errors';
import { confineForWrite, type WritablePath } from './confineWrite';
import { errorMessage } from '../errorMessage';
import { readRegularText, writeRegularText } from './regularFile';

interface PlannedWrite {
  readonly target: WritablePath;
  /** undefined = delete the file. */
  readonly content: string | undefined;
}

/**
 * Applies a unified diff (one or more files) inside `root`. Every file is
 * confined and patched in memory first; nothing is written unless all hunks
 * of all files fit. Returns one line per file touched.
 */
export async function applyUnifiedDiff(root: string, patch: unknown): Promise<string[]> {
  if (typeof patch !== 'string' || patch.trim() === '') throw new WorkspaceToolError('invalid', 'the patch must be a non-empty unified diff');
  let files: ReturnType<typeof parsePatch>;
  try {
    files = parsePatch(patch);
  } catch (err) {
    throw new WorkspaceToolError('invalid', `the patch is not a unified diff: ${errorMessage(err)}`);
  }
  files = files.filter((file) => file.hunks.length > 0 || file.oldFileName !== undefined || file.newFileName !== undefined);
  if (files.length === 0) throw new WorkspaceToolError('invalid', 'the patch holds no file changes');

  const planned: PlannedWrite[] = [];
  for (const file of files) {
    const oldName = stripPrefix(file.oldFileName);
    const newName = stripPrefix(file.newFileName);
    const name = newName ?? oldName;
    if (name === undefined) throw new WorkspaceToolError('invalid', 'a file in the patch has no --- / +++ header naming it');
    const creating = oldName === undefined;
    const deleting = newName === undefined;
    const source = creating ? undefined : await confineForWrite(root, oldName);
    if (source !== undefined && !source.exists) throw new WorkspaceToolError('not-found', `${oldName} does not exist (a new file needs --- /dev/null)`);
    const before = source !== undefined ? await readRegularText(source.absolute, source.display) : '';
    const after = applyPatch(before, file);
    if (after === false) throw new WorkspaceToolError('invalid', `the patch does not apply to ${name}: a hunk's context or removed lines do not match the file`);
    const target = deleting ? source : await confineForWrite(root, newName);
    if (target === undefined) throw new WorkspaceToolError('invalid', `nothing to patch for ${name}`);
    if (creating && target.exists) throw new WorkspaceToolError('invalid', `${newName} already exists; patch it instead of creating it`);
    planned.push({ target, content: deleting ? undefined : after });
    if (!creating && !deleting && source !== undefined && source.absolute !== target.absolute) planned.push({ target: source, content: undefined });
  }

  const lines: string[] = [];
  for (const { target, content } of planned) {
    if (content === undefined) {
      await fs.rm(target.absolute, { force: true });
      lines.push(`deleted ${target.display}`);
    } else {
      await fs.mkdir(path.dirname(target.absolute), { recursive: true });
      await writeRegularText(target.absolute, target.display, content);
      lines.push(`${target.exists ? 'patched' : 'created'} ${target.display}`);
    }
  }
  return lines;
}

/** `a/x` and `b/x` as git writes them; `/dev/null` is "no file". */
function stripPrefix(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  const trimmed = name.replace(/\t.*$/, '').trim();
  if (trimmed === '/dev/null' || trimmed === '') return undefined;
  return trimmed.replace(/^[ab]\//, '');
}
