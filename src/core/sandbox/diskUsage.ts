import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isExecutable } from '../process/executable';

/**
 * What folders hold on disk, for the disk limit (docs/architecture.md,
 * "Sandbox", limits): the blocks really allocated (a sparse file costs what
 * it takes, a `posix_fallocate` reservation all it reserved), symlinks never
 * followed, a hard-linked file once, one file system per folder.
 *
 * GNU `du -sxB1`, as a child of Candor's: it walks with fts and `openat`, so
 * no depth breaks it. A walk in Node cannot do that: it has no `openat`,
 * every path it names is whole, and past `PATH_MAX` (25 folders of 200
 * characters) `lstat` fails; `process.chdir` would move the whole extension
 * host. Where there is no GNU du (macOS, busybox) the walk in Node is the
 * fallback.
 *
 * Either way, a part that cannot be measured (unreadable, too deep, an I/O
 * error) is said so, never counted as 0: the caller counts it as over the
 * limit. An entry that vanished while it was walked held nothing.
 */

export interface FolderUsage {
  /** Bytes allocated under all the folders together. */
  readonly bytes: number;
  /** Each folder's share, in the order given (a hard link counted in the first that holds it; 0 for a folder that is missing). */
  readonly perFolder: readonly number[];
  /** Why part of it could not be measured: `bytes` is then less than the whole. */
  readonly unmeasurable?: string;
}

/** The fallback walk stops here, and says so: a flood of files is no reason to hold the walk for minutes. */
export const MAX_WALKED_ENTRIES = 1_000_000;
/** Entries walked between two turns of the event loop, so the fallback walk never holds the host's thread for long. */
const SLICE = 2000;
/** du's errors kept to say why: only the first one that is not a vanished entry is needed. */
const VANISHED = /: No such file or directory$/;

/** Measures `folders`; undefined when `signal` stopped it first. */
export async function measureFolders(folders: readonly string[], signal?: AbortSignal): Promise<FolderUsage | undefined> {
  const du = await gnuDu();
  return du !== undefined ? runDu(du, folders, signal) : walkFolders(folders, signal);
}

let found: Promise<string | undefined> | undefined;

/** GNU du from the system's folders only (never a PATH entry a repository could plant one in); undefined when it is not GNU's. */
function gnuDu(): Promise<string | undefined> {
  found ??= (async () => {
    if (process.platform !== 'linux') return undefined;
    const file = ['/usr/bin/du', '/bin/du'].find(isExecutable);
    if (file === undefined) return undefined;
    const version = await capture(file, ['--version']);
    return version.code === 0 && /GNU coreutils/.test(version.stdout) ? file : undefined;
  })();
  return found;
}

async function runDu(du: string, folders: readonly string[], signal: AbortSignal | undefined): Promise<FolderUsage | undefined> {
  if (folders.length === 0) return { bytes: 0, perFolder: [] };
  // -s one total per folder, -x one file system, -B1 bytes, -0 NUL after each line (a folder's name may hold a newline).
  const run = await capture(du, ['-sxB1', '-0', '--', ...folders], signal);
  if (run.aborted) return undefined;
  const perFolder = folders.map(() => 0);
  for (const record of run.stdout.split('\0')) {
    const tab = record.indexOf('\t');
    if (tab < 0) continue;
    const index = folders.indexOf(record.slice(tab + 1));
    const bytes = Number(record.slice(0, tab));
    if (index >= 0 && Number.isFinite(bytes)) perFolder[index] = bytes;
  }
  const bytes = perFolder.reduce((sum, each) => sum + each, 0);
  if (run.error !== undefined) return { bytes, perFolder, unmeasurable: `could not run du: ${run.error}` };
  if (run.firstError !== undefined) return { bytes, perFolder, unmeasurable: run.firstError.replace(/^\S*du: /, '') };
  if (run.code !== 0 && run.errorLines === 0) return { bytes, perFolder, unmeasurable: `du ended with ${run.code ?? run.signal}` };
  return { bytes, perFolder };
}

interface Captured {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** The first line on stderr that is not about an entry that vanished. */
  readonly firstError?: string;
  readonly errorLines: number;
  readonly error?: string;
  readonly aborted: boolean;
}

