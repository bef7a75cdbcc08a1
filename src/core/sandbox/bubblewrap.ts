import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DEPENDENCY_DIR } from './dependencies';
import { gateGroup, gateNsswitch, gatePasswd, type GateUser } from './gateUser';
import { gateSeccompProgram } from './seccomp';
import { realOrResolved, isInside } from '../realPath';
import { extraBinds, isRealFolder, realOrUndefined, runMounts, unique, type Layer } from './runMounts';
import type { Invocation, PreparedSandbox, Sandbox, SandboxRun } from './sandbox';

/**
 * bubblewrap around one gate command (docs/architecture.md, "Sandbox"). The
 * command sees only what a toolchain needs, read-only: `/usr`, `/etc`,
 * `/opt`, the `/bin` and `/lib*` links or folders, node's own install and
 * toolchains on PATH or under the home. Not `/var`, `/srv`, `/mnt`,
 * `/media`, `/home` or `/root`, so host service sockets and other users'
 * files there are simply absent. Writable: the clone (not its `.git`, not
 * its dependency folder outside setup), the throwaway home and temp folder,
 * and fresh `/tmp` and `/dev/shm` in memory, each bounded where the run asks
 * (SandboxRun.tmpfsMiB). A command of the agent gets a view of
 * the workspace instead of the clone, mounted at the workspace's own path,
 * with the workspace's dependency folders read-only over it and fresh tmpfs
 * folders for their caches (SandboxRun). Host-global kernel state is
 * read-only or masked as Docker does it, and of `/sys` only the CPUs show. Every
 * capability is dropped, and the seccomp filter of seccomp.ts is loaded
 * last.
 *
 * When Candor runs as root, bubblewrap sets up the mounts as root (it must
 * reach a clone and toolchains inside root's `0700` home) and `setpriv`
 * (util-linux) then becomes the gate user, with no capability left in any
 * set, before the shell starts. Otherwise bubblewrap runs as Candor's user in
 * a user namespace of its own, with `--disable-userns`.
 */

/** The files a command reads at fds 3, 4, 5, 6 (Invocation.inputs, in this order). */
const FD_SECCOMP = 3;
const FD_PASSWD = 4;
const FD_GROUP = 5;
const FD_NSSWITCH = 6;

/** How the command becomes the gate user when Candor is root. */
export interface UserSwitch {
  readonly user: GateUser;
  /** util-linux's `setpriv`, at a path inside the read-only system folders. */
  readonly setpriv: string;
}

