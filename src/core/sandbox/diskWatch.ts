import * as fs from 'node:fs';
import { measureFolders } from './diskUsage';
import { heldOpenBytes } from './heldOpen';

/**
 * The disk limit of a gate command, by polling (docs/architecture.md,
 * "Sandbox", limits): the folders it may write (the clone, and the
 * throwaway home and temp folder when they are host folders) together with
 * the nameless files its processes hold may take at most so many bytes.
 *
 * Before the command starts, the folders are measured (diskUsage.ts: GNU du)
 * and each file system's free space is read: the baseline. Every 250 ms the
 * free space is read again (`statfs`, microseconds): what the command holds
 * now is at most the last measure plus whatever the disk lost since the
 * baseline that the last measure does not account for. Only when that passes
 * the limit, or the last measure is older than `RECHECK_MS` (or twenty
 * times what it took, for a folder that takes long to walk), are the
 * folders measured again, with the files the command's processes hold open
 * after deleting them (heldOpen.ts). A loss of free space that no measure
 * accounts for is carried forward, never forgotten at the next measure:
 * something the command holds where no walk looks (a file passed over a
 * socket and closed) costs the disk all the same. Another process writing
 * to the same disk looks the same, so a verdict from free space alone says
 * so. The periodic measure bounds what free space cannot show: space freed
 * elsewhere at the same time hides as much growth.
 *
 * What cannot be measured counts as over the limit, never as 0. A command
 * whose writes leave its file system with less than the larger of 1 GiB and
 * 5% free is stopped too, whatever its limit.
 */

export const POLL_MS = 250;
const RECHECK_MS = 5000;
/** A measure that takes long waits proportionally longer for the next periodic one: du runs at most a twentieth of the time. */
const RECHECK_PER_MEASURE_MS = 20;
/** More new files than this on the disk while a command runs end it: inode tables are finite too. */
export const MAX_NEW_FILES = 1_000_000;
const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

/** One file system's free space (`statfs`). */
export interface FreeSpace {
  /** Free blocks, in bytes (the root reserve included): what a write takes from. */
  readonly bytes: number;
  /** What ordinary users may still write, in bytes (`df`'s Avail). */
  readonly avail: number;
  readonly size: number;
  readonly files: number;
}

/** One measure: per file system (by device number). */
export interface DiskMeasure {
  /** Read just before the folders were walked. */
  readonly free: ReadonlyMap<number, FreeSpace>;
  /** What the folders and the nameless files held open took. */
  readonly held: ReadonlyMap<number, number>;
  /** Of that, the nameless files. */
  readonly nameless: number;
  readonly unmeasurable?: string;
}

/** The least a command may leave free on a file system of `size` bytes. */
export function floorBytes(size: number): number {
  return Math.max(GiB, 0.05 * size);
}

export interface Verdict {
  readonly limitMiB: number;
  readonly base: DiskMeasure;
  readonly now: DiskMeasure;
  /** The command's processes may still hold what no walk sees: free space counts then. At its end they are gone, and only the measure does. */
  readonly running: boolean;
  /** A folder on the file system `dev`, to name it. */
  readonly where: (dev: number) => string;
}

/** The reason the command must stop, or undefined. */
export function diskVerdict(v: Verdict): string | undefined {
  const hit = `hit the disk limit (${v.limitMiB} MiB)`;
  const limit = v.limitMiB * MiB;
  const total = sum(v.now.held.values());
  if (v.now.unmeasurable !== undefined) return `${hit}: ${v.now.unmeasurable}, and what cannot be measured counts as over the limit`;
  const nameless = v.now.nameless > 0 ? `, ${mib(v.now.nameless)} MiB of it in files deleted but still held open` : '';
  if (total > limit) return `${hit}: the clone and home held ${mib(total)} MiB${nameless}`;
  let unexplained = 0;
  let newFiles = 0;
  let floor: string | undefined;
  for (const [dev, free] of v.now.free) {
    const before = v.base.free.get(dev);
    if (before === undefined) continue;
    const grown = (v.now.held.get(dev) ?? 0) - (v.base.held.get(dev) ?? 0);
    const lost = before.bytes - free.bytes;
    if (v.running) {
      unexplained += Math.max(0, lost - grown);
      newFiles += before.files - free.files;
    }
    const wrote = v.running ? Math.max(grown, lost) : grown;
    if (floor === undefined && wrote > 0 && free.avail < floorBytes(free.size)) {
      floor = `left less than ${size(floorBytes(free.size))} free on the disk of ${v.where(dev)} (${size(free.avail)} free; the floor is the larger of 1 GiB and 5% of the disk), having written ${size(wrote)} there`;
    }
  }
  if (total + unexplained > limit) {
    return `${hit}: the disk lost ${mib(unexplained)} MiB more than the clone and home (${mib(total)} MiB) account for, and it is counted as theirs (read from free space alone: another process writing to the same disk would look the same)`;
  }
  if (newFiles > MAX_NEW_FILES) {
    return `${hit}: the disk lost ${newFiles.toLocaleString('en-US')} inodes while the command ran, more than ${MAX_NEW_FILES.toLocaleString('en-US')} (read from the free inode count alone: another process making files on the same disk would look the same)`;
  }
  return floor;
}

export class DiskWatch {
  readonly #paths: readonly string[];
  /** The device of each path (undefined: it is missing). */
  readonly #devices: readonly (number | undefined)[];
  readonly #limitMiB: number;
  readonly #base: DiskMeasure;
  #last: DiskMeasure;
  #lastAt: number;
  #lastTook = 0;
  #members: () => readonly number[] = () => [];
  #onExceeded: (reason: string) => void = () => undefined;
  #timer: NodeJS.Timeout | undefined;
  #measuring: Promise<string | undefined> | undefined;
  readonly #abort = new AbortController();
  #reason: string | undefined;

