import { errorMessage } from '../errorMessage';
import { KindError, isKindError } from '../kindError';

/**
 * What went wrong, as a word the caller can switch on. The message is for
 * people; `kind` is for code.
 */
export type GitGuardErrorKind =
  /** The folder is not inside a git work tree (or is a bare repository). */
  | 'not-a-repo'
  /** The git binary could not be started (none on PATH outside the opened folders, or a bad `gitBinary`). */
  | 'git-missing'
  /** Git could not read the repository (for example a damaged `.git/index`). */
  | 'corrupt'
  /** The hand-off was refused because the workspace is dirty. */
  | 'dirty'
  /** The hand-off was refused because the branch already exists. */
  | 'exists'
  /** The push was refused because the repository has no such branch. */
  | 'no-branch'
  /** The push or `remoteUrl` named a remote the repository does not configure. */
  | 'no-remote'
  /** The remote refused the push (non-fast-forward, a protected branch, a server hook); it is never forced. */
  | 'rejected'
  /** An argument failed validation before git was started. */
  | 'invalid'
  /**
   * The hand-off was refused because the repository's config would redirect
   * the fetch (an `insteadOf` rule or a remote named like the scratch path).
   */
  | 'unsafe-config'
  /** The allow-list refused an invocation: a bug in Candor, never run. */
  | 'forbidden'
  /** Git ran and failed for another reason; the message holds its stderr. */
  | 'failed';

export class GitGuardError extends KindError<GitGuardErrorKind> {
  override readonly name = 'GitGuardError';
  constructor(
    kind: GitGuardErrorKind,
    message: string,
    readonly detail?: string,
  ) {
    super(kind, message);
  }
}

export function isGitGuardError(value: unknown, kind?: GitGuardErrorKind): value is GitGuardError {
  return kind === undefined ? isKindError(value, GitGuardError) : isKindError(value, GitGuardError, kind);
}

/**
 * Turn whatever simple-git or the child process threw into a typed error.
 * Git's messages are stable enough in English for these few cases; anything
 * unrecognised stays `failed` with git's own words.
 */
export function classifyGitFailure(err: unknown, where: string): GitGuardError {
  if (isKindError(err, GitGuardError)) return err;
  const text = errorMessage(err);
  const firstLine = text.split('\n').find((line) => line.trim() !== '')?.trim() ?? 'unknown error';
  if (/\bspawn\b.*\bENOENT\b|\bENOENT\b.*\bspawn\b|\bEACCES\b/.test(text)) {
    return new GitGuardError('git-missing', `git could not be started for ${where}: is git installed and on PATH?`, firstLine);
  }
  if (/not a git repository/i.test(text)) {
    return new GitGuardError('not-a-repo', `${where} is not inside a git repository`, firstLine);
  }
  if (/must be run in a work tree|this operation must be run in a work tree/i.test(text)) {
    return new GitGuardError('not-a-repo', `${where} has no work tree (a bare repository?)`, firstLine);
  }
  if (/index file (smaller than expected|corrupt|open failed)|bad signature|bad index (file|version)|unknown index entry format|index uses .* extension, which we do not understand/i.test(text)) {
    return new GitGuardError('corrupt', `the git index of ${where} cannot be read: ${firstLine}`, text);
  }
  if (/(loose object .* is corrupt|object file .* is empty|packfile .* cannot be accessed|fatal: bad config|bad config line)/i.test(text)) {
    return new GitGuardError('corrupt', `the repository at ${where} cannot be read: ${firstLine}`, text);
  }
  return new GitGuardError('failed', `git failed in ${where}: ${firstLine}`, text);
}
