import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createGateCgroup, type CgroupWants, type GateCgroup } from './cgroup';
import type { Invocation } from './sandbox';
import { manifestNumber } from '../manifest';
import { isExecutable } from '../process/executable';

/**
 * Limits on what one gate command can consume (docs/architecture.md,
 * "Sandbox", limits): processes, memory, the size of one file, and the disk
 * used by the clone and the throwaway home together. The model wrote the
 * code the gate runs; a fork bomb, a memory bomb or a disk fill must end the
 * gate, not the host.
 *
 * Each limit is enforced by the strongest mechanism this host offers, and
 * the run records which one did:
 * - processes: a cgroup's `pids.max`, else `RLIMIT_NPROC` under the gate's
 *   own uid (the kernel exempts real root from it, and under Candor's own
 *   uid it would count the user's desktop too), else none;
 * - memory: a cgroup's `memory.max` / `memory.limit_in_bytes`, else
 *   `RLIMIT_AS` when the limit is above 8 GiB (V8 reserves far more address
 *   space than it uses, so a lower `AS` breaks node), else none;
 * - file size: `RLIMIT_FSIZE` (no cgroup bounds it);
 * - disk: `filesystem` where the throwaway home and temp folder are
 *   in-memory folders of the limit's size, charged to the memory cgroup
 *   (GateLimits.throwawayInMemory): bounded by construction, and the clone,
 *   which nothing in the kernel bounds, polled (diskWatch.ts); else all of
 *   them polled.
 *
 * Rlimits are set by util-linux's `prlimit` wrapping the invocation, never by
 * `sh -c ulimit`: the shells' flags differ (dash has no `-u`).
 */

export type LimitMechanism = 'cgroup' | 'rlimit' | 'filesystem' | 'poll' | 'none';

export interface LimitMechanisms {
  readonly pids: LimitMechanism;
  readonly memory: LimitMechanism;
  readonly fileSize: LimitMechanism;
  readonly disk: LimitMechanism;
}

/** `candor.evolution.limits.*`. A value that is not a positive number means no limit of that kind. */
export interface GateLimits {
  /** Processes and threads at once. */
  readonly processes: number;
  readonly memoryMiB: number;
  /** The largest file one process may write. */
  readonly fileSizeMiB: number;
  /** The clone and the throwaway home together. */
  readonly diskMiB: number;
  /** The host folders whose total disk use is polled: the clone, and the throwaway home and temp folder unless they are in memory. */
  readonly diskPaths: readonly string[];
  /**
   * The throwaway home and temp folder are in-memory folders of `diskMiB`
   * each (SandboxRun.throwawayInMemory), charged to the gate's memory
   * cgroup: the disk mechanism is then `filesystem`.
   */
  readonly throwawayInMemory?: boolean;
}

/**
 * Defaults that fit Candor's own unit suite with room to spare, and a small
 * node test with far more: the suite (783 tests, mocha and tsx, with its git
 * and bubblewrap children) peaked at 70 tasks, 1.5 GiB resident and 2.1 GiB
 * charged with page cache; Candor's clone with its dependencies holds about
 * 810 MiB.
 */
export const DEFAULT_GATE_LIMITS: Omit<GateLimits, 'diskPaths'> = {
  processes: manifestNumber('evolution.limits.processes'),
  memoryMiB: manifestNumber('evolution.limits.memoryMiB'),
  fileSizeMiB: manifestNumber('evolution.limits.fileSizeMiB'),
  diskMiB: manifestNumber('evolution.limits.diskMiB'),
};

export const MiB = 1024 * 1024;
/** Below this, `RLIMIT_AS` would break node (see above). */
const AS_FLOOR_MIB = 8192;
/** A fixed step that joins the cgroup before the command exists: it moves itself in (`0`, see cgroup.ts), then it becomes the command. */
const JOIN_SCRIPT = 'n=$1; shift; while [ "$n" -gt 0 ]; do echo 0 > "$1" || exit 125; n=$((n - 1)); shift; done; exec "$@"';

/** util-linux tools, looked up in the system's folders only: never a PATH entry a repository could plant one in. */
export interface LimitTools {
  readonly prlimit?: string;
  readonly setpriv?: string;
}

