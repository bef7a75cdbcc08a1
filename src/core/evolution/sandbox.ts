import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childEnv } from '../process/childEnv';
import { DEPENDENCY_DIR } from './paths';
import { seatbeltProfile } from './seatbelt';
import { realOrResolved } from '../realPath';

/**
 * The OS sandbox every command of an evolution run goes through
 * (docs/architecture.md, "Sandbox"): setup, build, test and the change
 * phase's `run_tests`. The model writes code and that code runs here, so the
 * sandbox assumes it is hostile.
 *
 * Linux: bubblewrap, called directly. `@anthropic-ai/sandbox-runtime` wraps
 * the same bubblewrap (and Seatbelt on macOS) and adds a filtering network
 * proxy, but it needs `socat` and `ripgrep` too, costs about 50 ms a command
 * against about 5 ms for bwrap (see bench/sandbox.bench.ts), and by default
 * lets the command read the whole disk. Candor's gate needs no network at
 * all for build and test, so the proxy buys nothing there.
 */

export type SandboxKind = 'bubblewrap' | 'seatbelt' | 'off';
/** `candor.evolution.sandbox`. */
export type SandboxMode = 'required' | 'off';

export interface SandboxRun {
  /** The scratch clone: the working folder, writable except its `.git`. */
  readonly cwd: string;
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
}

/** A program and its arguments, ready for `spawn` without a shell around it. */
export interface Invocation {
  readonly file: string;
  readonly args: readonly string[];
}

export interface Sandbox {
  readonly kind: SandboxKind;
  wrap(command: string, run: SandboxRun): Invocation;
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
}

/** Printed (and logged) at the start of every run with the sandbox off. */
export const SANDBOX_OFF_WARNING = 'warning: candor.evolution.sandbox is "off": setup, build and test (and the model\'s code they run) run without an OS sandbox, at your own risk';

const TURN_OFF = 'or set candor.evolution.sandbox to "off" in your user settings to run them without one, at your own risk';

/** The sandbox for `mode`, after checking that it really starts here; or why it cannot. */
export async function detectSandbox(mode: SandboxMode, options: DetectOptions = {}): Promise<Sandbox | SandboxUnavailable> {
  if (mode === 'off') return NO_SANDBOX;
  const platform = options.platform ?? process.platform;
  if (platform === 'linux') {
    const bwrap = options.bwrapPath ?? findOnPath('bwrap');
    if (bwrap === undefined || !isExecutable(bwrap)) {
      return unavailable('missing', `evolution's commands must run in an OS sandbox, and bubblewrap was not found ${bwrap !== undefined ? `at ${bwrap}` : 'on PATH'}: install it (apt-get install bubblewrap), ${TURN_OFF}`);
    }
    // Namespaces may be refused (a container without user namespaces, a hardened kernel): try the real flags once.
    const probe = await runProbe(bwrap, ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', ...ISOLATION, '--unshare-net', '--', '/bin/true']);
    if (probe !== undefined) {
      return unavailable('refused', `bubblewrap (${bwrap}) could not start a sandbox here: ${probe}. User namespaces may be disabled; enable them, ${TURN_OFF}`);
    }
    return bubblewrap(bwrap);
  }
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
    return process.platform === 'win32' ? { file: process.env.ComSpec ?? 'cmd.exe', args: ['/d', '/s', '/c', command] } : { file: '/bin/sh', args: ['-c', command] };
  },
};

/**
 * The environment of a sandboxed command: the host's without Candor's
 * secrets (childEnv), with HOME and the temp folder pointing at the run's
 * throwaway ones, and without what would lead back to the host's sockets
 * and per-user folders. `CANDOR_EVOLUTION_GATE=1` tells the project's tests
 * where they run: a project whose tests start a sandbox of their own (Candor's
 * do) cannot nest one in this one, and may skip those tests here.
 */
export function sandboxEnv(secrets: readonly string[], home: string, tmp: string, base: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  const env = childEnv(secrets, base);
  for (const name of Object.keys(env)) {
    if (name.startsWith('XDG_') || HOST_LINKS.has(name)) delete env[name];
  }
  return { ...env, HOME: home, USERPROFILE: home, TMPDIR: tmp, TMP: tmp, TEMP: tmp, [GATE_MARKER]: '1' };
}

/** Set in the environment of every command of an evolution gate. @internal */
export const GATE_MARKER = 'CANDOR_EVOLUTION_GATE';

const HOST_LINKS = new Set(['SSH_AUTH_SOCK', 'GPG_AGENT_INFO', 'DBUS_SESSION_BUS_ADDRESS', 'DISPLAY', 'WAYLAND_DISPLAY', 'KRB5CCNAME', 'DOCKER_HOST']);

/** Own PID, IPC and UTS namespaces, a new session (no TIOCSTI into our terminal), no capabilities: as root, without `--cap-drop ALL`, a shell remounts `/` read-write. */
const ISOLATION = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--new-session', '--cap-drop', 'ALL', '--die-with-parent'];

/** Toolchains that commonly live under the home; bound back read-only when they exist. */
const HOME_TOOLCHAINS = ['.nvm', '.volta', '.fnm', '.local/share/fnm', '.local/share/pnpm', '.asdf', '.cargo/bin', '.rustup', '.pyenv', '.rbenv', '.local/bin', '.bun/bin', '.deno/bin', 'go/bin'];

/** Root-owned secrets a capability-less root could still read (owner match): /dev/null is bound over them, and reading that is refused. */
const MASKED_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/ssh/ssh_host_rsa_key', '/etc/ssh/ssh_host_ecdsa_key', '/etc/ssh/ssh_host_ed25519_key', '/etc/ssh/ssh_host_dsa_key'];

