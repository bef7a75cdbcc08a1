import * as fs from 'node:fs';
import * as path from 'node:path';
import type { ViewOwner } from './types';

/** The view file's inode and ctime right after Candor wrote it. */
export interface Written {
  readonly ino: number;
  readonly ctime: number;
}

const COPY_FLAGS = fs.constants.COPYFILE_FICLONE | fs.constants.COPYFILE_EXCL;
const CREATE_FLAGS = fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL;

/**
 * Every write into the view goes through here. Commands ran in the view and
 * may have left anything in it — a folder swapped for a symlink to the
 * workspace, a file turned into a FIFO — and Candor, outside the sandbox,
 * must never follow such a thing. So no write follows a symlink: each
 * parent folder is checked with lstat (and made a real folder if it is not),
 * a file is made new (`O_EXCL`, `COPYFILE_EXCL`, which fail on anything
 * there, a link included, rather than follow it), and ownership is given
 * with fchown or lchown. Files are copied, never hard-linked: small ones
 * read and written (smallRead.ts), larger ones with `COPYFILE_FICLONE`, a
 * reflink where the filesystem can and a real copy elsewhere; either way a
 * write in the view cannot reach the workspace.
 */
export class ViewWriter {
  readonly dir: string;
  readonly #view: string;
  readonly #owner: ViewOwner | undefined;
  /** Parent folders already checked during this refresh (no command runs meanwhile). */
  readonly #ready = new Set<string>();

  constructor(view: string, owner: ViewOwner | undefined) {
    this.dir = view;
    this.#view = view;
    this.#owner = owner;
  }

  /** The view folder itself, made when missing. */
  ensureRoot(): void {
    if (!fs.lstatSync(this.#view, { throwIfNoEntry: false })?.isDirectory()) {
      fs.rmSync(this.#view, { force: true });
      fs.mkdirSync(this.#view, { recursive: true });
      this.#own(this.#view);
    }
  }

  /** A large file, copied by the kernel: a reflink where the filesystem can, a real copy elsewhere. */
  async copyFile(rel: string, source: string): Promise<Written> {
    const target = this.#replace(rel);
    await fs.promises.copyFile(source, target, COPY_FLAGS);
    return this.#finish(target);
  }

  /**
   * Writes `bytes` as a new file (O_EXCL: never through a link, never into
   * an old file another process holds open), with `mode` exactly (the umask
   * set aside) and the owner, all on the descriptor.
   */
  writeBytes(rel: string, bytes: Uint8Array, mode: number): Written {
    const target = this.#parent(rel);
    let fd: number;
    try {
      fd = fs.openSync(target, CREATE_FLAGS, mode);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      fs.rmSync(target, { recursive: true, force: true });
      fd = fs.openSync(target, CREATE_FLAGS, mode);
    }
    try {
      let done = 0;
      while (done < bytes.length) done += fs.writeSync(fd, bytes, done, bytes.length - done);
      if (this.#owner !== undefined) fs.fchownSync(fd, this.#owner.uid, this.#owner.gid);
      let stat = fs.fstatSync(fd);
      if ((stat.mode & 0o7777) !== mode) {
        fs.fchmodSync(fd, mode);
        stat = fs.fstatSync(fd);
      }
      return { ino: stat.ino, ctime: stat.ctimeMs };
    } finally {
      fs.closeSync(fd);
    }
  }

  writeLink(rel: string, linkTarget: string): Written {
    const target = this.#replace(rel);
    fs.symlinkSync(linkTarget, target);
    return this.#finish(target);
  }

  /** A real, empty-when-new folder at `rel` (a mount point, a build output, a submodule's place). */
  ensureDir(rel: string): Written {
    const target = this.#parent(rel);
    const stat = fs.lstatSync(target, { throwIfNoEntry: false });
    if (stat?.isDirectory() !== true) {
      if (stat !== undefined) fs.rmSync(target, { force: true });
      fs.mkdirSync(target);
      this.#own(target);
    }
    this.#ready.add(rel);
    return this.#finish(target);
  }

  /** Removes what the view has at `rel`, then the folders left empty above it. False when nothing was there. */
  remove(rel: string): boolean {
    const target = this.#existingParent(rel);
    if (target === undefined || fs.lstatSync(target, { throwIfNoEntry: false }) === undefined) return false;
    fs.rmSync(target, { recursive: true, force: true });
    this.#ready.delete(rel);
    this.#pruneAbove(rel);
    return true;
  }

  /** A folder emptied of what Candor put there; left alone when a command filled it. */
  removeEmptyDir(rel: string): void {
    const target = this.#existingParent(rel);
    if (target === undefined) return;
    try {
      fs.rmdirSync(target);
      this.#ready.delete(rel);
    } catch {
      // Not empty, not a folder, or gone: nothing to do.
    }
  }

  /** Forgets which folders were checked: a command may change them before the next refresh. */
  endRefresh(): void {
    this.#ready.clear();
  }

  /** `rel`'s absolute path in the view, its parents made real folders; the entry itself removed. */
  #replace(rel: string): string {
    const target = this.#parent(rel);
    const stat = fs.lstatSync(target, { throwIfNoEntry: false });
    if (stat !== undefined) fs.rmSync(target, { recursive: true, force: true });
    this.#ready.delete(rel);
    return target;
  }

  /** `rel`'s absolute path, each parent folder checked (lstat) and made a real folder when it is missing or anything else. */
  #parent(rel: string): string {
    const parts = rel.split('/');
    let sub = '';
    for (const part of parts.slice(0, -1)) {
      sub = sub === '' ? part : `${sub}/${part}`;
      if (this.#ready.has(sub)) continue;
      const dir = path.join(this.#view, sub);
      const stat = fs.lstatSync(dir, { throwIfNoEntry: false });
      if (stat?.isDirectory() !== true) {
        // A file or a symlink where a folder belongs: the view's own, replaced (rm never follows the link).
        if (stat !== undefined) fs.rmSync(dir, { force: true });
        fs.mkdirSync(dir);
        this.#own(dir);
      }
      this.#ready.add(sub);
    }
    return path.join(this.#view, ...parts);
  }

  /** `rel`'s absolute path when every parent is a real folder; undefined when one is missing or is not (nothing below it is ours to remove). */
  #existingParent(rel: string): string | undefined {
    const parts = rel.split('/');
    let dir = this.#view;
    for (const part of parts.slice(0, -1)) {
      dir = path.join(dir, part);
      if (fs.lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() !== true) return undefined;
    }
    return path.join(this.#view, ...parts);
  }

  #pruneAbove(rel: string): void {
    let parent = path.posix.dirname(rel);
    while (parent !== '.') {
      try {
        fs.rmdirSync(path.join(this.#view, parent));
      } catch {
        return;
      }
      this.#ready.delete(parent);
      parent = path.posix.dirname(parent);
    }
  }

  #finish(target: string): Written {
    this.#own(target);
    const stat = fs.lstatSync(target);
    return { ino: stat.ino, ctime: stat.ctimeMs };
  }

  #own(target: string): void {
    if (this.#owner !== undefined) fs.lchownSync(target, this.#owner.uid, this.#owner.gid);
  }
}
