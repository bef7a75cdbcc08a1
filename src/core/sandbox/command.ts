import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import * as fs from 'node:fs';
import type { CgroupReport, GateCgroup } from './cgroup';
import { DiskWatch } from './diskWatch';
import { processTree } from './heldOpen';
import { coverLeaked } from './inheritedFds';
import { OutputSigns, limitReason, prepareLimits, type GateLimits, type LimitMechanisms, type PreparedLimits } from './limits';
import type { Invocation } from './sandbox';
import { Tail } from './tail';

export type { GateLimits, LimitMechanisms } from './limits';

export interface CommandOptions {
  readonly cwd: string;
  readonly env: NodeJS.ProcessEnv;
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Every byte of output (stdout and stderr interleaved), as it comes. */
  readonly onOutput?: (chunk: string) => void;
  readonly tailBytes?: number;
  /** The unprivileged uid (and gid, default the uid) the command runs as, when Candor is root. */
  readonly uid?: number;
  readonly gid?: number;
  /**
   * The unprivileged uid the invocation switches to by itself (bubblewrap
   * running `setpriv`), when Candor starts it as root: `RLIMIT_NPROC`, set
   * before the switch, then bounds the command's processes.
   */
  readonly invocationUid?: number;
  /**
   * Open descriptors the command gets after stdio, as fd 3, 4, … in this
   * order (bubblewrap's `--seccomp 3`, `--ro-bind-data 4 …`). The caller owns
   * and closes them.
   */
  readonly extraFds?: readonly number[];
  /** What the command may consume; none when absent (see limits.ts). */
  readonly limits?: GateLimits;
  /** false: rlimits only, as on a host without a writable cgroup. */
  readonly cgroups?: boolean;
  /**
   * The gate's cgroup (gateCgroups.ts), which its commands share one after
   * another: the command joins it and empties it at its end, and its
   * counters count from the command's start. Without it, a command with
   * limits gets a cgroup of its own, removed before its result.
   */
  readonly cgroup?: GateCgroup;
}

export interface CommandResult {
  readonly passed: boolean;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  /** The shell could not be started at all. */
  readonly crashed: boolean;
  readonly ms: number;
  readonly tail: string;
  /** The limit the command hit, for people ("hit the memory limit (4096 MiB)"); a command that hit one does not pass. */
  readonly limitHit?: string;
  /** What enforced each limit; absent when no limits were asked for. */
  readonly limits?: LimitMechanisms;
}

/** After SIGTERM, the group gets this long before SIGKILL. */
const KILL_GRACE_MS = 2000;
/** After the shell exits, stray children holding the output pipes get this long. */
const DRAIN_MS = 500;

/**
 * Runs a command (a shell, or the sandbox around one) in its own process
 * group, so a timeout or a cancel ends everything it started (a test
 * runner's workers, a server it forked), and so do we once it has exited.
 * Inside bubblewrap the command has its own session and PID namespace:
 * ending bwrap ends it (`--die-with-parent`), and the namespace with it.
 * With limits, the command also runs in a cgroup where the host offers one
 * (its gate's, or its own), and everything in it is killed at the end,
 * whatever session it fled to; a limit it hits ends it, never Candor.
 */
export async function runInvocation(invocation: Invocation, options: CommandOptions): Promise<CommandResult> {
  const started = Date.now();
  const tail = new Tail(options.tailBytes ?? 4096);
  const signs = new OutputSigns();
  const limited = prepare(invocation, options);
  const counted = limited.cgroup?.report();
  // The disk's baseline is measured before the command exists: nothing it writes can be in it.
  const disk = await startDiskWatch(options.limits, limited);
  return new Promise((resolve) => {
    let timedOut = false;
    let cancelled = false;
    let settled = false;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let diskHit: string | undefined;
    const group = startGroup(limited, options);
    const stop = (): void => {
      group.kill('SIGTERM');
      setTimeout(group.killAll, KILL_GRACE_MS).unref();
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, options.timeoutMs);
    const onAbort = (): void => {
      cancelled = true;
      stop();
    };
    options.signal?.addEventListener('abort', onAbort);
    if (options.signal?.aborted === true) onAbort();
    const pid = group.child?.pid;
    // Whose open files count: the cgroup's members, else the command's process tree.
    if (pid !== undefined) disk?.begin(() => limited.cgroup?.members() ?? processTree(pid), (reason) => {
      // The disk is filling: no grace.
      diskHit = reason;
      group.killAll();
    });
    else disk?.stop();

    const onData = (chunk: Buffer): void => {
      tail.push(chunk);
      const text = chunk.toString('utf8');
      signs.push(text);
      options.onOutput?.(text);
    };
    group.child?.stdout?.on('data', onData);
    group.child?.stderr?.on('data', onData);

    const finish = async (crashed: boolean, crashMessage?: string): Promise<void> => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      if (crashMessage !== undefined) tail.push(Buffer.from(`\n${crashMessage}\n`));
      const limitHit = await settleLimits(options.limits, limited, disk, crashed, { exitCode, signal: exitSignal, signs, diskHit, counted });
      const passed = !crashed && !timedOut && !cancelled && exitCode === 0 && limitHit === undefined;
      const result: CommandResult = { passed, exitCode, timedOut, cancelled, crashed, ms: Date.now() - started, tail: tail.text() };
      resolve(options.limits === undefined ? result : { ...result, limits: limited.mechanisms, ...(limitHit !== undefined ? { limitHit } : {}) });
    };
    if (group.child === undefined) return void finish(true, `could not start the command: ${group.error}`);
    group.child.on('error', (error) => void finish(true, `could not start the command: ${error.message}`));
    group.child.on('exit', (code, signal) => {
      exitCode = code;
      exitSignal = signal;
      // The shell is gone; whatever it left behind in its group (and its cgroup) goes too.
      group.killAll();
      setTimeout(() => void finish(false), DRAIN_MS);
    });
    group.child.on('close', () => void finish(false));
  });
}

