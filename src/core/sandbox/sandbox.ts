import { spawn } from 'node:child_process';
import * as crypto from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childEnv } from '../process/childEnv';
import { isExecutable } from '../process/executable';
import { removeTree } from '../process/removeTree';
import { bubblewrap, toolchainFolders, type UserSwitch } from './bubblewrap';
import { gateUserFor, gateUserProblem, prepareForGateUser, type GateUser } from './gateUser';
import { seatbeltProfile } from './seatbelt';
import { seccompArch } from './seccomp';
import { realOrResolved, isInside } from '../realPath';

/**
 * The OS sandbox every command of an evolution run goes through
 * (docs/architecture.md, "Sandbox"): setup, build, test and the change
 * phase's `run_tests`; and every command of the agent (`run_command`). The
 * model writes or chooses the code that runs here, so the sandbox assumes it
 * is hostile.
 *
 * Linux: bubblewrap, called directly (bubblewrap.ts), with a seccomp filter
 * (seccomp.ts), and as an unprivileged uid when Candor is root (gateUser.ts).
 * `@anthropic-ai/sandbox-runtime` wraps the same bubblewrap (and Seatbelt on
 * macOS) and adds a filtering network proxy, but it needs `socat` and
 * `ripgrep` too, costs about 50 ms a command against a few for bwrap (see
 * bench/sandbox.bench.ts), and by default lets the command read the whole
 * disk. Candor's gate needs no network at all for build and test, so the
 * proxy buys nothing there.
 */

export type SandboxKind = 'bubblewrap' | 'seatbelt' | 'off';
/** `candor.evolution.sandbox`. */
export type SandboxMode = 'required' | 'off';

export interface SandboxRun {
  /** The scratch clone: the working folder, writable except its `.git`. */
  readonly cwd: string;
  /**
   * The folder shown at `cwd` (default: `cwd` itself): a command of the
   * agent runs at the workspace's own path over a view of it, a copy the
   * command may change, while the workspace stays out of reach. Its `.git`
   * and dependency folder are the ones mounted read-only. On macOS nothing is
   * mounted: the command runs in this folder, and `cwd` is hidden.
   */
  readonly cwdSource?: string;
  /**
   * Host folders shown read-only at `dest`, after the working folder (so a
   * dest inside it shows the source there): the workspace's dependency
   * folders. A source that is missing, holds a hidden folder or lies in one
   * (the home aside) is left out, and so is a dest that cannot be made
   * (bubblewrap.ts, canMountAt).
   */
  readonly readOnlyBinds?: readonly { readonly source: string; readonly dest: string }[];
  /** Fresh, empty, writable folders, after every bind (a cache inside a read-only dependency folder); left out where no mount point can be made. */
  readonly tmpfs?: readonly string[];
  /** The throwaway home and temp folder of this run (writable, outside the clone and the data folder). */
  readonly home: string;
  readonly tmp: string;
  /** More folders the command may write (none by default). */
  readonly writable?: readonly string[];
  /** Folders the command must not see at all: Candor's data folder, the source repository. The real home is always hidden. */
  readonly hidden?: readonly string[];
  /** Build and test never get it; setup only while the manifest and lock file are HEAD's. */
  readonly network: boolean;
  /** The dependency folder is writable during setup only. */
  readonly depsWritable: boolean;
  /**
   * The most each fresh tmpfs the command may write (`/tmp`, `/dev/shm`,
   * `/run`, the run's own) can hold, in MiB: they live in memory, which no
   * limit bounds on a host without a memory cgroup. Unbounded when absent,
   * and where bubblewrap is too old to bound them (before 0.5).
   */
  readonly tmpfsMiB?: number;
  /**
   * The throwaway home and temp folder as fresh in-memory folders of
   * `tmpfsMiB` each, not the host folders: they cannot hold more, whatever
   * the command does, and cost no disk. Only where the sandbox bounds them
   * (Sandbox.sizedTmpfs); ask for it only where a memory cgroup bounds the
   * memory they take. Each command then starts with an empty pair, but for
   * `homeFiles`.
   */
  readonly throwawayInMemory?: boolean;
  /** Files the in-memory home starts with (its git config, which names the clone safe), by name. */
  readonly homeFiles?: readonly HomeFile[];
}

export interface HomeFile {
  /** A plain file name, no folder. */
  readonly name: string;
  readonly text: string;
}

