import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { GitStatus } from '../../git/status';
import { realOrResolved, realPathLenient, isInside } from '../../realPath';
import { removeTree } from '../../process/removeTree';
import { ViewWriter } from './copy';
import { ViewRefusedError } from './errors';
import { BIND_NAMES } from './ignoredFolders';
import { emptyManifest, journalManifest, loadManifest, saveManifest, unsettledMarkerPath, viewSideFiles, type Manifest } from './manifest';
import { Notes } from './notes';
import { noCounts } from './reconcile';
import { refreshWithGit, refreshWithoutGit, repositoryPrefix, type ViewSettings } from './refresh';
import { changedByCommand } from './scan';
import { Serial } from '../../serial';
import { DEFAULT_MAX_FILE_BYTES, DEFAULT_MAX_TOTAL_BYTES_WITHOUT_GIT, type RefreshReport, type ViewGitReport, type ViewMounts, type ViewOverlay, type WorkspaceViewOptions } from './types';
import { buildViewGit, viewGitIsCurrent } from './viewGit';

export type { RefreshReport, ViewGitReport, ViewMounts, ViewOverlay, WorkspaceViewOptions } from './types';

/**
 * The workspace view (docs/architecture.md, "Sandbox"): a copy of one
 * workspace folder under Candor's data folder, which the sandbox mounts at
 * the folder's own path, so that commands see the user's files — tracked
 * and untracked, as on disk, with every unsaved buffer and pending proposal
 * laid over them — and can write anything without a byte reaching the
 * workspace. It is refreshed before each command, by copying only what
 * differs (refresh.ts), one refresh or command at a time.
 */
export class WorkspaceView {
  /** The view folder: what the sandbox mounts at the workspace's path. */
  readonly dir: string;
  readonly #settings: ViewSettings;
  readonly #serial = new Serial();
  #manifest: Manifest | undefined;
  #mounts: ViewMounts = { readOnly: [], tmpfs: [] };
  #status: GitStatus | undefined;
  /** Paths the last command changed in the view, found after it ended; undefined when not known (Candor restarted). */
  #drifted: Set<string> | undefined;
  #afterCommand: Promise<void> | undefined;