  private constructor(paths: readonly string[], devices: readonly (number | undefined)[], limitMiB: number, base: DiskMeasure) {
    this.#paths = paths;
    this.#devices = devices;
    this.#limitMiB = limitMiB;
    this.#base = base;
    this.#last = base;
    this.#lastAt = Date.now();
  }

  /** Measures the baseline: call it before the command starts, then `begin` once it has. */
  static async start(paths: readonly string[], limitMiB: number): Promise<DiskWatch> {
    const devices = paths.map(deviceOf);
    const base = (await measure(paths, devices, () => [])) ?? { free: new Map(), held: new Map(), nameless: 0 };
    return new DiskWatch(paths, devices, limitMiB, base);
  }

  /** Polls from now on; `members` lists the command's processes, whose open files count. */
  begin(members: () => readonly number[], onExceeded: (reason: string) => void): void {
    this.#members = members;
    this.#onExceeded = onExceeded;
    this.#timer = setInterval(() => void this.#tick(), POLL_MS);
    this.#timer.unref();
  }

  /** Stops polling, then measures once more: a command shorter than a poll may still have filled the disk. */
  async finish(): Promise<string | undefined> {
    clearInterval(this.#timer);
    if (this.#measuring !== undefined) await this.#measuring;
    if (this.#reason === undefined) this.#reason = await this.#check(false);
    this.stop();
    return this.#reason;
  }

  /** Stops without a last measure (the command could not start); a measure under way is cut short. */
  stop(): void {
    clearInterval(this.#timer);
    this.#abort.abort();
  }

  async #tick(): Promise<void> {
    if (this.#measuring !== undefined || this.#abort.signal.aborted || this.#reason !== undefined) return;
    if (!this.#worthMeasuring()) return;
    this.#measuring = this.#check(true);
    const reason = await this.#measuring;
    this.#measuring = undefined;
    if (reason !== undefined && !this.#abort.signal.aborted && this.#reason === undefined) {
      this.#reason = reason;
      this.#onExceeded(reason);
    }
  }

  /** Whether free space says the folders could be over (or the last measure is old): then they are measured. */
  #worthMeasuring(): boolean {
    if (Date.now() - this.#lastAt >= Math.max(RECHECK_MS, RECHECK_PER_MEASURE_MS * this.#lastTook)) return true;
    const now: DiskMeasure = { ...this.#last, free: freeSpaces(this.#paths, this.#devices) };
    return diskVerdict({ limitMiB: this.#limitMiB, base: this.#base, now, running: true, where: (dev) => this.#where(dev) }) !== undefined;
  }

  async #check(running: boolean): Promise<string | undefined> {
    const started = Date.now();
    const now = await measure(this.#paths, this.#devices, this.#members, this.#abort.signal);
    if (now === undefined) return undefined;
    this.#last = now;
    this.#lastAt = Date.now();
    this.#lastTook = this.#lastAt - started;
    return diskVerdict({ limitMiB: this.#limitMiB, base: this.#base, now, running, where: (dev) => this.#where(dev) });
  }

  #where(dev: number): string {
    return this.#paths[this.#devices.indexOf(dev)] ?? 'the clone';
  }
}

/** Free space first, then the folders and the nameless files held open; undefined when stopped. Never throws: what fails is unmeasurable. */
async function measure(paths: readonly string[], devices: readonly (number | undefined)[], members: () => readonly number[], signal?: AbortSignal): Promise<DiskMeasure | undefined> {
  const free = freeSpaces(paths, devices);
  let usage: Awaited<ReturnType<typeof measureFolders>>;
  try {
    usage = await measureFolders(paths, signal);
  } catch (error) {
    return { free, held: new Map(), nameless: 0, unmeasurable: `could not measure the disk: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (usage === undefined) return undefined;
  const known = new Set(devices.filter((dev): dev is number => dev !== undefined));
  const nameless = heldOpenBytes(members(), known);
  const held = new Map<number, number>(nameless);
  devices.forEach((dev, index) => {
    if (dev !== undefined) held.set(dev, (held.get(dev) ?? 0) + (usage.perFolder[index] ?? 0));
  });
  return { free, held, nameless: sum(nameless.values()), ...(usage.unmeasurable !== undefined ? { unmeasurable: usage.unmeasurable } : {}) };
}

function freeSpaces(paths: readonly string[], devices: readonly (number | undefined)[]): Map<number, FreeSpace> {
  const free = new Map<number, FreeSpace>();
  paths.forEach((folder, index) => {
    const dev = devices[index];
    if (dev === undefined || free.has(dev)) return;
    try {
      const stats = fs.statfsSync(folder);
      free.set(dev, { bytes: stats.bfree * stats.bsize, avail: stats.bavail * stats.bsize, size: stats.blocks * stats.bsize, files: stats.ffree });
    } catch {
      // gone: it holds nothing more
    }
  });
  return free;
}

function deviceOf(folder: string): number | undefined {
  try {
    return fs.statSync(folder).dev;
  } catch {
    return undefined;
  }
}

function sum(values: Iterable<number>): number {
  let total = 0;
  for (const value of values) total += value;
  return total;
}

function mib(bytes: number): number {
  return Math.ceil(bytes / MiB);
}

function size(bytes: number): string {
  return bytes >= GiB ? `${(bytes / GiB).toFixed(1)} GiB` : `${mib(bytes)} MiB`;
}