/** A program and its arguments, ready for `spawn` without a shell around it. */
export interface Invocation {
  readonly file: string;
  readonly args: readonly string[];
  /**
   * What the program reads at fds 3, 4, … in this order (bubblewrap's
   * seccomp program, and the gate user's `/etc/passwd` and `/etc/group`).
   * The caller opens them with openInputs and passes them after stdio.
   */
  readonly inputs?: readonly Uint8Array[];
  /**
   * The index in `args` of the script that the invocation's own `/bin/sh -c`
   * runs, as the command's first process under the uid it runs as: the
   * limits may put a fixed first step in front of it (limits.ts, the join).
   */
  readonly script?: number;
}

/** A sandbox's invocations for the commands of one gate, which share one run (Sandbox.prepare). */
export interface PreparedSandbox {
  wrap(command: string): Invocation;
}

export interface Sandbox {
  readonly kind: SandboxKind;
  /** The unprivileged account the commands run as, when Candor is root (bubblewrap only); undefined: Candor's own user. */
  readonly user?: GateUser;
  /** Its in-memory folders hold at most SandboxRun.tmpfsMiB (bubblewrap 0.5 and later), so the throwaway pair may live in memory. */
  readonly sizedTmpfs?: boolean;
  wrap(command: string, run: SandboxRun): Invocation;
  /** The same invocations for a gate's commands, with what cannot change between them looked up once (default: wrap each). */
  prepare?(run: SandboxRun): PreparedSandbox;
  /** Whether every command sees `dir`, read-only or better, given the folders a run hides (the real home is always hidden). */
  isVisible(dir: string, hidden?: readonly string[]): boolean;
}

/** Why a required sandbox cannot run here; `message` says what to install or which setting turns it off. */
export interface SandboxUnavailable {
  readonly kind: 'unavailable';
  readonly cause: 'missing' | 'refused' | 'unsupported';
  readonly message: string;
}

export interface DetectOptions {
  /** The bwrap binary; default: the first `bwrap` on PATH (absolute entries only). */
  readonly bwrapPath?: string;
  readonly platform?: NodeJS.Platform;
  /** `candor.evolution.sandboxUid`: the uid commands run as when Candor is root; default 64999. */
  readonly sandboxUid?: number;
  /** util-linux's `setpriv`, which becomes that uid; default: the first on PATH. */
  readonly setprivPath?: string;
}

/** Printed (and logged) at the start of every run with the sandbox off. */
export const SANDBOX_OFF_WARNING = 'warning: candor.evolution.sandbox is "off": setup, build and test (and the model\'s code they run) run without an OS sandbox, at your own risk';

/** Where the tools the sandbox starts by path must live: folders it binds read-only. */
const SYSTEM_BIN = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

const TURN_OFF = 'or set candor.evolution.sandbox to "off" in your user settings to run them without one, at your own risk';

/** The sandbox for `mode`, after checking that it really starts here; or why it cannot. */
export async function detectSandbox(mode: SandboxMode, options: DetectOptions = {}): Promise<Sandbox | SandboxUnavailable> {
  if (mode === 'off') return NO_SANDBOX;
  const platform = options.platform ?? process.platform;
  if (platform === 'linux') return detectBubblewrap(options);
  if (platform === 'darwin') {
    const exec = '/usr/bin/sandbox-exec';
    if (!isExecutable(exec)) return unavailable('missing', `evolution's commands must run in an OS sandbox, and ${exec} was not found; ${TURN_OFF}`);
    const probe = await runProbe(exec, ['-p', '(version 1)(allow default)', '/usr/bin/true']);
    if (probe !== undefined) return unavailable('refused', `sandbox-exec could not start a sandbox here: ${probe}; ${TURN_OFF}`);
    return seatbelt(exec);
  }
  return unavailable('unsupported', `evolution's commands must run in an OS sandbox, and Candor has none for ${platform === 'win32' ? 'Windows' : platform}: ${TURN_OFF.replace(/^or /, '')}`);
}

export function isSandboxUnavailable(value: Sandbox | SandboxUnavailable): value is SandboxUnavailable {
  return value.kind === 'unavailable';
}

/** `candor.evolution.sandbox: "off"`: the command runs in a plain shell, at the user's own risk. */
export const NO_SANDBOX: Sandbox = {
  kind: 'off',
  wrap(command) {
    return process.platform === 'win32' ? { file: process.env.ComSpec ?? 'cmd.exe', args: ['/d', '/s', '/c', command] } : { file: '/bin/sh', args: ['-c', command], script: 1 };
  },
  isVisible: () => true,
};

/**
 * bubblewrap with the real flags, started once as the commands will be: as
 * the gate user when Candor is root, so a kernel or container that refuses
 * namespaces, the seccomp filter or the uid switch is found before a run.
 */
