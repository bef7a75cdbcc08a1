import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { EvolutionError } from './errors';

/** What a lock file holds. */
export interface LockInfo {
  readonly pid: number;
  readonly host: string;
  readonly started: string;
  readonly token: string;
}

export interface RunLock {
  readonly info: LockInfo;
  /** Set when this lock replaced one left by a dead run. */
  readonly tookOver?: LockInfo;
  release(): void;
}

/** Tokens of the locks this process holds: a lock with our pid but another token was left by an earlier run of ours. */
const held = new Set<string>();

/**
 * One run at a time per repository: the lock file is created with O_EXCL and
 * holds pid, host and start time. A lock whose process is gone (or one left
 * by this very process, not held any more; or one left unreadable for more
 * than a few seconds) is taken over; a live one refuses with `busy`.
 */
export function acquireRunLock(file: string, clock: () => Date = () => new Date()): RunLock {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const info: LockInfo = { pid: process.pid, host: os.hostname(), started: clock().toISOString(), token: randomUUID() };
  let tookOver: LockInfo | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_WRONLY, 0o644);
      try {
        fs.writeSync(fd, `${JSON.stringify(info)}\n`);
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      held.add(info.token);
      return { info, ...(tookOver !== undefined ? { tookOver } : {}), release: () => release(file, info) };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const current = readLock(file);
    if (current === undefined && youngerThan(file, HALF_WRITTEN_GRACE_MS)) {
      // Created an instant ago by a run that has not written its details yet.
      throw new EvolutionError('busy', 'another evolution run is starting for this repository; try again when it ends');
    }
    if (current !== undefined && isLive(current)) {
      throw new EvolutionError('busy', `another evolution run is in progress for this repository (pid ${current.pid} on ${current.host}, started ${current.started}); try again when it ends`);
    }
    if (takeOver(file, current)) tookOver = current ?? tookOver;
  }
  throw new EvolutionError('busy', `could not take the run lock ${file}: another run keeps taking it`);
}

/** An unreadable lock younger than this is a run between its create and its write. */
const HALF_WRITTEN_GRACE_MS = 5000;

function youngerThan(file: string, ms: number): boolean {
  try {
    return Date.now() - fs.statSync(file).mtimeMs < ms;
  } catch {
    return false;
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

function isLive(lock: LockInfo): boolean {
  // A lock from another machine (a data folder on a network share) cannot be checked: treat it as live.
  if (lock.host !== '' && lock.host !== os.hostname()) return true;
  if (lock.pid === process.pid) return held.has(lock.token);
  try {
    process.kill(lock.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Moves the stale lock aside and removes it — unless, between our read and
 * the move, another process took it over and wrote a live lock: then that
 * one is put back. An unreadable (half-written) lock counts as stale.
 */
function takeOver(file: string, stale: LockInfo | undefined): boolean {
  const aside = `${file}.${process.pid}.${Date.now()}.stale`;
  try {
    fs.renameSync(file, aside);
  } catch {
    return false;
  }
  const moved = readLock(aside);
  if (moved !== undefined && moved.token !== stale?.token && isLive(moved)) {
    try {
      fs.linkSync(aside, file);
    } catch {
      // someone else holds it now; theirs wins
    }
    fs.rmSync(aside, { force: true });
    return false;
  }
  fs.rmSync(aside, { force: true });
  return true;
}

function release(file: string, info: LockInfo): void {
  held.delete(info.token);
  const current = readLock(file);
  if (current?.token === info.token) fs.rmSync(file, { force: true });
}
