import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * A cgroup of its own for one gate command (docs/architecture.md, "Sandbox",
 * limits): the kernel then bounds the processes and the memory of everything
 * the command starts, escaped process groups and sessions included, counts
 * what it refused (`pids.events`, the OOM kills), and lets Candor kill all of
 * it at the end.
 *
 * cgroup v2 first, then v1, per controller, where the folder is writable
 * (as root, or where the cgroup is delegated). The gate's cgroup is made
 * beneath Candor's own cgroup, so whatever bounds Candor bounds it too. On
 * v2 a cgroup with processes cannot hand controllers to children (the "no
 * internal processes" rule), so the parent's is tried after Candor's own:
 * the gate's cgroup is then Candor's sibling. Nothing here writes
 * `cgroup.subtree_control`: which controllers a cgroup hands down is the
 * init system's business.
 */

export type CgroupController = 'pids' | 'memory';

export interface CgroupMount {
  readonly version: 1 | 2;
  /** The folder of the hierarchy this mount shows (relative to the cgroup namespace). */
  readonly root: string;
  readonly mountPoint: string;
  /** v1: the controllers of the hierarchy; v2: empty (see cgroup.controllers). */
  readonly controllers: readonly string[];
}

/** Where this process sits: the v2 path (`0::/…`), and the v1 path per controller. */
export interface CgroupMembership {
  readonly v2?: string;
  readonly v1: ReadonlyMap<string, string>;
}

/** The cgroup mounts in `/proc/self/mountinfo`. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const [fsType, , superOptions = ''] = right.split(' ');
    const root = fields[3];
    const mountPoint = fields[4];
    if (root === undefined || mountPoint === undefined) continue;
    if (fsType === 'cgroup2') mounts.push({ version: 2, root: unescape(root), mountPoint: unescape(mountPoint), controllers: [] });
    if (fsType === 'cgroup') mounts.push({ version: 1, root: unescape(root), mountPoint: unescape(mountPoint), controllers: superOptions.split(',') });
  }
  return mounts;
}

/** `/proc/self/cgroup`: `hierarchy-id:controllers:path` per line. */
export function parseMembership(text: string): CgroupMembership {
  let v2: string | undefined;
  const v1 = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (match === null) continue;
    const [, id, controllers = '', where = ''] = match;
    if (id === '0' && controllers === '') v2 = where;
    else for (const controller of controllers.split(',')) v1.set(controller, where);
  }
  return { v2, v1 };
}

/** The folder of cgroup `where` under `mount`, or undefined when the mount does not show it. */
export function cgroupFolder(mount: CgroupMount, where: string): string | undefined {
  const relative = path.posix.relative(mount.root, where);
  if (relative.startsWith('..') || path.posix.isAbsolute(relative)) return undefined;
  return path.join(mount.mountPoint, relative);
}

/** Octal escapes of mountinfo (`\040` for a space). */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

export interface CgroupWants {
  readonly pids?: number;
  readonly memoryBytes?: number;
}

export interface CgroupReport {
  /** Forks the pids controller refused. */
  readonly pidsRefused: number;
  /** Processes the memory controller's OOM killer ended. */
  readonly oomKills: number;
}

/** A made cgroup, one folder per hierarchy that holds a wanted controller. */
export interface GateCgroup {
  /** The controllers in force, and which cgroup version enforces each. */
  readonly controllers: Partial<Record<CgroupController, 1 | 2>>;
  /** The `cgroup.procs` files a process writes its pid into to join. */
  readonly procsFiles: readonly string[];
  report(): CgroupReport;
  /** SIGKILL to everything in it now (one pass). */
  killAll(): void;
  /** Kill everything in it, wait until it is empty, remove it. Never throws. */
  close(): Promise<void>;
}

export interface CgroupSystem {
  readonly mountinfo: string;
  readonly membership: string;
}

function readSystem(): CgroupSystem | undefined {
  try {
    return { mountinfo: fs.readFileSync('/proc/self/mountinfo', 'utf8'), membership: fs.readFileSync('/proc/self/cgroup', 'utf8') };
  } catch {
    return undefined;
  }
}

let sequence = 0;
const swept = new Set<string>();
/**
 * Names carry the PID namespace with the pid, so the sweep never takes
 * another container's live gate (same cgroup, other pids) for a dead one.
 */
const PID_NAMESPACE = (() => {
  try {
    return /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1] ?? '0';
  } catch {
    return '0';
  }
})();
const NAME_PREFIX = `candor-gate-${PID_NAMESPACE}-`;

/** A cgroup for one command with the wanted limits, or undefined when none can be made here. */
export function createGateCgroup(wants: CgroupWants, system: CgroupSystem | undefined = readSystem()): GateCgroup | undefined {
  if (process.platform !== 'linux' || system === undefined) return undefined;
  const mounts = parseCgroupMounts(system.mountinfo);
  const membership = parseMembership(system.membership);
  const wanted: CgroupController[] = [];
  if (wants.pids !== undefined) wanted.push('pids');
  if (wants.memoryBytes !== undefined) wanted.push('memory');
  if (wanted.length === 0) return undefined;
  const name = `${NAME_PREFIX}${process.pid}-${++sequence}`;
  const folders: string[] = [];
  const controllers: Partial<Record<CgroupController, 1 | 2>> = {};
  const settle = (folder: string, version: 1 | 2, offered: readonly CgroupController[]): void => {
    const granted = offered.filter((controller) => controllers[controller] === undefined && applyLimit(folder, controller, version, wants));
    if (granted.length === 0) return void removeFolder(folder);
    for (const controller of granted) controllers[controller] = version;
    folders.push(folder);
  };
  const v2 = v2Candidate(mounts, membership, wanted);
  if (v2 !== undefined) {
    const folder = makeFolder(v2.parent, name);
    if (folder !== undefined) settle(folder, 2, v2.controllers);
  }
  for (const mount of mounts) {
    if (mount.version !== 1) continue;
    const offered = wanted.filter((controller) => controllers[controller] === undefined && mount.controllers.includes(controller));
    const where = offered[0] === undefined ? undefined : membership.v1.get(offered[0]);
    const parent = where === undefined ? undefined : cgroupFolder(mount, where);
    const folder = parent === undefined ? undefined : makeFolder(parent, name);
    if (folder !== undefined) settle(folder, 1, offered);
  }
  if (folders.length === 0) return undefined;
  return gateCgroup(folders, controllers);
}