/** Runs `file args` with a plain C locale; stdout whole (a few lines), stderr read line by line and kept only as the first real error. */
function capture(file: string, args: readonly string[], signal?: AbortSignal): Promise<Captured> {
  return new Promise((resolve) => {
    let stdout = '';
    let pending = '';
    let firstError: string | undefined;
    let errorLines = 0;
    const onLine = (line: string): void => {
      if (line === '') return;
      errorLines++;
      if (firstError === undefined && !VANISHED.test(line)) firstError = line;
    };
    const child = spawn(file, [...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { LC_ALL: 'C', PATH: '/usr/bin:/bin' }, signal, windowsHide: true });
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => {
      const lines = (pending + chunk.toString('utf8')).split('\n');
      pending = lines.pop() ?? '';
      lines.forEach(onLine);
    });
    child.on('error', (error) => {
      if (signal?.aborted === true) resolve({ code: null, signal: null, stdout, errorLines, aborted: true });
      else resolve({ code: null, signal: null, stdout, errorLines, error: error.message, aborted: false });
    });
    child.on('close', (code, killedBy) => {
      onLine(pending);
      resolve({ code, signal: killedBy, stdout, errorLines, aborted: signal?.aborted === true, ...(firstError !== undefined ? { firstError } : {}) });
    });
  });
}

/** The same measure in Node, in slices; what it cannot reach is unmeasurable. */
async function walkFolders(folders: readonly string[], signal: AbortSignal | undefined): Promise<FolderUsage | undefined> {
  const seen = new Set<string>();
  const perFolder: number[] = [];
  let entries = 0;
  for (const folder of folders) {
    const walked = await walk(folder, seen, MAX_WALKED_ENTRIES - entries, signal);
    if (walked === undefined) return undefined;
    perFolder.push(walked.bytes);
    entries += walked.entries;
    if (walked.unmeasurable !== undefined) return { bytes: sum(perFolder), perFolder: [...perFolder, ...folders.slice(perFolder.length).map(() => 0)], unmeasurable: walked.unmeasurable };
  }
  return { bytes: sum(perFolder), perFolder };
}

interface Walked {
  readonly bytes: number;
  readonly entries: number;
  readonly unmeasurable?: string;
}

/** The bytes allocated under `root` (the root itself followed, nothing beneath it); undefined when stopped. */
async function walk(root: string, seen: Set<string>, budget: number, signal: AbortSignal | undefined): Promise<Walked | undefined> {
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
  const rootStats = statOf(root, fs.statSync);
  if (rootStats instanceof Error) return isVanished(rootStats) ? { bytes: 0, entries: 0 } : { bytes, entries, unmeasurable: `cannot access '${root}': ${rootStats.message}` };
  count(rootStats);
  const folders = rootStats.isDirectory() ? [root] : [];
  let slice = 0;
  while (folders.length > 0) {
    const folder = folders.pop() ?? root;
    let names: string[];
    try {
      names = fs.readdirSync(folder);
    } catch (error) {
      if (isVanished(error)) continue;
      return { bytes, entries, unmeasurable: `cannot read directory '${folder}': ${(error as Error).message}` };
    }
    for (const name of names) {
      if (entries > budget) return { bytes, entries, unmeasurable: `more than ${MAX_WALKED_ENTRIES.toLocaleString('en-US')} files to walk` };
      const full = `${folder}${path.sep}${name}`;
      const stats = statOf(full, fs.lstatSync);
      if (stats instanceof Error) {
        if (isVanished(stats)) continue;
        return { bytes, entries, unmeasurable: `cannot access '${full.length > 200 ? `…${full.slice(-200)}` : full}': ${stats.message}` };
      }
      count(stats);
      if (stats.isDirectory()) folders.push(full);
      if (++slice >= SLICE) {
        slice = 0;
        await new Promise((resolve) => setImmediate(resolve));
        if (signal?.aborted === true) return undefined;
      }
    }
  }
  return { bytes, entries };
}

function statOf(file: string, stat: (file: string) => fs.Stats): fs.Stats | Error {
  try {
    return stat(file);
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

function isVanished(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}

function sum(values: readonly number[]): number {
  return values.reduce((total, each) => total + each, 0);
}