async function detectBubblewrap(options: DetectOptions): Promise<Sandbox | SandboxUnavailable> {
  const bwrap = options.bwrapPath ?? findOnPath('bwrap');
  if (bwrap === undefined || !isExecutable(bwrap)) {
    return unavailable('missing', `evolution's commands must run in an OS sandbox, and bubblewrap was not found ${bwrap !== undefined ? `at ${bwrap}` : 'on PATH'}: install it (apt-get install bubblewrap), ${TURN_OFF}`);
  }
  if (seccompArch() === undefined) {
    return unavailable('unsupported', `evolution's sandbox filters system calls for x86_64 and aarch64 only, and this machine is ${process.arch}: ${TURN_OFF.replace(/^or /, '')}`);
  }
  const user = gateUserFor(options.sandboxUid);
  let userSwitch: UserSwitch | undefined;
  if (user !== undefined) {
    const problem = gateUserProblem(user);
    if (problem !== undefined) return unavailable('refused', `Candor runs as root, so evolution's commands run as an unprivileged uid, and ${problem}; ${TURN_OFF}`);
    // From the system folders only, which the sandbox shows: never a PATH entry a repository could plant one in.
    const setpriv = options.setprivPath ?? SYSTEM_BIN.map((dir) => path.join(dir, 'setpriv')).find(isExecutable);
    if (setpriv === undefined || !isExecutable(setpriv)) {
      return unavailable('missing', `Candor runs as root, so evolution's commands run as uid ${user.uid}, and setpriv, which switches to it, was not found ${setpriv !== undefined ? `at ${setpriv}` : `in ${SYSTEM_BIN.join(', ')}`}: install util-linux (apt-get install util-linux), ${TURN_OFF}`);
    }
    userSwitch = { user, setpriv };
  }
  // bubblewrap before 0.5 has no `--size`: then the tmpfs folders stay unbounded rather than the sandbox refused.
  const sized = bubblewrap(bwrap, userSwitch, true);
  if ((await probeSandbox(sized)) === undefined) return sized;
  const sandbox = bubblewrap(bwrap, userSwitch);
  const probe = await probeSandbox(sandbox);
  if (probe !== undefined) {
    const why = user !== undefined ? ` running as uid ${user.uid} (candor.evolution.sandboxUid) here: ${probe}. Namespaces, seccomp or the switch to that uid may be refused (a container without CAP_SYS_ADMIN or with a seccomp profile of its own)` : ` here: ${probe}. User namespaces or seccomp may be disabled`;
    return unavailable('refused', `bubblewrap (${bwrap}) could not start a sandbox${why}; enable them, ${TURN_OFF}`);
  }
  return sandbox;
}

/** Runs one command through `sandbox` in a throwaway folder; undefined when it ran and exited 0, else what went wrong. */
async function probeSandbox(sandbox: Sandbox): Promise<string | undefined> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-probe-'));
  try {
    const run = { cwd: path.join(dir, 'work'), home: path.join(dir, 'home'), tmp: path.join(dir, 'tmp'), network: false, depsWritable: false, tmpfsMiB: 1 };
    for (const folder of [run.cwd, run.home, run.tmp]) fs.mkdirSync(folder);
    const user = sandbox.user;
    if (user !== undefined) for (const folder of [run.cwd, run.home, run.tmp]) await prepareForGateUser(folder, user);
    // As the gate user, `id -u` must say so: a switch that silently did nothing is a failure too.
    const invocation = sandbox.wrap(user !== undefined ? `test "$(id -u)" = ${user.uid}` : 'true', run);
    const inputs = openInputs(invocation.inputs, dir);
    try {
      return await runProbe(invocation.file, invocation.args, inputs.fds);
    } finally {
      inputs.close();
    }
  } finally {
    await removeTree(dir);
  }
}

/** `sandbox.prepare(run)`, or wrap for each command where the sandbox has nothing to look up once. */
export function prepareSandbox(sandbox: Sandbox, run: SandboxRun): PreparedSandbox {
  return sandbox.prepare?.(run) ?? { wrap: (command) => sandbox.wrap(command, run) };
}

/** An invocation's inputs, open: pass `fds` after stdio (they become 3, 4, …), then close them. */
export interface OpenInputs {
  readonly fds: readonly number[];
  close(): void;
}

/**
 * Opens each input as a read-only file descriptor. The bytes go through a
 * file in `dir` (a folder only Candor can enter), removed as soon as it is
 * open: the command gets the descriptor, never a path.
 */