/** The v2 folder to make the gate's cgroup in: Candor's own, else its parent, whichever hands down a wanted controller. */
function v2Candidate(mounts: readonly CgroupMount[], membership: CgroupMembership, wanted: readonly CgroupController[]): { parent: string; controllers: CgroupController[] } | undefined {
  const mount = mounts.find((each) => each.version === 2);
  if (mount === undefined || membership.v2 === undefined) return undefined;
  const own = cgroupFolder(mount, membership.v2);
  const parent = membership.v2 === '/' ? undefined : cgroupFolder(mount, path.posix.dirname(membership.v2));
  for (const folder of [own, parent]) {
    if (folder === undefined) continue;
    const handed = readText(path.join(folder, 'cgroup.subtree_control')).split(/\s+/);
    const controllers = wanted.filter((controller) => handed.includes(controller));
    if (controllers.length > 0) return { parent: folder, controllers };
  }
  return undefined;
}

function makeFolder(parent: string, name: string): string | undefined {
  sweepStale(parent);
  const folder = path.join(parent, name);
  try {
    fs.mkdirSync(folder);
    return folder;
  } catch {
    return undefined;
  }
}

/** Writes the limit of `controller`; false when the kernel refused it. */
function applyLimit(folder: string, controller: CgroupController, version: 1 | 2, wants: CgroupWants): boolean {
  try {
    if (controller === 'pids') {
      fs.writeFileSync(path.join(folder, 'pids.max'), String(wants.pids));
      return true;
    }
    const bytes = String(wants.memoryBytes);
    if (version === 2) {
      fs.writeFileSync(path.join(folder, 'memory.max'), bytes);
      // Swap would stretch the limit and stall the host: the gate gets none.
      writeIfPresent(path.join(folder, 'memory.swap.max'), '0');
    } else {
      fs.writeFileSync(path.join(folder, 'memory.limit_in_bytes'), bytes);
      writeIfPresent(path.join(folder, 'memory.memsw.limit_in_bytes'), bytes);
    }
    return true;
  } catch {
    return false;
  }
}

function writeIfPresent(file: string, value: string): void {
  if (fs.existsSync(file)) fs.writeFileSync(file, value);
}

function gateCgroup(folders: readonly string[], controllers: Partial<Record<CgroupController, 1 | 2>>): GateCgroup {
  const eventCount = (file: string, key: string): number => {
    const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(readText(file));
    return match === null ? 0 : Number(match[1]);
  };
  return {
    controllers,
    procsFiles: folders.map((folder) => path.join(folder, 'cgroup.procs')),
    report() {
      let pidsRefused = 0;
      let oomKills = 0;
      for (const folder of folders) {
        pidsRefused += eventCount(path.join(folder, 'pids.events'), 'max');
        oomKills += eventCount(path.join(folder, 'memory.events'), 'oom_kill') + eventCount(path.join(folder, 'memory.oom_control'), 'oom_kill');
      }
      return { pidsRefused, oomKills };
    },
    killAll() {
      for (const folder of folders) killMembers(folder);
    },
    async close() {
      await Promise.all(folders.map((folder) => emptyAndRemove(folder)));
    },
  };
}

/**
 * SIGKILL to every process in the folder. v2's `cgroup.kill` does it in the
 * kernel at once; on v1 the pids are read and killed one by one, which can
 * miss a process forked in between (the next pass gets it) and, in theory,
 * hit a reused pid in the microseconds between read and kill.
 */
function killMembers(folder: string): number {
  const killFile = path.join(folder, 'cgroup.kill');
  if (fs.existsSync(killFile)) {
    try {
      fs.writeFileSync(killFile, '1');
    } catch {
      // fall through to the one-by-one kill
    }
  }
  const pids = readText(path.join(folder, 'cgroup.procs')).split('\n').filter((line) => /^\d+$/.test(line));
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return pids.length;
}

/** How long to wait for the members to be gone: short at first (they were killed a moment ago and are usually gone within a millisecond), about 2 s in all. */
const CLOSE_WAITS_MS = [1, 2, 4, 8, 16, 32, ...Array<number>(38).fill(50)];

async function emptyAndRemove(folder: string): Promise<void> {
  for (const wait of [0, ...CLOSE_WAITS_MS]) {
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (killMembers(folder) === 0 && removeFolder(folder)) return;
  }
  // Left behind: a process in uninterruptible sleep. The next gate's sweep removes the folder.
}

function removeFolder(folder: string): boolean {
  try {
    fs.rmdirSync(folder);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/** Gate cgroups a crashed Candor left behind: their processes are killed and the folders removed. */
function sweepStale(parent: string): void {
  if (swept.has(parent)) return;
  swept.add(parent);
  let names: string[];
  try {
    names = fs.readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = name.startsWith(NAME_PREFIX) ? /^(\d+)-\d+$/.exec(name.slice(NAME_PREFIX.length))?.[1] : undefined;
    if (owner === undefined || Number(owner) === process.pid || isAlive(Number(owner))) continue;
    const folder = path.join(parent, name);
    killMembers(folder);
    removeFolder(folder);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
