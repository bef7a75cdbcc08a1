import { KindError } from '../kindError';

export type WorkspaceToolErrorKind =
  /** The window has no workspace folder. */
  | 'no-folder'
  /** A relative path climbs out of the workspace folders with `..`. */
  | 'escape'
  /** An absolute path outside every workspace folder. */
  | 'outside'
  /** The path is inside a folder but a symlink on it leads outside. */
  | 'symlink-outside'
  /** Git's own files are not the agent's to read. */
  | 'git-internal'
  | 'not-found'
  | 'not-a-file'
  | 'not-a-directory'
  /** A malformed argument (empty query, NUL byte, bad bound). */
  | 'invalid';

export class WorkspaceToolError extends KindError<WorkspaceToolErrorKind> {
  override readonly name = 'WorkspaceToolError';
}
