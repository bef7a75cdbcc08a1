import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { KindError, isKindError } from '../kindError';

/**
 * The one lock-file rule, shared by processes on one machine (two VS Code
 * windows, the CLI): the evolution run lock of a repository, which refuses at
 * once, and the write lock of traces.sqlite, which waits a little.
 *
 * The file is created with O_EXCL and holds pid, host, start time and a
 * token. A lock is stale, and taken over, when its process is gone; when it
 * names this process but no holder here has its token (left by an earlier
 * run of ours); when it is older than `staleMs` (a reused pid); or when it
 * stayed unreadable past a short grace (its owner died between create and
 * write). A lock from another host cannot be checked and always stands.
 * Releasing removes only our own lock.
 */

export interface LockInfo {
  readonly pid: number;
  readonly host: string;
  readonly started: string;
  readonly token: string;
}

export interface HeldLock {
  readonly info: LockInfo;
  /** Set when this lock replaced a stale one. */
  readonly tookOver?: LockInfo;
  release(): void;
}

export class LockBusyError extends KindError<'busy'> {
  override readonly name = 'LockBusyError';
  constructor(
    readonly lockFile: string,
    /** Who holds it, when the file could be read. */
    readonly holder: LockInfo | undefined,
    message: string,
  ) {
    super('busy', message);
  }
}

export interface LockOptions {
  /** Whose lock it is, for the busy message: "another evolution run" … */
  readonly holderName?: string;
  /** … "for this repository" → "another evolution run is in progress for this repository (pid …)". */
  readonly holderOf?: string;
  /** A lock older than this is stale whatever its pid says; default: no age limit. */
  readonly staleMs?: number;
  readonly clock?: () => Date;
}

/** An unreadable lock younger than this belongs to a process between its create and its write. */
const HALF_WRITTEN_GRACE_MS = 5000;

/** Tokens of the locks this process holds. */
const held = new Set<string>();

/** Takes the lock now, or throws LockBusyError. */
export function tryLock(file: string, options: LockOptions = {}): HeldLock {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const info: LockInfo = { pid: process.pid, host: os.hostname(), started: (options.clock?.() ?? new Date()).toISOString(), token: randomUUID() };
  const who = options.holderName ?? 'another process';
  const of = options.holderOf ?? `for ${file}`;
  let tookOver: LockInfo | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (create(file, info)) {
      held.add(info.token);
      return { info, ...(tookOver !== undefined ? { tookOver } : {}), release: () => release(file, info.token) };
    }
    const current = readLock(file);
    if (current === undefined && ageMs(file) < HALF_WRITTEN_GRACE_MS) {
      throw new LockBusyError(file, undefined, `${who} is starting ${of}; try again when it ends`);
    }
    if (current !== undefined && isLive(file, current, options.staleMs)) {
      throw new LockBusyError(file, current, `${who} is in progress ${of} (pid ${current.pid} on ${current.host || 'this machine'}, started ${current.started}); try again when it ends`);
    }
    if (takeOver(file, current)) tookOver = current ?? tookOver;
  }
  throw new LockBusyError(file, readLock(file), `could not take the lock ${file}: another process keeps taking it`);
}

export interface WaitOptions {
  /** How long to wait for the lock; default 10 s. */
  readonly timeoutMs?: number;
  /** The pause between two tries; default a real timer. Tests pass one that moves `clock` instead. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Holds the lock while `work` runs, waiting up to `timeoutMs` (default 10 s, on `clock`) for it; then LockBusyError. */
export async function withLock<T>(file: string, work: () => T | Promise<T>, options: LockOptions & WaitOptions = {}): Promise<T> {
  const now = (): number => (options.clock?.() ?? new Date()).getTime();
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now() + (options.timeoutMs ?? 10_000);
  let lock: HeldLock | undefined;
  for (let attempt = 0; lock === undefined; attempt++) {
    try {
      lock = tryLock(file, options);
    } catch (err) {
      if (!isKindError(err, LockBusyError) || now() > deadline) throw err;
      await sleep(Math.min(50, 2 + attempt) + Math.random() * 5);
    }
  }
  try {
    return await work();
  } finally {
    lock.release();
  }
}

export function readLock(file: string): LockInfo | undefined {
  try {
    const value = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<LockInfo>;
    if (typeof value.pid !== 'number' || typeof value.token !== 'string') return undefined;
    return { pid: value.pid, host: String(value.host ?? ''), started: String(value.started ?? ''), token: value.token };
  } catch {
    return undefined;
  }
}

/** Whether a process with this pid exists (EPERM: it does, and belongs to someone else). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function create(file: string, info: LockInfo): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o644);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    // `ts`: what versions before this module read in the traces.sqlite lock.
    fs.writeSync(fd, `${JSON.stringify({ ...info, ts: Date.now() })}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

function isLive(file: string, lock: LockInfo, staleMs: number | undefined): boolean {
  // A lock from another machine (a data folder on a network share) cannot be checked: it stands.
  if (lock.host !== '' && lock.host !== os.hostname()) return true;
  if (lock.pid === process.pid) return held.has(lock.token);
  if (staleMs !== undefined && ageMs(file) > staleMs) return false;
  return isAlive(lock.pid);
}

/** How long ago the lock file was written (it is written once); 0 when it is gone. */
function ageMs(file: string): number {
  try {
    return Date.now() - fs.statSync(file).mtimeMs;
  } catch {
    return 0;
  }
}

/**
 * Moves the stale lock aside (an atomic rename) and removes it — unless what
 * moved is not the lock judged stale: another process broke it and took a
 * live one in between, and that one is put back.
 */
function takeOver(file: string, stale: LockInfo | undefined): boolean {
  const aside = `${file}.${process.pid}.${randomUUID().slice(0, 8)}.stale`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return false;
  }
  const moved = readLock(aside);
  if (moved !== undefined && moved.token !== stale?.token) {
    try {
      fs.linkSync(aside, file);
    } catch {
      // a third process already holds a new lock; theirs wins
    }
    fs.rmSync(aside, { force: true });
    return false;
  }
  fs.rmSync(aside, { force: true });
  return true;
}

function release(file: string, token: string): void {
  held.delete(token);
  if (readLock(file)?.token === token) fs.rmSync(file, { force: true });
}
