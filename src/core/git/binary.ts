import * as path from 'node:path';
import { gitBinary } from '../process/gitBinary';
import { GitGuardError } from './errors';

/**
 * The git the guard starts: the caller's, which must be an absolute path, or
 * git found on PATH once and never inside `untrusted` (the folders being
 * opened): a bare `git` could run one planted in the repository
 * (docs/architecture.md, "What runs").
 */
export function chooseBinary(explicit: string | undefined, untrusted: readonly string[]): string {
  if (explicit !== undefined) {
    if (!path.isAbsolute(explicit)) {
      throw new GitGuardError('invalid', `gitBinary must be an absolute path, got ${JSON.stringify(explicit)}`);
    }
    return explicit;
  }
  const found = gitBinary(untrusted);
  if (found === undefined) {
    throw new GitGuardError('git-missing', 'no git found on PATH outside the folders being opened: is git installed and on PATH?');
  }
  return found;
}