let systemTools: LimitTools | undefined;
export function findLimitTools(): LimitTools {
  if (systemTools !== undefined) return systemTools;
  const find = (name: string): string | undefined => ['/usr/bin', '/bin', '/usr/sbin', '/sbin'].map((folder) => `${folder}/${name}`).find(isExecutable);
  systemTools = process.platform === 'linux' ? { prlimit: find('prlimit'), setpriv: find('setpriv') } : {};
  return systemTools;
}


export interface LimitRequest {
  readonly limits: GateLimits;
  /** The unprivileged uid the command runs as (when Candor is root). */
  readonly uid?: number;
  readonly gid?: number;
  /** The unprivileged uid the invocation switches to by itself (setpriv inside bubblewrap). */
  readonly invocationUid?: number;
  /** false: rlimits only, as on a host without a writable cgroup. */
  readonly cgroups?: boolean;
  /** The gate's cgroup, shared by its commands (gateCgroups.ts); without it the command gets one of its own. */
  readonly cgroup?: GateCgroup;
  readonly tools?: LimitTools;
  /** How many descriptors the caller passes after stdio (CommandOptions.extraFds): the join's own come after them. */
  readonly fdsBefore?: number;
  /** The running kernel's release (default os.release()): whether a joining write is checked with the opener's credentials. */
  readonly kernel?: string;
}

/** What to spawn, as whom, and what enforces each limit. */
export interface PreparedLimits {
  readonly invocation: Invocation;
  /** For spawn; undefined when the uid switch happens inside the invocation (after joining the cgroup, as root). */
  readonly uid?: number;
  readonly gid?: number;
  readonly mechanisms: LimitMechanisms;
  readonly cgroup?: GateCgroup;
  /** The cgroup was made for this command alone: the command removes it at its end. A gate's is only emptied. */
  readonly ownsCgroup?: boolean;
  /**
   * Descriptors to pass after the caller's (the join files, open for
   * writing, when the command's own shell joins through them). The caller
   * closes them once the command has started.
   */
  readonly fds?: readonly number[];
}

const positive = (value: number): boolean => Number.isFinite(value) && value > 0;

/** What the cgroup of `limits` bounds. */
export function cgroupWants(limits: Omit<GateLimits, 'diskPaths'>): CgroupWants {
  return { pids: positive(limits.processes) ? Math.floor(limits.processes) : undefined, memoryBytes: positive(limits.memoryMiB) ? Math.floor(limits.memoryMiB * MiB) : undefined };
}

/**
 * Wraps `invocation` so the limits hold before the command's first
 * instruction: the process moves itself into the cgroup (the gate's, else
 * one made for this command), `setpriv` drops to the gate's uid, `prlimit`
 * sets the rlimits, and each `exec`s the next, so the command never runs
 * outside the cgroup and nothing it forks can start there either.
 *
 * The join, in one of two ways:
 * - Where the invocation names its own shell script (Invocation.script),
 *   the cgroup is v1 and the kernel checks a joining write with the
 *   credentials of whoever opened the file (5.16 and later): Candor opens
 *   each `tasks` file, that shell writes `0` into it as its first step and
 *   closes it, and only then runs the command. No process is added for it,
 *   and the uid switch may come first (inside bubblewrap, or with spawn).
 * - Otherwise a fixed `/bin/sh` script (the paths as arguments) joins as
 *   root before anything else, and `setpriv` then drops to the gate's uid
 *   (a v2 cgroup can only be entered by who may write the common ancestor's
 *   `cgroup.procs`); without `setpriv` the uid switch stays with spawn and
 *   no cgroup is used.
 */
