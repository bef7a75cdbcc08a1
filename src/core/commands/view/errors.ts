import { KindError } from '../../kindError';

export type ViewRefusedKind =
  /** An untracked file is larger than the per-file bound. */
  | 'file-too-large'
  /** A folder without git is larger than the total bound. */
  | 'folder-too-large'
  /** The view folder overlaps the workspace folder, or is not absolute. */
  | 'bad-view-dir'
  /** The view's repository could not be made to match HEAD. */
  | 'git-failed';

/** Why a view was not built or refreshed; the message says the reason and what to do next. */
export class ViewRefusedError extends KindError<ViewRefusedKind> {
  override readonly name = 'ViewRefusedError';
}

/** A size for people: bytes, KiB or MiB. */
export function mebibytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${Math.round(bytes / (1024 * 1024))} MiB`;
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`;
  return `${bytes} bytes`;
}