  constructor(options: WorkspaceViewOptions) {
    const root = path.resolve(options.root);
    const viewDir = path.resolve(options.viewDir);
    const realRoot = realOrResolved(root);
    const realView = realPathLenient(viewDir);
    if (!path.isAbsolute(options.root) || !path.isAbsolute(options.viewDir) || [root, realRoot].some((r) => isInside(r, viewDir) || isInside(r, realView) || isInside(viewDir, r) || isInside(realView, r))) {
      throw new ViewRefusedError('bad-view-dir', `The view of ${root} cannot live at ${viewDir}: both must be absolute and neither inside the other. Choose a view folder under Candor's data folder.`);
    }
    const home = os.homedir();
    this.dir = viewDir;
    this.#settings = {
      root,
      realRoot,
      viewDir,
      git: options.git,
      bindNames: [...new Set([...BIND_NAMES, ...(options.bindIgnored ?? [])])],
      hidden: [home, path.join(home, '.ssh'), ...(options.hidden ?? [])].map(realPathLenient),
      maxFileBytes: options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
      maxTotalBytes: options.maxTotalBytesWithoutGit ?? DEFAULT_MAX_TOTAL_BYTES_WITHOUT_GIT,
      owner: options.owner,
    };
  }

  /** Brings the view in line with the workspace and `overlays`; the first call may build it. */
  refresh(overlays: readonly ViewOverlay[] = []): Promise<RefreshReport> {
    return this.#serial.run(() => this.#refresh(overlays));
  }

  /**
   * Makes `<view>/.git` the view's own repository of HEAD (viewGit.ts). A
   * step of its own, which a command that needs no git may skip: it reads
   * every file once when built, and is rebuilt only after HEAD moved.
   */
  ensureGit(): Promise<ViewGitReport> {
    return this.#serial.run(() => this.#ensureGit());
  }

  /**
   * Refreshes, builds the view's repository when `git` is set, then runs
   * `command` while no other refresh can start. Afterwards the view is
   * checked, off the command's path, for files the command changed; the
   * next refresh puts them back.
   */
  use<T>(overlays: readonly ViewOverlay[], options: { readonly git?: boolean }, command: (report: RefreshReport) => Promise<T>): Promise<T> {
    return this.#serial.run(async () => {
      let report = await this.#refresh(overlays);
      if (options.git === true) report = { ...report, git: await this.#ensureGit() };
      this.#markUnsettled();
      try {
        return await command(report);
      } finally {
        this.#afterCommand = this.#findChanges();
      }
    });
  }

  /** What the sandbox mounts over the view, as of the last refresh. */
  mounts(): ViewMounts {
    return this.#mounts;
  }

  async #refresh(overlays: readonly ViewOverlay[]): Promise<RefreshReport> {
    const started = performance.now();
    await this.#afterCommand;
    this.#afterCommand = undefined;
    const s = this.#settings;
    let manifest = this.#manifest ?? loadManifest(this.dir);
    if (manifest !== undefined && manifest.root !== s.realRoot) manifest = undefined;
    const firstBuild = manifest === undefined;
    const m = manifest ?? emptyManifest(s.realRoot);
    this.#manifest = m;
    let drifted = this.#drifted ?? new Set<string>();
    if (firstBuild) {
      // Commands wrote in the view: what they left may be unreadable or deeper than a path can name.
      await removeTree(this.dir);
      drifted = new Set();
    } else if (this.#drifted === undefined && fs.existsSync(unsettledMarkerPath(this.dir))) {
      // A command ran, or a refresh was cut short, and Candor stopped before the view was checked against its manifest.
      drifted = await changedByCommand(this.dir, m.files);
    }
    const writer = new ViewWriter(this.dir, s.owner);
    writer.ensureRoot();
    const notes = new Notes();
    const counts = noCounts();
    const before = bookkeeping(m);
    const run = { settings: s, manifest: m, firstBuild, overlays, drifted, writer, counts, notes };
    this.#markUnsettled();
    try {
      const refreshed = s.git !== undefined ? await refreshWithGit(run, s.git) : await refreshWithoutGit(run);
      this.#mounts = refreshed.mounts;
      this.#status = refreshed.status;
    } finally {
      writer.endRefresh();
      if (firstBuild) saveManifest(this.dir, m);
      else if (counts.touched.size > 0 || bookkeeping(m) !== before) journalManifest(this.dir, m, counts.touched);
    }
    this.#drifted = new Set();
    fs.rmSync(unsettledMarkerPath(this.dir), { force: true });
    await this.#dropStaleGit(m, notes);
    const { copied, removed, overlaid, checked, hashed, restored } = counts;
    return { copied, removed, overlaid, checked, hashed, restored, firstBuild, ms: Math.round(performance.now() - started), notes: notes.list() };
  }

  async #ensureGit(): Promise<ViewGitReport> {
    const started = performance.now();
    const { git, realRoot } = this.#settings;
    const m = this.#manifest;
    if (git === undefined) throw new ViewRefusedError('git-failed', 'This folder has no git repository, so its view has none either; run the command without git, or open a folder with a repository.');
    if (m === undefined || this.#status === undefined) throw new ViewRefusedError('git-failed', "The view's repository is made after a refresh of the view; refresh it first.");
    if (viewGitIsCurrent(this.dir, m.git, m.head)) return { built: false, objects: 0, fetched: 0, ms: Math.round(performance.now() - started) };
    m.git = undefined;
    const built = await buildViewGit({ git, prefix: repositoryPrefix(git, realRoot), view: this.dir, files: m.files, status: this.#status, emptyDirs: m.emptyDirs });
    m.git = built.state;
    journalManifest(this.dir, m, new Set());
    return built.report;
  }

  /** After HEAD moved the view's repository would lie about what changed: it goes, and ensureGit makes it again. */
  async #dropStaleGit(m: Manifest, notes: Notes): Promise<void> {
    if (m.git === undefined || m.git.head === m.head) return;
    await removeTree(path.join(this.dir, '.git'));
    m.git = undefined;
    journalManifest(this.dir, m, new Set());
    notes.add("HEAD moved: the view's git repository is made again when a command needs it");
  }

  #markUnsettled(): void {
    fs.mkdirSync(path.dirname(this.dir), { recursive: true });
    fs.writeFileSync(unsettledMarkerPath(this.dir), `${process.pid}\n`);
  }

  /** Never fails: when the check cannot finish, the marker stays and the next refresh looks again. */
  async #findChanges(): Promise<void> {
    const m = this.#manifest;
    if (m === undefined) return;
    this.#drifted = undefined;
    try {
      this.#drifted = await changedByCommand(this.dir, m.files);
    } catch {
      // Left unknown.
    }
  }
}

/** The manifest's fields besides the files, compared before and after a refresh to know whether to save it. */
function bookkeeping(m: Manifest): string {
  return JSON.stringify([m.head, m.changed, m.dirs, m.ignored, m.emptyDirs]);
}

/** Deletes a view and its manifest ("Clean Up Data…"). */
export async function removeView(viewDir: string): Promise<void> {
  const dir = path.resolve(viewDir);
  if (path.dirname(dir) === dir) throw new ViewRefusedError('bad-view-dir', `${dir} is a filesystem root, not a view folder`);
  await removeTree(dir);
  for (const file of viewSideFiles(dir)) fs.rmSync(file, { force: true });
}
