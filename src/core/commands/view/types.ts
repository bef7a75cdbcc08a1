import type { ReadOnlyGit } from '../../git/guard';

/**
 * The shapes of the workspace view (docs/architecture.md, "Sandbox"): the
 * copy of a workspace folder that commands run in, so that nothing they do
 * changes a byte of the user's files.
 */

/** One file's content as an unsaved editor buffer or a pending proposal has it, already encoded. */
export interface ViewOverlay {
  /** Relative to the workspace folder, `/`-separated. */
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** The unprivileged user the sandbox runs commands as; everything the view writes is theirs. */
export interface ViewOwner {
  readonly uid: number;
  readonly gid: number;
}

export interface WorkspaceViewOptions {
  /** The workspace folder, absolute. The sandbox mounts the view at this path. */
  readonly root: string;
  /** Where the copy lives (`<dataDir>/views/<workspace id>/<folder name>`); its manifest goes beside it, never inside. */
  readonly viewDir: string;
  /** The folder's repository. Without one the whole folder is walked, within `maxTotalBytesWithoutGit`. */
  readonly git?: ReadOnlyGit;
  /** More names of ignored folders to bind read-only (`candor.commands.bindIgnored`). */
  readonly bindIgnored?: readonly string[];
  /** Folders no bound folder may be, contain or lie in (the data folder); the home and `~/.ssh` always count. */
  readonly hidden?: readonly string[];
  /** An untracked file larger than this stops the refresh. Default 64 MiB. */
  readonly maxFileBytes?: number;
  /** A folder without git larger than this is not copied. Default 256 MiB. */
  readonly maxTotalBytesWithoutGit?: number;
  /** When Candor runs as root: the uid and gid every file and folder the view writes is given. */
  readonly owner?: ViewOwner;
}

export interface ReadOnlyMount {
  /** The workspace folder's real path. */
  readonly source: string;
  /** Where the sandbox shows it: the workspace root's absolute path joined with the folder's relative path. */
  readonly dest: string;
}

/** What the sandbox mounts over the view: ignored dependency folders read-only, caches as tmpfs. Parents come before children. */
export interface ViewMounts {
  readonly readOnly: readonly ReadOnlyMount[];
  readonly tmpfs: readonly string[];
}

export interface RefreshReport {
  /** Files and links copied from the workspace into the view. */
  readonly copied: number;
  /** Paths removed from the view. */
  readonly removed: number;
  /** Overlays written into the view. */
  readonly overlaid: number;
  /** Paths compared with the view's copy (the changed ones, or all after HEAD moved). */
  readonly checked: number;
  /** Workspace files whose bytes were read, to copy them or to compare their hash; the others were judged by lstat alone. */
  readonly hashed: number;
  /** Files a command had changed inside the view, put back as the workspace has them. */
  readonly restored: number;
  readonly firstBuild: boolean;
  readonly ms: number;
  /** What was left out and why, for people. */
  readonly notes: readonly string[];
  /** Present when the view's repository was checked (`use` with `git: true`). */
  readonly git?: ViewGitReport;
}

export interface ViewGitReport {
  /** False when the repository already matched HEAD. */
  readonly built: boolean;
  /** Objects written into the view's repository. */
  readonly objects: number;
  /** Blobs read from the workspace's repository (HEAD content of changed files). */
  readonly fetched: number;
  readonly ms: number;
}

export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024;
export const DEFAULT_MAX_TOTAL_BYTES_WITHOUT_GIT = 256 * 1024 * 1024;
