import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The disk limit of a gate command (docs/architecture.md, "Sandbox",
 * limits): the clone and the throwaway home together may hold at most so
 * many bytes, allocated blocks counted (a sparse file costs what it really
 * takes), symlinks never followed, a hard-linked file once.
 *
 * Walking a clone with its dependencies is not free (about 35,000 entries
 * and 150 ms of CPU for Candor's own), so it is not walked every 250 ms.
 * Every 250 ms the file systems are asked how much they have left
 * (`statfs`, microseconds): what a folder holds now is at most what the last
 * walk found plus what its file system lost since. Only when that bound
 * passes the limit, or the last walk is older than `RECHECK_MS`, is the
 * folder walked again; a fill is then seen within one poll and measured
 * exactly before anything is killed. The periodic walk bounds what the
 * statfs bound can miss: space freed elsewhere on the same file system at
 * the same time hides as much growth. A file the gate deleted but still
 * holds open is seen by no walk; the file size limit bounds each one.
 */

export const POLL_MS = 250;
const RECHECK_MS = 5000;
/** A walk past this many entries stops, and counts as over the limit. */
export const MAX_ENTRIES = 1_000_000;
/** Entries walked between two turns of the event loop, so a walk never holds the host's thread for long. */
const SLICE = 2000;
const MiB = 1024 * 1024;

interface Measure {
  readonly bytes: number;
  readonly entries: number;
  readonly at: number;
  /** The file system's free bytes and free inodes when the walk began. */
  readonly freeBytes: number;
  readonly freeFiles: number;
}

/** Folder → its last measure. Kept across commands: the clone is the same from one gate call to the next. */
const measures = new Map<string, Measure>();

export class DiskWatch {
  readonly #paths: readonly string[];
  readonly #limitBytes: number;
  readonly #limitMiB: number;
  readonly #onExceeded: (reason: string) => void;
  #timer: NodeJS.Timeout | undefined;
  #walking: Promise<string | undefined> | undefined;
  #stopped = false;
  #reason: string | undefined;

  constructor(paths: readonly string[], limitMiB: number, onExceeded: (reason: string) => void) {
    this.#paths = paths;
    this.#limitMiB = limitMiB;
    this.#limitBytes = limitMiB * MiB;
    this.#onExceeded = onExceeded;
    this.#timer = setInterval(() => void this.#tick(), POLL_MS);
    this.#timer.unref();
  }

  /** Stops polling, then checks once more: a command shorter than a poll may still have filled the disk. */
  async finish(): Promise<string | undefined> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    if (this.#walking !== undefined) await this.#walking;
    if (this.#reason === undefined) this.#reason = await this.#check();
    this.#stopped = true;
    return this.#reason;
  }

  /** Stops without a last check (the command could not start). */
  stop(): void {
    this.#stopped = true;
    clearInterval(this.#timer);
  }

  async #tick(): Promise<void> {
    if (this.#walking !== undefined || this.#stopped || this.#reason !== undefined) return;
    this.#walking = this.#check();
    const reason = await this.#walking;
    this.#walking = undefined;
    if (reason !== undefined && !this.#stopped && this.#reason === undefined) {
      this.#reason = reason;
      this.#onExceeded(reason);
    }
  }

  /** The reason when the folders hold more than the limit, measured exactly; undefined otherwise. */
  async #check(): Promise<string | undefined> {
    const now = Date.now();
    let bound = 0;
    let entries = 0;
    const stale: string[] = [];
    for (const folder of this.#paths) {
      const last = measures.get(folder);
      const free = freeSpace(folder);
      if (last === undefined || free === undefined || now - last.at >= RECHECK_MS) {
        stale.push(folder);
        continue;
      }
      bound += last.bytes + Math.max(0, last.freeBytes - free.bytes);
      entries += last.entries + Math.max(0, last.freeFiles - free.files);
    }
    if (stale.length === 0 && bound <= this.#limitBytes && entries <= MAX_ENTRIES) return undefined;
    // Over the bound, or not known: walk every folder, so the verdict is exact.
    const total = await this.#walkAll();
    if (total === undefined) return undefined;
    if (total.entries > MAX_ENTRIES) return `hit the disk limit (${this.#limitMiB} MiB): the clone and home held more than ${MAX_ENTRIES.toLocaleString('en-US')} files`;
    if (total.bytes > this.#limitBytes) return `hit the disk limit (${this.#limitMiB} MiB): the clone and home held ${Math.ceil(total.bytes / MiB)} MiB`;
    return undefined;
  }

  async #walkAll(): Promise<{ bytes: number; entries: number } | undefined> {
    const seen = new Set<string>();
    let bytes = 0;
    let entries = 0;
    for (const folder of this.#paths) {
      const free = freeSpace(folder);
      const at = Date.now();
      const use = await walk(folder, seen, MAX_ENTRIES - entries, () => this.#stopped);
      if (use === undefined) return undefined;
      bytes += use.bytes;
      entries += use.entries;
      if (free !== undefined && use.entries <= MAX_ENTRIES) measures.set(folder, { bytes: use.bytes, entries: use.entries, at, freeBytes: free.bytes, freeFiles: free.files });
    }
    return { bytes, entries };
  }
}

function freeSpace(folder: string): { bytes: number; files: number } | undefined {
  try {
    const stats = fs.statfsSync(folder);
    return { bytes: stats.bfree * stats.bsize, files: stats.ffree };
  } catch {
    return undefined;
  }
}

/** The bytes allocated under `root` (the root itself followed, nothing beneath it), in slices; undefined when stopped. */
async function walk(root: string, seen: Set<string>, budget: number, stopped: () => boolean): Promise<{ bytes: number; entries: number } | undefined> {
  let bytes = 0;
  let entries = 0;
  const count = (stats: fs.Stats): void => {
    entries++;
    if (stats.nlink > 1 && !stats.isDirectory()) {
      const key = `${stats.dev}:${stats.ino}`;
      if (seen.has(key)) return;
      seen.add(key);
    }
    bytes += process.platform === 'win32' ? stats.size : stats.blocks * 512;
  };
  const rootStats = statOrUndefined(root, fs.statSync);
  if (rootStats === undefined) return { bytes: 0, entries: 0 };
  count(rootStats);
  const folders = rootStats.isDirectory() ? [root] : [];
  let slice = 0;
  while (folders.length > 0) {
    const folder = folders.pop() ?? root;
    let names: string[];
    try {
      names = fs.readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (entries > budget) return { bytes, entries };
      const full = `${folder}${path.sep}${name}`;
      const stats = statOrUndefined(full, fs.lstatSync);
      if (stats === undefined) continue;
      count(stats);
      if (stats.isDirectory()) folders.push(full);
      if (++slice >= SLICE) {
        slice = 0;
        await new Promise((resolve) => setImmediate(resolve));
        if (stopped()) return undefined;
      }
    }
  }
  return { bytes, entries };
}

function statOrUndefined(file: string, stat: (file: string) => fs.Stats): fs.Stats | undefined {
  try {
    return stat(file);
  } catch {
    return undefined;
  }
}
