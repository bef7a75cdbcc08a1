import * as fs from 'node:fs';
import type { Invocation } from './allowList';
import { GitGuardError } from './errors';

/** The guard's fixed invocations and argument checks, apart from the class that runs them (guard.ts). */

/** The file lists a copy of the work tree is made from (src/core/commands/view). */
export type FileList = 'work' | 'ignored' | 'staged';

export const FILE_LISTS: Readonly<Record<FileList, Invocation>> = {
  work: { subcommand: 'ls-files', args: ['-z', '--stage', '--cached', '--others', '--exclude-standard'] },
  ignored: { subcommand: 'ls-files', args: ['-z', '--others', '--ignored', '--exclude-standard', '--directory'] },
  staged: { subcommand: 'diff', args: ['--cached', '--raw', '-z', '--no-renames', '--no-abbrev', '--no-relative', '--no-ext-diff', '--no-textconv'] },
};

export function checkRev(rev: string): string {
  if (typeof rev !== 'string' || rev === '' || rev.length > 256 || rev.startsWith('-') || /[\0\n\r]/.test(rev)) {
    throw new GitGuardError('invalid', `not a revision: ${JSON.stringify(rev)}`);
  }
  return rev;
}

export function lines(text: string): string[] {
  return text.split('\n').map((line) => line.replace(/\r$/, '')).filter((line) => line !== '');
}

export function isDirectory(target: string): boolean {
  try {
    return fs.statSync(target).isDirectory();
  } catch {
    return false;
  }
}
