import * as fs from 'node:fs';
import * as path from 'node:path';
import { cgroupFolder, parseCgroupMounts, parseMembership, readSystem, v2Candidate, type CgroupController, type CgroupSystem } from './cgroupMounts';
import { isAlive } from '../process/lockFile';

export type { CgroupController, CgroupSystem } from './cgroupMounts';

/**
 * A cgroup of its own for a gate, or for one command run alone
 * (docs/architecture.md, "Sandbox", limits): the kernel then bounds the
 * processes and the memory of everything the commands start, escaped
 * process groups and sessions included, counts what it refused
 * (`pids.events`, the OOM kills), and lets Candor kill all of it at the end
 * of each command. A gate's commands run one after another and share its
 * cgroup (gateCgroups.ts): each is emptied before the next starts.
 *
 * A command joins by writing `0` (itself) into v1's `tasks` or v2's
 * `cgroup.procs`: from its own shell through a descriptor Candor opened, or
 * by a fixed shell step in front of it (limits.ts, prepareLimits). Moving a
 * whole process (`cgroup.procs`)
 * takes the kernel's global thread-group lock for writing, which first waits
 * for an RCU grace period: 5 to 25 ms a command here (bench/sandbox.bench.ts).
 * Moving only the calling thread (`0` into v1's `tasks`) skips that lock; the
 * joining shell is single-threaded, and what it starts after the join
 * inherits the cgroup in any case. v2 has no such file outside a threaded subtree:
 * there each command still waits.
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
  /** The files a single-threaded process writes `0` into to join, itself (v1: `tasks`; v2: `cgroup.procs`). */
  readonly joinFiles: readonly string[];
  /** What the kernel counted since the cgroup was made. */
  report(): CgroupReport;
  /** The processes in it now. */
  members(): number[];
  /** SIGKILL to everything in it now (one pass). */
  killAll(): void;
  /** Kill everything in it and wait until it is empty (about 2 s at most); false when something outlived that. Never throws. */
  drain(): Promise<boolean>;
  /** Kill everything in it, wait until it is empty, remove it. Never throws. */
  close(): Promise<void>;
  /** One pass, synchronous: kill what is in it and remove it; false when it is still there. For a process that is exiting. */
  removeNow(): boolean;
}

let sequence = 0;
/** Parents swept by this process: a command run alone sweeps each at this process's first use only; a gate at each start. */
const swept = new Set<string>();
/** This process's own cgroups that outlived their removal (a process in uninterruptible sleep): tried again at each gate's start. */
const leftBehind = new Set<string>();
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

export interface CreateOptions {
  /** Clean up strays at this call, not only at this process's first: a gate's start. */
  readonly sweepAlways?: boolean;
}