interface Group {
  /** Undefined when spawn itself threw (`error` says why). */
  readonly child?: ChildProcess;
  readonly error?: string;
  kill(signal: NodeJS.Signals): void;
  /** SIGKILL to the process group and to everything in the command's cgroup. */
  killAll(): void;
}

/** Spawns the (limited) invocation as the leader of a new process group. */
function startGroup(limited: PreparedLimits, options: CommandOptions): Group {
  const windows = process.platform === 'win32';
  let child: ChildProcess;
  // What this process was handed without close-on-exec never reaches the command (inheritedFds.ts).
  const stdio = coverLeaked(['ignore', 'pipe', 'pipe', ...(options.extraFds ?? []), ...(limited.fds ?? [])]);
  try {
    child = spawn(limited.invocation.file, [...limited.invocation.args], {
      cwd: options.cwd,
      env: options.env,
      detached: !windows,
      stdio: stdio.stdio as StdioOptions,
      windowsHide: true,
      ...(limited.uid !== undefined ? { uid: limited.uid, gid: limited.gid ?? limited.uid } : {}),
    });
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error), kill: () => undefined, killAll: () => undefined };
  } finally {
    // The command has its own copies (limits.ts, the join; the /dev/null over what would leak).
    for (const fd of limited.fds ?? []) fs.closeSync(fd);
    stdio.close();
  }
  const kill = (signal: NodeJS.Signals): void => {
    if (child.pid === undefined) return;
    try {
      if (windows) child.kill(signal);
      else process.kill(-child.pid, signal);
    } catch {
      // already gone
    }
  };
  return {
    child,
    kill,
    killAll: () => {
      kill('SIGKILL');
      limited.cgroup?.killAll();
    },
  };
}

const UNLIMITED: LimitMechanisms = { pids: 'none', memory: 'none', fileSize: 'none', disk: 'none' };

function prepare(invocation: Invocation, options: CommandOptions): PreparedLimits {
  if (options.limits === undefined) return { invocation, uid: options.uid, gid: options.gid, mechanisms: UNLIMITED };
  return prepareLimits(invocation, { limits: options.limits, uid: options.uid, gid: options.gid, invocationUid: options.invocationUid, cgroups: options.cgroups, cgroup: options.cgroup, fdsBefore: options.extraFds?.length ?? 0 });
}

/** The disk watch of a command with a disk limit (the clone is polled whatever bounds the throwaway folders), its baseline measured. */
async function startDiskWatch(limits: GateLimits | undefined, limited: PreparedLimits): Promise<DiskWatch | undefined> {
  if (limits === undefined || limited.mechanisms.disk === 'none' || limits.diskPaths.length === 0) return undefined;
  return DiskWatch.start(limits.diskPaths, limits.diskMiB);
}

interface Ending {
  readonly exitCode: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly signs: OutputSigns;
  readonly diskHit?: string;
  /** The cgroup's counters when the command started (a gate's cgroup counts its earlier commands too). */
  readonly counted?: CgroupReport;
}

/**
 * Reads what the kernel counted during the command, empties the cgroup (and
 * removes it, when it was the command's own), and names the limit the
 * command hit. Never throws.
 */
async function settleLimits(limits: GateLimits | undefined, limited: PreparedLimits, disk: DiskWatch | undefined, crashed: boolean, ending: Ending): Promise<string | undefined> {
  let reason: string | undefined;
  try {
    const checkDisk = ending.diskHit === undefined && !crashed;
    if (!checkDisk) disk?.stop();
    const diskAtEnd = checkDisk ? await disk?.finish() : undefined;
    const now = limited.cgroup?.report() ?? { pidsRefused: 0, oomKills: 0 };
    const before = ending.counted ?? { pidsRefused: 0, oomKills: 0 };
    const report = { pidsRefused: now.pidsRefused - before.pidsRefused, oomKills: now.oomKills - before.oomKills };
    if (limits !== undefined && !crashed) reason = limitReason(limits, limited.mechanisms, { ...report, diskKilled: ending.diskHit, diskAtEnd, exitCode: ending.exitCode, signal: ending.signal, signs: ending.signs });
  } catch {
    // A limit that cannot be read is no reason to lose the command's result.
  }
  if (limited.ownsCgroup === true) await limited.cgroup?.close();
  else await limited.cgroup?.drain();
  return reason;
}
