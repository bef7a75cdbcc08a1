import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';

/**
 * A lock file shared by processes on one machine (two VS Code windows, the
 * CLI): created with O_EXCL, holding the owner's pid. A lock whose pid is
 * dead, or that is older than `staleMs` (a reused pid), or that stayed empty
 * (its owner died between create and write), is broken.
 */

export class LockTimeoutError extends Error {
  readonly kind = 'locked';
  constructor(readonly lockFile: string) {
    super(`${lockFile} is held by another writer`);
    this.name = 'LockTimeoutError';
  }
}

export interface LockOptions {
  /** Give up after this long (default 10 s). */
  readonly timeoutMs?: number;
  /** A lock older than this is stale whatever its pid (default 5 min). */
  readonly staleMs?: number;
}

interface LockContent {
  readonly pid: number;
  readonly token: string;
  readonly ts: number;
}

const EMPTY_LOCK_GRACE_MS = 2_000;

/** Holds the lock while `work` runs. */
export async function withFileLock<T>(lockFile: string, work: () => T | Promise<T>, options: LockOptions = {}): Promise<T> {
  const release = await acquire(lockFile, options);
  try {
    return await work();
  } finally {
    release();
  }
}

async function acquire(lockFile: string, options: LockOptions): Promise<() => void> {
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const staleMs = options.staleMs ?? 5 * 60_000;
  const token = randomBytes(8).toString('hex');
  for (let attempt = 0; ; attempt++) {
    if (tryCreate(lockFile, token)) return () => release(lockFile, token);
    const raw = readRaw(lockFile);
    if (raw !== undefined && isStale(lockFile, raw, staleMs)) {
      breakStale(lockFile, raw);
      continue;
    }
    if (Date.now() > deadline) throw new LockTimeoutError(lockFile);
    await sleep(Math.min(50, 2 + attempt) + Math.random() * 5);
  }
}

function tryCreate(lockFile: string, token: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(lockFile, 'wx');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    const content: LockContent = { pid: process.pid, token, ts: Date.now() };
    fs.writeSync(fd, JSON.stringify(content));
  } finally {
    fs.closeSync(fd);
  }
  return true;
}

function release(lockFile: string, token: string): void {
  // Remove only our own lock: if ours was broken as stale, the file is someone else's now.
  const raw = readRaw(lockFile);
  if (raw !== undefined && parse(raw)?.token === token) fs.rmSync(lockFile, { force: true });
}

function readRaw(lockFile: string): string | undefined {
  try {
    return fs.readFileSync(lockFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function parse(raw: string): LockContent | undefined {
  try {
    const value = JSON.parse(raw) as Partial<LockContent>;
    if (typeof value.pid === 'number' && typeof value.token === 'string' && typeof value.ts === 'number') return value as LockContent;
  } catch {
    // an empty or torn lock file
  }
  return undefined;
}

function isStale(lockFile: string, raw: string, staleMs: number): boolean {
  const content = parse(raw);
  if (!content) {
    try {
      return Date.now() - fs.statSync(lockFile).mtimeMs > EMPTY_LOCK_GRACE_MS;
    } catch {
      return false;
    }
  }
  return !isAlive(content.pid) || Date.now() - content.ts > staleMs;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Moves the stale lock aside (an atomic rename), then checks that what moved
 * is the lock judged stale: if another process broke it and took a fresh lock
 * in between, that fresh lock is put back.
 */
function breakStale(lockFile: string, staleRaw: string): void {
  const aside = `${lockFile}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(lockFile, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const moved = readRaw(aside);
  if (moved !== undefined && moved !== staleRaw) {
    try {
      fs.linkSync(aside, lockFile);
    } catch {
      // a third writer already holds a new lock; the one we moved was released meanwhile
    }
  }
  fs.rmSync(aside, { force: true });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
