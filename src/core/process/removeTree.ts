import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KindError } from '../kindError';

/**
 * Removal at any depth (docs/architecture.md, "What runs"). Node's `fs.rm`
 * walks by full path: past `PATH_MAX` (25 folders of 200 characters) every
 * call fails with `ENAMETOOLONG`, after part of the tree is gone. The
 * system's `rm`, `find` and `chmod` walk with `openat` (fts) and do not. So
 * what a sandboxed command may have filled (the scratch clone, a throwaway
 * home) is removed by them, as host child processes with a fixed
 * environment, never crossing into another file system (`--one-file-system`),
 * never following a link. Not root, a folder the command made unreadable is
 * first made the user's to enter (`chmod u+rwx`); root needs no such step.
 */

export class RemovalError extends KindError<'removal'> {
  override readonly name = 'RemovalError';
}

/** The system folders the removal tools are taken from: never PATH, which a workspace may shape. */
const SYSTEM_DIRS = ['/usr/bin', '/bin'];
const ENV = { PATH: SYSTEM_DIRS.join(':'), LC_ALL: 'C' };
/** GNU rm's flag; the BSD rm of macOS spells it `-x`. */
const ONE_FILE_SYSTEM = process.platform === 'linux' ? '--one-file-system' : '-x';
/** Arguments of one rm or chmod call at most, in bytes: far below any ARG_MAX. */
const ARGS_BYTES = 64 * 1024;
const TIMEOUT_MS = 10 * 60_000;
/** The most paths `removeEntriesNamed` reports by name. */
const MAX_NAMED = 1000;

const isRoot = (): boolean => process.getuid?.() === 0;

function tool(name: string): string {
  for (const dir of SYSTEM_DIRS) {
    const file = path.join(dir, name);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  throw new RemovalError('removal', `${name} was not found in ${SYSTEM_DIRS.join(' or ')}; Candor removes folders of any depth with it`);
}

/** Removes `target` (a folder, a file, a link: the link itself) and everything under it; nothing when it is absent. */
export async function removeTree(target: string): Promise<void> {
  await removeTrees([target]);
}

/**
 * Removes each of `targets` and everything under it. A folder is removed by
 * `rm -rf`, so depth cannot stop it; a path that is still there afterwards
 * throws `RemovalError` naming it.
 */
export async function removeTrees(targets: readonly string[]): Promise<void> {
  const present: string[] = [];
  const folders: string[] = [];
  // Absolute: the tools run from `/`, never from a folder that may be going.
  for (const target of targets.map((entry) => path.resolve(entry))) {
    const stat = await fs.promises.lstat(target).catch(() => undefined);
    if (stat === undefined) continue;
    present.push(target);
    if (stat.isDirectory()) folders.push(target);
  }
  if (present.length === 0) return;
  if (process.platform === 'win32') {
    for (const target of present) await fs.promises.rm(target, { recursive: true, force: true });
    return;
  }
  // Only real folders are named to chmod: it would follow a link named on its command line.
  if (!isRoot()) for (const batch of batches(folders)) await run(tool('chmod'), ['-R', 'u+rwx', '--', ...batch]);
  let stderr = '';
  for (const batch of batches(present)) stderr = (await run(tool('rm'), ['-rf', ONE_FILE_SYSTEM, '--', ...batch])).stderr || stderr;
  const left = [];
  for (const target of present) if ((await fs.promises.lstat(target).catch(() => undefined)) !== undefined) left.push(target);
  if (left.length > 0) throw new RemovalError('removal', `could not remove ${left[0]}${left.length > 1 ? ` and ${left.length - 1} more` : ''}: ${stderr.trim().split('\n').slice(-3).join('; ') || 'rm left it'}`);
}

/**
 * Removes every entry named `name` (in any case: `.git`, `.GIT`) below
 * `root`, at any depth, whatever it is (a folder, a file, a link), except
 * `root/name` itself; returns their paths relative to `root` (the first
 * thousand). Each is removed from inside its own folder (`find -execdir`),
 * so no path longer than the system allows is ever named.
 */
export async function removeEntriesNamed(folder: string, name: string): Promise<string[]> {
  const root = path.resolve(folder);
  if (!(await fs.promises.lstat(root).catch(() => undefined))?.isDirectory()) return [];
  if (process.platform === 'win32') return removeNamedInProcess(root, name);
  const top = ['(', '-path', `${escapeGlob(root)}/${escapeGlob(name)}`, '-prune', ')', '-o'];
  // Not root: a folder the command made unreadable would hide what is inside it from find (not from git, which needs only `x`).
  if (!isRoot()) await run(tool('find'), [root, '-mindepth', '1', ...top, '(', '-type', 'd', '!', '-perm', '-u=rwx', '-execdir', tool('chmod'), 'u+rwx', '--', '{}', ';', ')']);
  const listed = await run(tool('find'), [root, '-mindepth', '1', ...top, '(', '-iname', name, '-prune', '-print0', '-execdir', tool('rm'), '-rf', ONE_FILE_SYSTEM, '--', '{}', '+', ')']);
  const removed = relativePaths(root, listed.stdout);
  if (listed.code === 0) return removed;
  // find says something failed: only what is still there counts.
  const still = await run(tool('find'), [root, '-mindepth', '1', ...top, '(', '-iname', name, '-prune', '-print0', ')']);
  const left = relativePaths(root, still.stdout);
  if (still.code !== 0 || left.length > 0) {
    throw new RemovalError('removal', `could not remove ${left[0] ?? `every ${name} below ${root}`}${left.length > 1 ? ` and ${left.length - 1} more` : ''}: ${(still.stderr || listed.stderr).trim().split('\n').slice(-3).join('; ')}`);
  }
  return removed;
}

/** Windows has neither tool: a walk here, never through a link (a junction is one too), bounded by what its paths allow. */
async function removeNamedInProcess(root: string, name: string): Promise<string[]> {
  const removed: string[] = [];
  const pending = [root];
  while (pending.length > 0) {
    const folder = pending.pop() as string;
    for (const entry of await fs.promises.readdir(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name);
      if (entry.name.toLowerCase() === name.toLowerCase()) {
        if (full === path.join(root, name)) continue;
        await fs.promises.rm(full, { recursive: true, force: true });
        if (removed.length < MAX_NAMED) removed.push(path.relative(root, full).split(path.sep).join('/'));
      } else if (entry.isDirectory()) pending.push(full);
    }
  }
  return removed;
}

function relativePaths(root: string, stdout: string): string[] {
  // Only whole entries: a listing cut at its cap ends in part of one.
  return stdout
    .split('\0')
    .slice(0, -1)
    .slice(0, MAX_NAMED)
    .map((entry) => path.relative(root, entry).split(path.sep).join('/'));
}

/** `find -path` takes a glob: a data folder named with `[`, `*`, `?` or `\` must match only itself. */
function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]]/g, (c) => `\\${c}`);
}

function batches(paths: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const entry of paths) {
    const size = Buffer.byteLength(entry) + 1;
    if (current.length > 0 && bytes + size > ARGS_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(entry);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}

interface Ran {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** One removal tool; stdout kept up to 1 MiB (the listing of names), stderr its last 4 KiB. */
function run(file: string, args: readonly string[]): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: '/', env: ENV, stdio: ['ignore', 'pipe', 'pipe'], timeout: TIMEOUT_MS, killSignal: 'SIGKILL' });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      if (stdout.length < 1024 * 1024) stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4096);
    });
    child.on('error', (err) => reject(new RemovalError('removal', `${path.basename(file)} could not start: ${err.message}`)));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