export function prepareLimits(invocation: Invocation, request: LimitRequest): PreparedLimits {
  const { limits, uid } = request;
  const gid = request.gid ?? uid;
  const tools = request.tools ?? findLimitTools();
  // RLIMIT_NPROC counts the processes of a uid, and the kernel exempts root: it needs the gate's own uid, whoever switches to it.
  const switched = [uid, request.invocationUid].some((each) => each !== undefined && each !== 0);
  const joinsInScript = invocation.script !== undefined && opensWithOpenerCredentials(request.kernel ?? os.release());
  const canJoin = request.cgroups !== false && (uid === undefined || tools.setpriv !== undefined);
  const shared = canJoin ? request.cgroup : undefined;
  const cgroup = shared ?? (canJoin ? createGateCgroup(cgroupWants(limits)) : undefined);
  const rlimits: string[] = [];
  let pids: LimitMechanism = 'none';
  let memory: LimitMechanism = 'none';
  let fileSize: LimitMechanism = 'none';
  if (cgroup?.controllers.pids !== undefined) pids = 'cgroup';
  else if (positive(limits.processes) && switched && tools.prlimit !== undefined) {
    rlimits.push(`--nproc=${Math.floor(limits.processes)}`);
    pids = 'rlimit';
  }
  if (cgroup?.controllers.memory !== undefined) memory = 'cgroup';
  else if (positive(limits.memoryMiB) && limits.memoryMiB > AS_FLOOR_MIB && tools.prlimit !== undefined) {
    rlimits.push(`--as=${Math.floor(limits.memoryMiB * MiB)}`);
    memory = 'rlimit';
  }
  if (positive(limits.fileSizeMiB) && tools.prlimit !== undefined) {
    // No core files either: a memory bomb's core would be a disk fill of its own.
    rlimits.push(`--fsize=${Math.floor(limits.fileSizeMiB * MiB)}`, '--core=0');
    fileSize = 'rlimit';
  }
  const disk: LimitMechanism = !positive(limits.diskMiB) ? 'none' : limits.throwawayInMemory === true ? 'filesystem' : limits.diskPaths.length > 0 ? 'poll' : 'none';
  const mechanisms = { pids, memory, fileSize, disk };
  const limited = (argv: readonly string[]): string[] => (rlimits.length > 0 && tools.prlimit !== undefined ? [tools.prlimit, ...rlimits, '--', ...argv] : [...argv]);
  if (cgroup === undefined) return { invocation: toInvocation(invocation, limited([invocation.file, ...invocation.args])), uid, gid, mechanisms };
  const owns = { cgroup, ownsCgroup: shared === undefined };
  if (joinsInScript && cgroup.joinFiles.every((file) => path.basename(file) === 'tasks')) {
    const joined = joinInScript(invocation, cgroup.joinFiles, 3 + (request.fdsBefore ?? 0));
    if (joined !== undefined) return { invocation: toInvocation(joined.invocation, limited([joined.invocation.file, ...joined.invocation.args])), uid, gid, mechanisms, fds: joined.fds, ...owns };
  }
  let argv = limited([invocation.file, ...invocation.args]);
  if (uid !== undefined && tools.setpriv !== undefined) argv = [tools.setpriv, `--reuid=${uid}`, `--regid=${gid ?? uid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--', ...argv];
  argv = ['/bin/sh', '-c', JOIN_SCRIPT, 'candor-gate', String(cgroup.joinFiles.length), ...cgroup.joinFiles, ...argv];
  return { invocation: toInvocation(invocation, argv), mechanisms, ...owns };
}

/**
 * The invocation whose shell joins through descriptors opened here, at fds
 * `first`, `first + 1`, …: it writes `0` into each, closes it, and only then
 * runs the script. Undefined when a file cannot be opened (the fixed join
 * step then tries, and says why).
 */
function joinInScript(invocation: Invocation, joinFiles: readonly string[], first: number): { invocation: Invocation; fds: number[] } | undefined {
  const index = invocation.script;
  const script = index !== undefined ? invocation.args[index] : undefined;
  if (index === undefined || script === undefined) return undefined;
  const fds: number[] = [];
  try {
    for (const file of joinFiles) fds.push(fs.openSync(file, fs.constants.O_WRONLY | fs.constants.O_NOFOLLOW));
  } catch {
    for (const fd of fds) fs.closeSync(fd);
    return undefined;
  }
  const steps = fds.map((_fd, n) => `echo 0 >&${first + n} || exit 125; exec ${first + n}>&-`).join('; ');
  const args = [...invocation.args];
  args[index] = `${steps}\n${script}`;
  return { invocation: { ...invocation, args }, fds };
}

/**
 * Whether the kernel checks a write into a cgroup's `tasks` with the
 * credentials of the process that opened it (5.16 and later, the fix of
 * CVE-2021-4197), so that a file root opened lets the gate's uid join. An
 * older kernel would refuse the write, and the fixed join step is used.
 */
export function opensWithOpenerCredentials(release: string): boolean {
  const [major = 0, minor = 0] = (/^(\d+)\.(\d+)/.exec(release) ?? []).slice(1).map(Number);
  return major > 5 || (major === 5 && minor >= 16);
}

/** `argv` ends with the original invocation: its script, if it names one, moves along. */
function toInvocation(original: Invocation, argv: readonly string[]): Invocation {
  const [file = '', ...args] = argv;
  const { script, ...rest } = original;
  return { ...rest, file, args, ...(script !== undefined ? { script: script + args.length - original.args.length } : {}) };
}

/** Fork failures, heap exhaustion and refused writes, as programs print them. */
const SIGNS = {
  fork: /Resource temporarily unavailable|fork: retry|Cannot fork|\bEAGAIN\b/,
  memory: /JavaScript heap out of memory|Fatal process out of memory|Cannot allocate memory|std::bad_alloc/,
  fileSize: /File size limit exceeded|\bEFBIG\b|File too large/,
  disk: /No space left on device|\bENOSPC\b/,
};
type Sign = keyof typeof SIGNS;

/** Watches the output stream for the signs above, across chunk boundaries, at a cost linear in the output. */
export class OutputSigns {
  readonly #seen = new Set<Sign>();
  #carry = '';

  push(chunk: string): void {
    if (this.#seen.size === Object.keys(SIGNS).length) return;
    const text = this.#carry + chunk;
    for (const sign of Object.keys(SIGNS) as Sign[]) if (!this.#seen.has(sign) && SIGNS[sign].test(text)) this.#seen.add(sign);
    this.#carry = text.slice(-64);
  }

  has(sign: Sign): boolean {
    return this.#seen.has(sign);
  }
}

export interface LimitEvidence {
  /** The disk watch's reason, when it killed the command. */
  readonly diskKilled?: string;
  /** The disk watch's reason, when the folders held too much once the command had ended. */
  readonly diskAtEnd?: string;
  readonly pidsRefused: number;
  readonly oomKills: number;
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly signs: OutputSigns;
}

/** SIGXFSZ as a shell or bubblewrap reports a child it ended: 128 + 25. */
const XFSZ_STATUS = 153;

/**
 * The limit the command hit, for people; undefined when none. What ended the
 * command first (the disk watch's kill, cgroup events, SIGXFSZ), then the
 * disk as the command left it; then, for a
 * command that failed under an rlimit, what its output suggests, said as a
 * "may".
 */
export function limitReason(limits: GateLimits, mechanisms: LimitMechanisms, evidence: LimitEvidence): string | undefined {
  const processes = `process limit (${Math.floor(limits.processes)})`;
  const memory = `memory limit (${limits.memoryMiB} MiB)`;
  const fileSize = `file size limit (${limits.fileSizeMiB} MiB)`;
  const disk = `disk limit (${limits.diskMiB} MiB)`;
  if (evidence.diskKilled !== undefined) return evidence.diskKilled;
  if (mechanisms.memory === 'cgroup' && evidence.oomKills > 0) return `hit the ${memory}`;
  if (mechanisms.pids === 'cgroup' && evidence.pidsRefused > 0) return `hit the ${processes}`;
  if (mechanisms.fileSize === 'rlimit' && (evidence.signal === 'SIGXFSZ' || evidence.exitCode === XFSZ_STATUS)) return `hit the ${fileSize}`;
  if (evidence.diskAtEnd !== undefined) return evidence.diskAtEnd;
  if (evidence.exitCode === 0) return undefined;
  if (mechanisms.pids === 'rlimit' && evidence.signs.has('fork')) return `may have hit the ${processes}`;
  if (mechanisms.fileSize === 'rlimit' && evidence.signs.has('fileSize')) return `may have hit the ${fileSize}`;
  if (mechanisms.memory !== 'none' && evidence.signs.has('memory')) return `may have hit the ${memory}`;
  // A full in-memory folder (the throwaway pair, /tmp) says ENOSPC; so would a full host disk, hence "may".
  if (mechanisms.disk !== 'none' && evidence.signs.has('disk')) return `may have hit the ${disk}`;
  return undefined;
}