/** A cgroup with the wanted limits, or undefined when none can be made here. Strays of dead processes beside it are cleaned first. */
export function createGateCgroup(wants: CgroupWants, system: CgroupSystem | undefined = readSystem(), options: CreateOptions = {}): GateCgroup | undefined {
  if (process.platform !== 'linux' || system === undefined) return undefined;
  const mounts = parseCgroupMounts(system.mountinfo);
  const membership = parseMembership(system.membership);
  const wanted: CgroupController[] = [];
  if (wants.pids !== undefined) wanted.push('pids');
  if (wants.memoryBytes !== undefined) wanted.push('memory');
  if (wanted.length === 0) return undefined;
  const name = `${NAME_PREFIX}${process.pid}-${++sequence}`;
  const made: MadeFolder[] = [];
  const controllers: Partial<Record<CgroupController, 1 | 2>> = {};
  const settle = (folder: string, version: 1 | 2, offered: readonly CgroupController[]): void => {
    const granted = offered.filter((controller) => controllers[controller] === undefined && applyLimit(folder, controller, version, wants));
    if (granted.length === 0) return void removeFolder(folder);
    for (const controller of granted) controllers[controller] = version;
    made.push({ folder, version, granted });
  };
  const makeFolder = (parent: string): string | undefined => {
    sweepStrays(parent, options.sweepAlways === true);
    const folder = path.join(parent, name);
    try {
      fs.mkdirSync(folder);
      return folder;
    } catch {
      return undefined;
    }
  };
  const v2 = v2Candidate(mounts, membership, wanted);
  if (v2 !== undefined) {
    const folder = makeFolder(v2.parent);
    if (folder !== undefined) settle(folder, 2, v2.controllers);
  }
  for (const mount of mounts) {
    if (mount.version !== 1) continue;
    const offered = wanted.filter((controller) => controllers[controller] === undefined && mount.controllers.includes(controller));
    const where = offered[0] === undefined ? undefined : membership.v1.get(offered[0]);
    const parent = where === undefined ? undefined : cgroupFolder(mount, where);
    const folder = parent === undefined ? undefined : makeFolder(parent);
    if (folder !== undefined) settle(folder, 1, offered);
  }
  if (made.length === 0) return undefined;
  return gateCgroup(made, controllers);
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

type MadeFolder = { readonly folder: string; readonly version: 1 | 2; readonly granted: readonly CgroupController[] };

/** The counter files of a folder, each with the line that counts: only those its version and controllers have. */
function counterFiles({ folder, version, granted }: MadeFolder): { pids: string[]; oom: string[] } {
  return {
    pids: granted.includes('pids') ? [path.join(folder, 'pids.events')] : [],
    oom: granted.includes('memory') ? [path.join(folder, version === 2 ? 'memory.events' : 'memory.oom_control')] : [],
  };
}

function gateCgroup(made: readonly MadeFolder[], controllers: Partial<Record<CgroupController, 1 | 2>>): GateCgroup {
  const folders = made.map((each) => each.folder);
  const counters = made.map(counterFiles);
  const eventCount = (file: string, key: string): number => {
    const match = new RegExp(`^${key} (\\d+)$`, 'm').exec(readText(file));
    return match === null ? 0 : Number(match[1]);
  };
  return {
    controllers,
    joinFiles: made.map(({ folder, version }) => path.join(folder, version === 1 ? 'tasks' : 'cgroup.procs')),
    report() {
      let pidsRefused = 0;
      let oomKills = 0;
      for (const { pids, oom } of counters) {
        for (const file of pids) pidsRefused += eventCount(file, 'max');
        for (const file of oom) oomKills += eventCount(file, 'oom_kill');
      }
      return { pidsRefused, oomKills };
    },
    members() {
      const pids = new Set<number>();
      for (const folder of folders) for (const pid of memberPids(folder)) pids.add(Number(pid));
      return [...pids];
    },
    killAll() {
      for (const folder of folders) killMembers(folder);
    },
    async drain() {
      const empty = await Promise.all(folders.map((folder) => waitUntil(() => killMembers(folder) === 0)));
      return empty.every(Boolean);
    },
    async close() {
      await Promise.all(folders.map((folder) => emptyAndRemove(folder)));
    },
    removeNow() {
      let removed = true;
      for (const folder of folders) {
        killMembers(folder);
        if (removeFolder(folder)) leftBehind.delete(folder);
        else {
          leftBehind.add(folder);
          removed = false;
        }
      }
      return removed;
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
  const pids = memberPids(folder);
  for (const pid of pids) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return pids.length;
}

function memberPids(folder: string): string[] {
  return readText(path.join(folder, 'cgroup.procs')).split('\n').filter((line) => /^\d+$/.test(line));
}

/** How long to wait for the members to be gone: short at first (they were killed a moment ago and are usually gone within a millisecond), about 2 s in all. */
const CLOSE_WAITS_MS = [1, 2, 4, 8, 16, 32, ...Array<number>(38).fill(50)];

/** Whether `done` became true within the waits above; the first try is synchronous. */
async function waitUntil(done: () => boolean): Promise<boolean> {
  for (const wait of [0, ...CLOSE_WAITS_MS]) {
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    if (done()) return true;
  }
  return false;
}

/** Folders being emptied and removed right now (a sweep does not start a second removal of one). */
const removing = new Set<string>();

async function emptyAndRemove(folder: string): Promise<boolean> {
  removing.add(folder);
  try {
    if (await waitUntil(() => killMembers(folder) === 0 && removeFolder(folder))) {
      leftBehind.delete(folder);
      return true;
    }
    // Left behind: a process in uninterruptible sleep. The next gate's start tries again.
    leftBehind.add(folder);
    return false;
  } finally {
    removing.delete(folder);
  }
}

function removeFolder(folder: string): boolean {
  try {
    fs.rmdirSync(folder);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT';
  }
}

/**
 * Cleans up beside `parent`: gate cgroups a killed or crashed Candor left
 * behind (their processes are killed and the folders removed), and this
 * process's own that outlived their removal.
 */
function sweepStrays(parent: string, always: boolean): void {
  if (!always && swept.has(parent)) return;
  swept.add(parent);
  let names: string[];
  try {
    names = fs.readdirSync(parent);
  } catch {
    return;
  }
  for (const name of names) {
    const owner = name.startsWith(NAME_PREFIX) ? /^(\d+)-\d+$/.exec(name.slice(NAME_PREFIX.length))?.[1] : undefined;
    if (owner === undefined) continue;
    const folder = path.join(parent, name);
    const ours = Number(owner) === process.pid;
    if (removing.has(folder) || (ours ? !leftBehind.has(folder) : isAlive(Number(owner)))) continue;
    // Killed processes take a moment to be gone: the removal waits for them without holding up the gate.
    void emptyAndRemove(folder);
  }
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