export function bubblewrap(bwrap: string): Sandbox {
  return {
    kind: 'bubblewrap',
    wrap(command, run) {
      return { file: bwrap, args: [...bubblewrapArgs(run), '--', '/bin/sh', '-c', command] };
    },
  };
}

/**
 * The mounts, in an order that matters: a tmpfs over a folder must come
 * before anything bound beneath it, and the hidden tmpfs mounts are made
 * read-only only after everything beneath them is in place.
 */
export function bubblewrapArgs(run: SandboxRun, home = os.homedir(), env: NodeJS.ProcessEnv = process.env): string[] {
  const cwd = realOrResolved(run.cwd);
  const realHome = home !== '' && fs.existsSync(home) ? realOrResolved(home) : undefined;
  const hidden = unique([...(realHome !== undefined && realHome !== '/' ? [realHome] : []), ...(run.hidden ?? []).filter((dir) => fs.existsSync(dir)).map(realOrResolved)])
    // Never hide what the command must use (a hidden folder that merely contains the clone is fine: the clone is bound back).
    .filter((dir) => dir !== '/' && ![cwd, realOrResolved(run.home), realOrResolved(run.tmp)].some((used) => within(used, dir)))
    .sort((a, b) => depth(a) - depth(b));
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run'];
  if (run.network) {
    // DNS: resolv.conf may be a link into /run (systemd-resolved), hidden above.
    const resolv = realOrUndefined('/etc/resolv.conf');
    if (resolv !== undefined && within('/run', resolv)) args.push('--ro-bind', resolv, resolv);
  }
  for (const file of MASKED_FILES) if (fs.existsSync(file)) args.push('--ro-bind', '/dev/null', file);
  for (const dir of hidden) args.push('--tmpfs', dir);
  for (const dir of realHome !== undefined ? toolchains(realHome, hidden, env) : []) args.push('--ro-bind', dir, dir);
  for (const dir of unique([realOrResolved(run.home), realOrResolved(run.tmp), ...(run.writable ?? []).map(realOrResolved)])) args.push('--bind', dir, dir);
  args.push('--bind', cwd, cwd);
  const gitDir = path.join(cwd, '.git');
  if (isRealFolder(gitDir)) args.push('--ro-bind', gitDir, gitDir);
  const deps = path.join(cwd, DEPENDENCY_DIR);
  if (!run.depsWritable && isRealFolder(deps)) args.push('--ro-bind', deps, deps);
  for (const dir of hidden) args.push('--remount-ro', dir);
  args.push('--chdir', cwd, ...ISOLATION);
  if (!run.network) args.push('--unshare-net');
  return args;
}

/**
 * Toolchains under the home, bound back read-only: node's own install, the
 * usual version managers, and PATH entries there. Never one that holds, or
 * lies in, another hidden folder (a data folder under the home stays hidden).
 */
function toolchains(home: string, hidden: readonly string[], env: NodeJS.ProcessEnv): string[] {
  const others = hidden.filter((dir) => dir !== home);
  const candidates: string[] = [];
  const nodeBin = path.dirname(realOrResolved(process.execPath));
  // `<prefix>/bin/node`: npm and global modules live beside it, in `<prefix>/lib`.
  candidates.push(path.basename(nodeBin) === 'bin' ? path.dirname(nodeBin) : nodeBin);
  for (const relative of HOME_TOOLCHAINS) candidates.push(path.join(home, relative));
  for (const entry of (env.PATH ?? '').split(path.delimiter)) if (path.isAbsolute(entry)) candidates.push(entry);
  const found = candidates
    .filter((dir) => fs.existsSync(dir))
    .map(realOrResolved)
    .filter((dir) => dir !== home && within(home, dir) && isRealFolder(dir) && !others.some((other) => within(dir, other) || within(other, dir)));
  // A folder inside another one already bound adds nothing.
  return unique(found).filter((dir, _i, all) => !all.some((other) => other !== dir && within(other, dir)));
}

function seatbelt(exec: string): Sandbox {
  return {
    kind: 'seatbelt',
    wrap(command, run) {
      const home = realOrResolved(os.homedir());
      const hidden = [home, ...(run.hidden ?? []).map(realOrResolved)];
      const profile = seatbeltProfile(
        { ...run, cwd: realOrResolved(run.cwd), home: realOrResolved(run.home), tmp: realOrResolved(run.tmp), writable: (run.writable ?? []).map(realOrResolved), hidden },
        toolchains(home, hidden, process.env),
      );
      return { file: exec, args: ['-p', profile, '/bin/sh', '-c', command] };
    },
  };
}

function unavailable(cause: SandboxUnavailable['cause'], message: string): SandboxUnavailable {
  return { kind: 'unavailable', cause, message };
}

/** Undefined when `file args` ran and exited 0; else what went wrong, in a line. */
function runProbe(file: string, args: readonly string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    const child = spawn(file, [...args], { stdio: ['ignore', 'ignore', 'pipe'], env: childEnv([]), timeout: 10_000, killSignal: 'SIGKILL' });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
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

function isExecutable(file: string): boolean {
  try {
    if (!fs.statSync(file).isFile()) return false;
    fs.accessSync(file, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function isRealFolder(dir: string): boolean {
  try {
    return fs.lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function realOrUndefined(target: string): string | undefined {
  try {
    return fs.realpathSync.native(target);
  } catch {
    return undefined;
  }
}

function within(parent: string, child: string): boolean {
  const relative = path.relative(parent, child);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
}

function depth(dir: string): number {
  return dir.split(path.sep).length;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