export interface BubblewrapOptions {
  /** Set when Candor is root: the command runs as this user. */
  readonly user?: GateUser;
  /** With `user`: the host has an `/etc/nsswitch.conf`, and the sandbox gets its own (gateUser.ts, gateNsswitch). */
  readonly nsswitch?: boolean;
  /** SandboxRun.tmpfsMiB is kept (bubblewrap 0.5 and later). */
  readonly sizedTmpfs?: boolean;
  /** The fd of the first of SandboxRun.homeFiles, when the throwaway pair is in memory (the rest follow). */
  readonly homeFilesFd?: number;
  /** The real home, hidden; default os.homedir(). */
  readonly home?: string;
  /** Whose PATH names toolchains to bind; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Own PID, IPC and UTS namespaces, a new session (no TIOCSTI into our terminal), no capabilities, gone when Candor is. */
const ISOLATION = ['--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--new-session', '--die-with-parent'];

/** Top-level folders bound read-only (a link among them, such as `/bin` → `usr/bin`, is made a link again). */
const SYSTEM = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32', '/etc', '/opt'];

/** Docker's read-only paths: writes to `/proc/sys` are checked against uid 0, not capabilities. */
const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus', '/proc/fs'];
/** Docker's masked paths under /proc, files (/dev/null over them) and folders (an empty read-only tmpfs). */
const MASKED_KERNEL_FILES = ['/proc/kcore', '/proc/keys', '/proc/timer_list', '/proc/timer_stats', '/proc/latency_stats', '/proc/sched_debug'];
const MASKED_KERNEL_DIRS = ['/proc/acpi', '/proc/asound', '/proc/scsi'];
/**
 * Of `/sys`, only what runtimes read to size themselves (the CPUs online,
 * for `nproc` and thread pools). Docker's masked `/sys/firmware` and
 * `/sys/devices/virtual/powercap`, the host's cgroup tree and the rest are
 * simply not there; binding all of `/sys` (a dozen mounts with cgroup v1)
 * also costs every command a few milliseconds.
 */
const SYS_READ_ONLY = ['/sys/devices/system/cpu'];

/** Root-owned secrets under `/etc`: masked for Candor's own user too, whose group may read them. */
const MASKED_FILES = ['/etc/shadow', '/etc/gshadow', '/etc/ssh/ssh_host_rsa_key', '/etc/ssh/ssh_host_ecdsa_key', '/etc/ssh/ssh_host_ed25519_key', '/etc/ssh/ssh_host_dsa_key'];

/** Toolchains that commonly live under the home; bound back read-only when they exist. */
const HOME_TOOLCHAINS = ['.nvm', '.volta', '.fnm', '.local/share/fnm', '.local/share/pnpm', '.asdf', '.cargo/bin', '.rustup', '.pyenv', '.rbenv', '.local/bin', '.bun/bin', '.deno/bin', 'go/bin'];

/** Never bound from PATH: what the sandbox replaces with its own, or must not show at all. */
const NEVER_FROM_PATH = ['/tmp', '/var/tmp', '/run', '/var/run', '/dev', '/proc', '/sys', '/srv', '/mnt', '/media'];

/** `sizedTmpfs`: this bubblewrap takes `--size` (0.5 and later), so SandboxRun.tmpfsMiB is kept. */
export function bubblewrap(bwrap: string, userSwitch?: UserSwitch, sizedTmpfs = false): Sandbox {
  return {
    kind: 'bubblewrap',
    user: userSwitch?.user,
    sizedTmpfs,
    wrap: (command, run) => bubblewrapInvocation(bwrap, command, run, { userSwitch, sizedTmpfs }),
    prepare: (run) => prepareBubblewrap(bwrap, run, { userSwitch, sizedTmpfs }),
    isVisible: (dir, hidden = []) => readOnlyView(os.homedir(), hidden, process.env).shows(realOrResolved(dir)),
  };
}

type InvocationOptions = Omit<BubblewrapOptions, 'user'> & { readonly userSwitch?: UserSwitch; readonly sizedTmpfs?: boolean };

/** `bwrap <mounts> -- [setpriv …] /bin/sh -c command`, with its inputs: the seccomp program, and the gate user's passwd and group (and nsswitch.conf, users and groups from those files alone). */
export function bubblewrapInvocation(bwrap: string, command: string, run: SandboxRun, o: InvocationOptions = {}): Invocation {
  return prepareBubblewrap(bwrap, run, o).wrap(command);
}

/**
 * The invocations of one gate's commands, which share `run`. What the host
 * shows them that their own writes cannot change (the real paths of the
 * run's folders, the system folders, the toolchains, the gate user's files)
 * is looked up once here. Everything else is looked up again for each
 * command, right before it: the clone's `.git` and dependency folder, the
 * hidden folders, and every masked or read-only kernel entry.
 */
function prepareBubblewrap(bwrap: string, run: SandboxRun, o: InvocationOptions): PreparedSandbox {
  const to = o.userSwitch;
  const nsswitch = to !== undefined ? hostNsswitch() : undefined;
  const base = [gateSeccompProgram(), ...(to !== undefined ? [Buffer.from(gatePasswd(to.user, realOrResolved(run.home))), Buffer.from(gateGroup(to.user))] : []), ...(nsswitch !== undefined ? [Buffer.from(gateNsswitch(nsswitch))] : [])];
  const homeFiles = throwawayInMemory(run, o) ? (run.homeFiles ?? []).map((file) => Buffer.from(file.text)) : [];
  const options = { ...o, user: to?.user, nsswitch: nsswitch !== undefined, ...(homeFiles.length > 0 ? { homeFilesFd: FD_SECCOMP + base.length } : {}) };
  const view = hostView(run, options);
  const inputs = [...base, ...homeFiles];
  const switchUser = to !== undefined ? [to.setpriv, `--reuid=${to.user.uid}`, `--regid=${to.user.gid}`, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--'] : [];
  return {
    wrap: (command) => {
      const args = [...bubblewrapArgs(run, view, options), '--', ...switchUser, '/bin/sh', '-c', command];
      return { file: bwrap, args, inputs, script: args.length - 1 };
    },
  };
}

/** What the arguments take from the host that a gate's own commands cannot change. */
interface HostView {
  /** Where the working folder is mounted, and the host folder mounted there (the same one unless the run names a `cwdSource`). */
  readonly cwd: string;
  readonly cwdSource: string;
  /** The throwaway home and temp folder (unless in memory), and the run's other writable folders. */
  readonly writable: readonly string[];
  /** The throwaway home and temp folder, in this order, when they are in-memory folders. */
  readonly inMemory: readonly string[];
  /** The real home, always hidden. */
  readonly home: string | undefined;
  readonly system: readonly string[];
  /** Toolchain folders that exist, before the run's hidden folders are taken out (toolchainCandidates). */
  readonly toolchains: readonly string[];
}

/** The throwaway home and temp folder are in-memory folders of a bounded size (SandboxRun.throwawayInMemory). */
function throwawayInMemory(run: SandboxRun, o: BubblewrapOptions): boolean {
  return run.throwawayInMemory === true && o.sizedTmpfs === true && run.tmpfsMiB !== undefined && run.tmpfsMiB > 0;
}

function hostView(run: SandboxRun, o: BubblewrapOptions): HostView {
  const home = realHome(o.home ?? os.homedir());
  const system = systemFolders();
  const inMemory = throwawayInMemory(run, o) ? [realOrResolved(run.home), realOrResolved(run.tmp)] : [];
  return {
    cwd: realOrResolved(run.cwd),
    cwdSource: realOrResolved(run.cwdSource ?? run.cwd),
    writable: unique([run.home, run.tmp, ...(run.writable ?? [])].map(realOrResolved)).filter((dir) => !inMemory.includes(dir)),
    inMemory,
    home,
    system,
    toolchains: toolchainCandidates(home, o.env ?? process.env, system),
  };
}

/**
 * The arguments before `--`, in an order that matters: a folder is bound
 * before a tmpfs over part of it, a tmpfs before binds beneath it, and
 * permissions and read-only remounts come last, once everything is in place.
 * The run's own read-only binds come after the working folder's (so a dest
 * inside it shows the bound folder), and its tmpfs folders after every bind.
 */
function bubblewrapArgs(run: SandboxRun, view: HostView, o: BubblewrapOptions): string[] {
  const { cwd, cwdSource, writable, inMemory, home, system } = view;
  const used = [cwd, ...writable, ...inMemory];
  // Never hide what the command must use (a hidden folder that merely holds the clone is fine: the clone is bound back).
  const hiddenAll = unique([...(home !== undefined ? [home] : []), ...existingReal(run.hidden ?? [])]).filter((dir) => dir !== '/' && !used.some((u) => isInside(u, dir)));
  const tools = selectToolchains(view.toolchains, home, hiddenAll);
  // A hidden folder needs covering only where something bound would show it.
  const hidden = hiddenAll.filter((dir) => [...system, ...tools].some((bound) => isInside(bound, dir))).sort((a, b) => depth(a) - depth(b));
  // The writable tmpfs folders live in memory: each bounded where the run asks it.
  const size = o.sizedTmpfs === true && run.tmpfsMiB !== undefined && run.tmpfsMiB > 0 ? ['--size', String(Math.floor(run.tmpfsMiB * 1024 * 1024))] : [];
  const args = [...systemArgs(), '--dev', '/dev', '--perms', '1777', ...size, '--tmpfs', '/dev/shm', ...kernelArgs(), '--perms', '1777', ...size, '--tmpfs', '/tmp', ...size, '--tmpfs', '/run'];
  if (run.network) {
    // DNS: resolv.conf may be a link into /run (systemd-resolved).
    const resolv = realOrUndefined('/etc/resolv.conf');
    if (resolv !== undefined && isInside('/run', resolv)) args.push('--ro-bind', resolv, resolv);
  }
  for (const file of MASKED_FILES) if (fs.existsSync(file)) args.push('--ro-bind', '/dev/null', file);
  if (o.user !== undefined) args.push('--perms', '0444', '--ro-bind-data', String(FD_PASSWD), '/etc/passwd', '--perms', '0444', '--ro-bind-data', String(FD_GROUP), '/etc/group');
  if (o.user !== undefined && o.nsswitch === true) args.push('--perms', '0444', '--ro-bind-data', String(FD_NSSWITCH), '/etc/nsswitch.conf');
  for (const dir of hidden) args.push('--tmpfs', dir);
  for (const dir of tools) args.push('--ro-bind', dir, dir);
  for (const dir of writable) args.push('--bind', dir, dir);
  args.push(...inMemoryArgs(run, inMemory, size, o.homeFilesFd));
  args.push('--bind', cwdSource, cwd);
  // `.git` and the dependency folder as the source has them: the folder that is mounted, not whatever is at `cwd` on the host.
  const readOnlyInCwd = [...(isRealFolder(path.join(cwdSource, '.git')) ? ['.git'] : []), ...(!run.depsWritable && isRealFolder(path.join(cwdSource, DEPENDENCY_DIR)) ? [DEPENDENCY_DIR] : [])];
  for (const relative of readOnlyInCwd) args.push('--ro-bind', path.join(cwdSource, relative), path.join(cwd, relative));
  // Where each dest ends up, for the run's own binds and tmpfs folders: the last mount holding a path is the one that shows it.
  const layers: Layer[] = [
    { dest: '/' },
    ...system.map((dir) => ({ dest: dir, source: dir, readOnly: true })),
    ...['/tmp', '/run', '/dev/shm', ...hidden].map((dir) => ({ dest: dir })),
    ...tools.map((dir) => ({ dest: dir, source: dir, readOnly: true })),
    ...writable.map((dir) => ({ dest: dir, source: dir, readOnly: false })),
    ...inMemory.map((dir) => ({ dest: dir })),
    { dest: cwd, source: cwdSource, readOnly: false },
    ...readOnlyInCwd.map((relative) => ({ dest: path.join(cwd, relative), source: path.join(cwdSource, relative), readOnly: true })),
  ];
  const { binds, tmpfsDests } = runMounts(run, layers, args, extraBinds(run.readOnlyBinds ?? [], home, hiddenAll), size);
  const tmpfsRoots = ['/tmp', '/run', '/dev/shm', ...hidden, ...inMemory, ...tmpfsDests];
  const sys = SYS_READ_ONLY.filter(isRealFolder);
  for (const dir of skeleton([...sys, ...tools, ...writable, ...inMemory, cwd, ...binds, ...tmpfsDests], [...system, ...sys, ...tools, ...writable, cwd, ...binds], tmpfsRoots)) args.push('--chmod', '0755', dir);
  for (const dir of [...hidden, ...MASKED_KERNEL_DIRS.filter(isRealFolder)]) args.push('--remount-ro', dir);
  args.push('--remount-ro', '/', '--chdir', cwd, ...ISOLATION, ...capabilityArgs(o.user));
  if (!run.network) args.push('--unshare-net');
  args.push('--seccomp', String(FD_SECCOMP));
  return args;
}

/**
 * The throwaway home and temp folder as in-memory folders of `size`, in
 * place of the host folders: writable for whatever uid the command runs as
 * (the temp folder sticky, as `/tmp`; the home not, so a program may
 * replace a file there, as git does its config), then the home's files,
 * copied in from descriptors at `firstFd`, `firstFd + 1`, …
 */
function inMemoryArgs(run: SandboxRun, inMemory: readonly string[], size: readonly string[], firstFd: number | undefined): string[] {
  const [home, tmp] = inMemory;
  if (home === undefined || tmp === undefined) return [];
  const args = ['--perms', '0777', ...size, '--tmpfs', home, '--perms', '1777', ...size, '--tmpfs', tmp];
  if (firstFd === undefined) return args;
  (run.homeFiles ?? []).forEach((file, index) => {
    if (path.basename(file.name) !== file.name || file.name === '..' || file.name === '.') return;
    args.push('--perms', '0666', '--file', String(firstFd + index), path.join(home, file.name));
  });
  return args;
}

/**
 * As root, bubblewrap keeps what `setpriv` needs to become the gate user and
 * drop the rest, and what lets it enter a clone of the gate user's that is
 * `0700`; setpriv leaves no capability in any set. Otherwise a user
 * namespace of its own, and none nested in it.
 */
function capabilityArgs(user: GateUser | undefined): string[] {
  if (user === undefined) return ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL'];
  return ['--cap-drop', 'ALL', ...['CAP_SETUID', 'CAP_SETGID', 'CAP_SETPCAP', 'CAP_DAC_READ_SEARCH'].flatMap((cap) => ['--cap-add', cap])];
}

/** The system folders and links, read-only. */
function systemArgs(): string[] {
  const args: string[] = [];
  for (const entry of SYSTEM) {
    const stat = lstatOrUndefined(entry);
    if (stat?.isSymbolicLink() === true) args.push('--symlink', fs.readlinkSync(entry), entry);
    else if (stat?.isDirectory() === true) args.push('--ro-bind', entry, entry);
  }
  return args;
}

/** The real paths the system folders show. */
function systemFolders(): string[] {
  return unique(existingReal(SYSTEM));
}

/** The real paths of those of `entries` that exist, in order: one `realpath` each, which fails for a missing one. */
function existingReal(entries: readonly string[]): string[] {
  const found: string[] = [];
  for (const entry of entries) {
    const real = realOrUndefined(entry);
    if (real !== undefined) found.push(real);
  }
  return found;
}

/**
 * A fresh `/proc` whose host-global parts are read-only and whose masked
 * entries are covered, and the CPU part of `/sys`. Only entries that exist:
 * bubblewrap stops when asked to cover a missing one, and kernels differ (no
 * `/proc/sysrq-trigger` or `/proc/kcore` on some).
 */
function kernelArgs(): string[] {
  const args = ['--proc', '/proc'];
  for (const entry of PROC_READ_ONLY) if (fs.existsSync(entry)) args.push('--ro-bind', entry, entry);
  for (const file of MASKED_KERNEL_FILES) if (fs.existsSync(file)) args.push('--ro-bind', '/dev/null', file);
  for (const dir of MASKED_KERNEL_DIRS) if (isRealFolder(dir)) args.push('--tmpfs', dir);
  for (const dir of SYS_READ_ONLY) if (isRealFolder(dir)) args.push('--ro-bind', dir, dir);
  return args;
}

/**
 * The folders bubblewrap made on a tmpfs (its own root, or one of ours) to
 * reach a bound one: it copies the mode of the host folder (root's `0700`
 * home), which would stop the gate user on the way to its clone. A folder
 * whose nearest mount is a host bind is the host's own and keeps its mode; a
 * tmpfs root keeps the mode it was given.
 */
function skeleton(dests: readonly string[], bound: readonly string[], tmpfsRoots: readonly string[]): string[] {
  const made = new Set<string>();
  // The mounts holding a folder are all its ancestors: the longest path is the nearest. bubblewrap's own root is a tmpfs.
  const nearest = (dir: string, mounts: readonly string[]): number => Math.max(-1, ...mounts.filter((m) => isInside(m, dir)).map((m) => m.length));
  const tmpfs = ['/', ...tmpfsRoots];
  for (const dest of dests) {
    for (let dir = path.dirname(dest); dir !== path.dirname(dir); dir = path.dirname(dir)) {
      if (tmpfsRoots.includes(dir) || nearest(dir, bound) > nearest(dir, tmpfs)) continue;
      made.add(dir);
    }
  }
  return [...made].sort((a, b) => depth(a) - depth(b));
}

/** What every command sees read-only, for the environment's toolchain variables: the system folders and toolchains, minus hidden folders among them. */
function readOnlyView(homeDir: string, hidden: readonly string[], env: NodeJS.ProcessEnv): { shows(dir: string): boolean } {
  const home = realHome(homeDir);
  const hiddenAll = unique([...(home !== undefined ? [home] : []), ...hidden.map(realOrResolved)]);
  const system = systemFolders();
  const visible = [...system, ...toolchainFolders(home, hiddenAll, env)];
  const covered = hiddenAll.filter((dir) => system.some((sys) => isInside(sys, dir)));
  return { shows: (dir) => visible.some((v) => isInside(v, dir)) && !covered.some((h) => isInside(h, dir)) };
}

/**
 * Toolchains, bound read-only: node's own install, the usual version
 * managers under the home, and PATH entries. Never the home itself, never
 * one that holds or lies in another hidden folder (a data folder under the
 * home stays hidden), never one of the places the sandbox replaces.
 */
export function toolchainFolders(home: string | undefined, hidden: readonly string[], env: NodeJS.ProcessEnv): string[] {
  return selectToolchains(toolchainCandidates(home, env, systemFolders()), home, hidden);
}

/** The toolchain folders that exist and may be bound: readable, outside the home, the system folders and the places the sandbox replaces. */
function toolchainCandidates(home: string | undefined, env: NodeJS.ProcessEnv, system: readonly string[]): string[] {
  const nodeBin = path.dirname(realOrResolved(process.execPath));
  // `<prefix>/bin/node`: npm and global modules live beside it, in `<prefix>/lib`.
  const own = [path.basename(nodeBin) === 'bin' ? path.dirname(nodeBin) : nodeBin, ...(home !== undefined ? HOME_TOOLCHAINS.map((relative) => path.join(home, relative)) : [])];
  // A PATH often names a folder twice (npm puts its `.bin` folders first again): each is looked at once.
  const onPath = unique((env.PATH ?? '').split(path.delimiter).filter((entry) => path.isAbsolute(entry)));
  return [...existingReal(own), ...existingReal(onPath).filter((dir) => !NEVER_FROM_PATH.some((never) => isInside(never, dir)))]
    .filter((dir) => isRealFolder(dir) && isReadable(dir) && dir !== '/' && (home === undefined || !isInside(dir, home)))
    .filter((dir) => !system.some((sys) => isInside(sys, dir)) && !NEVER_FROM_PATH.some((never) => isInside(dir, never)));
}

/** Of the candidates, those apart from every hidden folder but the home, each once, and none inside another. */
function selectToolchains(candidates: readonly string[], home: string | undefined, hidden: readonly string[]): string[] {
  const others = hidden.filter((dir) => dir !== home);
  const found = candidates.filter((dir) => !others.some((other) => isInside(dir, other) || isInside(other, dir)));
  // A folder inside another one already bound adds nothing.
  return unique(found).filter((dir, _i, all) => !all.some((other) => other !== dir && isInside(other, dir)));
}

/** Read once: `null` when the host has none. */
let nsswitchOfHost: string | null | undefined;

/** The host's `/etc/nsswitch.conf` when it is a small regular file (musl systems have none); read once per process, since each agent command prepares its sandbox anew. */
function hostNsswitch(): string | undefined {
  if (nsswitchOfHost === undefined) {
    try {
      const stat = fs.statSync('/etc/nsswitch.conf');
      nsswitchOfHost = stat.isFile() && stat.size <= 64 * 1024 ? fs.readFileSync('/etc/nsswitch.conf', 'utf8') : null;
    } catch {
      nsswitchOfHost = null;
    }
  }
  return nsswitchOfHost ?? undefined;
}

function realHome(home: string): string | undefined {
  return home !== '' && fs.existsSync(home) ? realOrResolved(home) : undefined;
}

function lstatOrUndefined(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file);
  } catch {
    return undefined;
  }
}

/** bubblewrap stops at a folder it cannot reach (started by an ordinary user: one of root's on PATH). */
function isReadable(dir: string): boolean {
  try {
    fs.accessSync(dir, fs.constants.R_OK | fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function depth(dir: string): number {
  return dir.split(path.sep).length;
}