export function openInputs(inputs: readonly Uint8Array[] | undefined, dir: string): OpenInputs {
  const fds: number[] = [];
  const close = (): void => closeAll(fds);
  try {
    for (const data of inputs ?? []) {
      const file = path.join(dir, `.input-${crypto.randomBytes(6).toString('hex')}`);
      fs.writeFileSync(file, data, { mode: 0o400, flag: 'wx' });
      try {
        fds.push(fs.openSync(file, 'r'));
      } finally {
        fs.rmSync(file, { force: true });
      }
    }
  } catch (err) {
    close();
    throw err;
  }
  return { fds, close };
}

function closeAll(fds: number[]): void {
  for (const fd of fds.splice(0)) {
    try {
      fs.closeSync(fd);
    } catch {
      // already closed
    }
  }
}

/**
 * The inputs of one gate's invocations. Each distinct input is written once
 * into `dir` (a folder only Candor can enter, which no command sees), and
 * opened afresh for each command, so each reads its own descriptor from the
 * start. The files go when `dir` does, at the end of the gate.
 */
export class GateInputs {
  readonly #dir: string;
  /** Input bytes → the file holding them. */
  readonly #files = new Map<string, string>();

  constructor(dir: string) {
    this.#dir = dir;
  }

  open(inputs: readonly Uint8Array[] | undefined): OpenInputs {
    const fds: number[] = [];
    const close = (): void => closeAll(fds);
    try {
      for (const data of inputs ?? []) fds.push(fs.openSync(this.#fileFor(data), 'r'));
    } catch (err) {
      close();
      throw err;
    }
    return { fds, close };
  }

  #fileFor(data: Uint8Array): string {
    const key = Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64');
    let file = this.#files.get(key);
    if (file === undefined) {
      file = path.join(this.#dir, `.input-${crypto.randomBytes(6).toString('hex')}`);
      fs.writeFileSync(file, data, { mode: 0o400, flag: 'wx' });
      this.#files.set(key, file);
    }
    return file;
  }
}

function seatbelt(exec: string): Sandbox {
  const hiddenFor = (more: readonly string[] = []): string[] => [realOrResolved(os.homedir()), ...more.map(realOrResolved)];
  return {
    kind: 'seatbelt',
    wrap(command, run) {
      const home = realOrResolved(os.homedir());
      // UNTESTED (no Mac runs the tests): with a `cwdSource` (a view of the workspace) nothing is mounted, so the command works
      // in the view itself, the workspace behind it is hidden, and only the read-only binds' sources are readable there.
      const cwd = realOrResolved(run.cwdSource ?? run.cwd);
      const behind = realOrResolved(run.cwd);
      const hidden = hiddenFor([...(run.hidden ?? []), ...(behind !== cwd ? [behind] : [])]);
      const readable = (run.readOnlyBinds ?? []).map((bind) => realOrResolved(bind.source));
      const profile = seatbeltProfile(
        { ...run, cwd, home: realOrResolved(run.home), tmp: realOrResolved(run.tmp), writable: (run.writable ?? []).map(realOrResolved), hidden, readable },
        toolchainFolders(home, hidden, process.env),
      );
      return { file: exec, args: ['-p', profile, '/bin/sh', '-c', command] };
    },
    isVisible(dir, hidden) {
      const real = realOrResolved(dir);
      const all = hiddenFor(hidden);
      return !all.some((h) => isInside(h, real)) || toolchainFolders(all[0], all, process.env).some((t) => isInside(t, real));
    },
  };
}

function unavailable(cause: SandboxUnavailable['cause'], message: string): SandboxUnavailable {
  return { kind: 'unavailable', cause, message };
}

/** Undefined when `file args` ran and exited 0; else what went wrong, in a line. */
function runProbe(file: string, args: readonly string[], fds: readonly number[] = []): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(file, [...args], { stdio: ['ignore', 'ignore', 'pipe', ...fds], env: childEnv([]), timeout: 10_000, killSignal: 'SIGKILL' });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('error', (error) => resolve(error.message));
    child.on('close', (code, signal) => {
      if (code === 0) resolve(undefined);
      else resolve(`${stderr.trim().split('\n')[0] ?? ''}`.trim() || `exit ${code ?? signal}`);
    });
  });
}

/** The first executable `name` on PATH, skipping relative entries (a planted `./bwrap` never runs). */
function findOnPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (!path.isAbsolute(dir)) continue;
    const candidate = path.join(dir, name);
    if (isExecutable(candidate)) return candidate;
  }
  return undefined;
}

