/**
 * Benchmarks of the OS sandbox around evolution's commands. Not a test: it
 * prints times and ratios measured side by side in one run, the samples of
 * each way taken in turn so that machine noise hits all alike.
 *
 * (a) start-up per command (`true`, `node -e 0`, and the evolution
 *     benchmark's test command), three ways, each spawned as the gate spawns
 *     it: in today's hardened sandbox (the gate user when run as root, the
 *     seccomp filter, the reduced mounts, and the limits of limits.ts:
 *     cgroup or rlimits; once more without the limits, and as root once
 *     more without the uid switch either, to tell each part's cost apart),
 *     in the 0.1.0 profile (its bubblewrap arguments, copied
 *     below), and bare in a plain shell. What a gate sets up once for all
 *     its commands (the sandbox prepared for its run, its input files, its
 *     cgroup, and that cgroup's removal after the result) is measured on its
 *     own, apart from what each command pays;
 * (b) the whole gate call (`runGate`: throwaway home, sandbox, the gate's
 *     cgroup, clean-up), one command, with and without the limits, against
 *     the same call with the sandbox off: per gate and per command together;
 * (c) the scratch clone with objects copied (`--no-hardlinks`, what Candor
 *     does) against a hard-linked local clone, on the 10,000-commit
 *     repository of bench/evolution.bench.ts;
 * (d) the disk limit's cost per poll, on a copy of this checkout (Candor's
 *     own size, its `node_modules` included): the cheap tick (`statfs`) and
 *     the full measure, the walk in Node of before (copied below) against
 *     GNU du plus the files held open, wall time and the CPU it costs
 *     Candor's own thread, side by side.
 *
 * `@anthropic-ai/sandbox-runtime` was evaluated by reading only (it needs
 * socat and ripgrep besides bubblewrap); its cost is not measured here.
 *
 * Run: `npm run bench -- sandbox`.
 */
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runGate } from '../src/core/evolution/testGate';
import { GateInputs, NO_SANDBOX, detectSandbox, prepareSandbox, type Invocation, type PreparedSandbox, type Sandbox, type SandboxRun } from '../src/core/sandbox/sandbox';
import { gateEnvironment } from '../src/core/process/environment';
import { DEFAULT_GATE_LIMITS, prepareLimits } from '../src/core/sandbox/limits';
import type { GateCgroup } from '../src/core/sandbox/cgroup';
import { openGateCgroup, releaseGateCgroup, settleGateCgroups } from '../src/core/sandbox/gateCgroups';
import { prepareForGateUser } from '../src/core/sandbox/gateUser';
import { generatedRepo } from './evolution.bench';
import { measureFolders } from '../src/core/sandbox/diskUsage';
import { heldOpenBytes, processTree } from '../src/core/sandbox/heldOpen';

const STARTS = 40;
const CLONES = 5;
const POLLS = 20;

// A CA bundle makes every `node` start half a second slower here; it would drown what is measured.
delete process.env.NODE_EXTRA_CA_CERTS;

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Between two samples, untimed: the kernel finishes what the last one left (a removed cgroup is torn down in the background). */
const SETTLE_MS = 10;

/** Runs each action `times` times, in turn, and returns each one's median. */
async function sideBySide(times: number, actions: ReadonlyArray<() => unknown>): Promise<number[]> {
  const samples = actions.map(() => [] as number[]);
  for (let i = 0; i < times; i++) {
    for (const [n, action] of actions.entries()) {
      const started = performance.now();
      await action();
      samples[n]?.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
    }
  }
  return samples.map(median);
}

function spawnOnce(invocation: Invocation, cwd: string, env: NodeJS.ProcessEnv, fds: readonly number[] = []): void {
  const result = spawnSync(invocation.file, [...invocation.args], { cwd, env, stdio: ['ignore', 'ignore', 'pipe', ...fds] });
  if (result.status !== 0) throw new Error(`${invocation.file} ${invocation.args.join(' ')} exited ${result.status}: ${result.stderr.toString()}`);
}

/** What a gate sets up once for its commands: the sandbox prepared for its run, its input files, its cgroup (undefined: none here). */
interface GateSetup {
  readonly sandbox: PreparedSandbox;
  readonly inputs: GateInputs;
  readonly cgroup: GateCgroup | undefined;
}

function setUpGate(sandbox: Sandbox, run: SandboxRun, work: string): GateSetup {
  const dir = fs.mkdtempSync(path.join(work, 'inputs-'));
  return { sandbox: prepareSandbox(sandbox, run), inputs: new GateInputs(dir), cgroup: openGateCgroup(DEFAULT_GATE_LIMITS) };
}

/**
 * One hardened command in a gate, all of its own cost timed: its
 * invocation, its inputs opened (seccomp program, passwd, group), the limits
 * prepared (prlimit in front, the gate cgroup's files opened for the join), the spawn,
 * and the cgroup emptied after it. Without `limits`, none of them.
 */
async function hardenedOnce(gate: GateSetup, command: string, run: SandboxRun, env: NodeJS.ProcessEnv, limits: boolean, kernel?: string, userSwitch = true): Promise<void> {
  const invocation = userSwitch ? gate.sandbox.wrap(command) : withoutUserSwitch(gate.sandbox.wrap(command));
  const inputs = gate.inputs.open(invocation.inputs);
  const limited = limits ? prepareLimits(invocation, { limits: { ...DEFAULT_GATE_LIMITS, diskPaths: [] }, cgroup: gate.cgroup, fdsBefore: inputs.fds.length, kernel }) : undefined;
  try {
    spawnOnce(limited?.invocation ?? invocation, run.cwd, env, [...inputs.fds, ...(limited?.fds ?? [])]);
  } finally {
    inputs.close();
    for (const fd of limited?.fds ?? []) fs.closeSync(fd);
    if (limited?.ownsCgroup === true) await limited.cgroup?.close();
    else await limited?.cgroup?.drain();
  }
}

/**
 * The same invocation with its `setpriv … --` step cut out, so the command
 * runs as root: what bubblewrap itself costs with every mount, mask and the
 * seccomp filter of the hardened profile. Only for measuring, never for
 * running anything of a gate's.
 */
function withoutUserSwitch(invocation: Invocation): Invocation {
  const at = invocation.args.findIndex((arg) => path.basename(arg) === 'setpriv');
  const end = at < 0 ? -1 : invocation.args.indexOf('--', at);
  if (end < 0) return invocation;
  const args = [...invocation.args.slice(0, at), ...invocation.args.slice(end + 1)];
  return { ...invocation, args, ...(invocation.script !== undefined ? { script: invocation.script - (end + 1 - at) } : {}) };
}

/**
 * What a gate pays once, in two parts: its setup before the first command
 * (the sandbox prepared for its run, its input files written, its cgroup
 * made after the strays are swept), and the cgroup's removal, which runs
 * after the gate's result has gone back, off its path.
 */
async function perGate(sandbox: Sandbox, run: SandboxRun, work: string): Promise<{ setup: number; removal: number }> {
  const setups: number[] = [];
  const removals: number[] = [];
  for (let i = 0; i <= STARTS; i++) {
    const started = performance.now();
    const gate = setUpGate(sandbox, run, work);
    gate.inputs.open(gate.sandbox.wrap('true').inputs).close();
    const setUp = performance.now();
    if (gate.cgroup !== undefined) releaseGateCgroup(gate.cgroup);
    await settleGateCgroups();
    // The first round warms up.
    if (i > 0) {
      setups.push(setUp - started);
      removals.push(performance.now() - setUp);
    }
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  }
  return { setup: median(setups), removal: median(removals) };
}

/**
 * The 0.1.0 profile, as its bubblewrapArgs built it for this run (as root):
 * all of `/` read-only, the home hidden, no user switch, no seccomp, `/proc/sys`
 * writable. Its toolchain binds under the home are left out (node is
 * outside the home here).
 */
function profile010(bwrap: string, command: string, run: SandboxRun, home: string): Invocation {
  const git = path.join(run.cwd, '.git');
  const masks = ['/etc/shadow', '/etc/gshadow', '/etc/ssh/ssh_host_rsa_key', '/etc/ssh/ssh_host_ecdsa_key', '/etc/ssh/ssh_host_ed25519_key', '/etc/ssh/ssh_host_dsa_key'].filter((f) => fs.existsSync(f)).flatMap((f) => ['--ro-bind', '/dev/null', f]);
  const args = [
    '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run',
    ...masks,
    '--tmpfs', home,
    '--bind', run.home, run.home, '--bind', run.tmp, run.tmp,
    '--bind', run.cwd, run.cwd, '--ro-bind', git, git,
    '--remount-ro', home,
    '--chdir', run.cwd,
    '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--unshare-cgroup-try', '--new-session', '--cap-drop', 'ALL', '--die-with-parent',
    '--unshare-net',
    '--', '/bin/sh', '-c', command,
  ];
  return { file: bwrap, args };
}

function ratio(value: number, base: number): string {
  return `${(value / (base || 1)).toFixed(2)}×`;
}

async function startUp(sandbox: Sandbox, bwrap: string, label: string, command: string, work: string): Promise<number[]> {
  const run = await benchRun(sandbox, work);
  const { env } = gateEnvironment({ home: run.home, tmp: run.tmp, user: sandbox.user?.name ?? os.userInfo().username, network: false, extraNames: [], isVisible: (dir) => sandbox.isVisible(dir) });
  const v010 = profile010(bwrap, command, run, os.homedir());
  // The commands below are one gate's: what it sets up once is made before them (perGate measures it), and removed after them.
  const gate = setUpGate(sandbox, run, work);
  try {
    const switched = sandbox.user !== undefined;
    const [bare = 0, old = 0, hardened = 0, unlimited = 0, fixedJoin = 0, alone = 0] = await sideBySide(STARTS, [
      () => spawnOnce(NO_SANDBOX.wrap(command, run), run.cwd, env),
      () => spawnOnce(v010, run.cwd, env),
      () => hardenedOnce(gate, command, run, env, true),
      () => hardenedOnce(gate, command, run, env, false),
      // As on a kernel before 5.16 (or a v2 cgroup): a shell of its own joins before everything else.
      () => hardenedOnce(gate, command, run, env, true, '5.15.0'),
      // As root: bubblewrap alone, neither the uid switch nor the limits.
      ...(switched ? [() => hardenedOnce(gate, command, run, env, false, undefined, false)] : []),
    ]);
    console.log(`    ${label}`);
    console.log(`      bare ${ms(bare).padStart(8)}   0.1.0 ${ms(old).padStart(8)} (${ratio(old, bare)})   hardened ${ms(hardened).padStart(8)} (${ratio(hardened, bare)}; ${ratio(hardened, old)} of 0.1.0)   hardened without limits ${ms(unlimited).padStart(8)} (${ratio(unlimited, bare)})`);
    console.log(`      hardened, joined by a shell of its own first (kernels before 5.16) ${ms(fixedJoin).padStart(8)} (${ratio(fixedJoin, bare)})`);
    if (switched) {
      console.log(`      bubblewrap alone (the hardened profile's mounts, masks and seccomp; no uid switch, no limits) ${ms(alone).padStart(8)} (${ratio(alone, bare)})`);
      console.log(`      of the ${ms(hardened - bare)} hardened adds: bubblewrap ${ms(alone - bare)}, the uid switch (setpriv) ${ms(unlimited - alone)}, the limits (prlimit, the join) ${ms(hardened - unlimited)}`);
    }
    return [bare, old, hardened, unlimited, fixedJoin, alone];
  } finally {
    if (gate.cgroup !== undefined) releaseGateCgroup(gate.cgroup);
    await settleGateCgroups();
  }
}

/** A clone holding the evolution bench's test, with a `.git`, and a throwaway pair; the gate user's when there is one. */
async function benchRun(sandbox: Sandbox, work: string): Promise<SandboxRun> {
  const base = fs.mkdtempSync(path.join(work, 'run-'));
  // Its tmpfs folders bounded as a gate with the default limits bounds them.
  const run: SandboxRun = { cwd: path.join(base, 'clone'), home: path.join(base, 'home'), tmp: path.join(base, 'tmp'), network: false, depsWritable: false, tmpfsMiB: DEFAULT_GATE_LIMITS.diskMiB };
  for (const dir of [run.cwd, path.join(run.cwd, '.git'), run.home, run.tmp]) fs.mkdirSync(dir, { recursive: true });
  fs.copyFileSync(path.join(generatedRepo(), 'test.js'), path.join(run.cwd, 'test.js'));
  if (sandbox.user !== undefined) for (const dir of [run.cwd, run.home, run.tmp]) await prepareForGateUser(dir, sandbox.user);
  return run;
}

export async function run(): Promise<void> {
  const sandbox = await detectSandbox('required');
  if (sandbox.kind === 'unavailable') throw new Error(sandbox.message);
  const bwrap = execFileSync('sh', ['-c', 'command -v bwrap'], { encoding: 'utf8' }).trim();
  const workspace = generatedRepo();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-sandbox-'));
  try {
    const limits = prepareLimits(sandbox.wrap('true', { cwd: work, home: work, tmp: work, network: false, depsWritable: false }), { limits: { ...DEFAULT_GATE_LIMITS, diskPaths: [] } });
    await limits.cgroup?.close();
    const as = sandbox.user !== undefined ? `as uid ${sandbox.user.uid}` : 'as this user';
    console.log(`sandbox: ${sandbox.kind}, ${as}, seccomp on; limits: pids ${limits.mechanisms.pids}, memory ${limits.mechanisms.memory}, file size ${limits.mechanisms.fileSize}; ${STARTS} starts each, interleaved, medians`);
    console.log('\n(a) start-up per command: bare, the 0.1.0 profile, hardened (with and without the limits)');
    console.log("    per command: what every command pays (hardened: its invocation, its inputs opened, prlimit and the join into the gate's cgroup, the spawn, the cgroup emptied after it)");
    await startUp(sandbox, bwrap, '`true`', 'true', work);
    const [bare = 0, , hardened = 0, unlimited = 0, fixedJoin = 0, alone = 0] = await startUp(sandbox, bwrap, '`node -e 0`', 'node -e 0', work);
    await startUp(sandbox, bwrap, '`node test.js` (the evolution bench)', 'node test.js', work);
    const once = await perGate(sandbox, await benchRun(sandbox, work), work);
    console.log(`    per gate, once, not in the figures above: setup ${ms(once.setup)} before its first command (the sandbox prepared for the run, input files written, ${limits.cgroup !== undefined ? 'the cgroup made' : 'no cgroup here'}); ${ms(once.removal)} to remove the cgroup after its result, off its path`);
    console.log(`    goal: \`node -e 0\` hardened at most 1.30× bare, per command — measured ${ratio(hardened, bare)} (${ratio(unlimited, bare)} without the limits; ${ratio(fixedJoin, bare)} with the join of kernels before 5.16${sandbox.user !== undefined ? `; bubblewrap alone ${ratio(alone, bare)}` : ''})`);

    console.log('\n(b) a whole gate call (`node test.js`), sandboxed against off; per gate and per command together');
    const steps = [{ name: 'test' as const, command: 'node test.js' }];
    const gateRun = await benchRun(sandbox, work);
    const gateLimits = { ...DEFAULT_GATE_LIMITS };
    const [off, boxed, boxedLimited] = await sideBySide(STARTS, [
      () => runGate(steps, { cwd: gateRun.cwd, sandbox: NO_SANDBOX, timeoutMs: 60_000 }),
      () => runGate(steps, { cwd: gateRun.cwd, sandbox, timeoutMs: 60_000, hidden: [workspace] }),
      () => runGate(steps, { cwd: gateRun.cwd, sandbox, timeoutMs: 60_000, hidden: [workspace], limits: gateLimits }),
    ]);
    await settleGateCgroups();
    console.log(`    off ${ms(off ?? 0)}   bubblewrap ${ms(boxed ?? 0)} (${ratio(boxed ?? 0, off ?? 0)})   bubblewrap with the limits ${ms(boxedLimited ?? 0)} (${ratio(boxedLimited ?? 0, off ?? 0)})`);

    console.log(`\n(c) scratch clone creation, ${git(workspace, 'rev-list', '--count', 'HEAD').trim()} commits (median of ${CLONES})`);
    const target = path.join(work, 'clone');
    const clone = (...flags: string[]) => (): void => {
      fs.rmSync(target, { recursive: true, force: true });
      git(work, 'clone', '-q', '--no-checkout', ...flags, workspace, target);
    };
    const [copied, linked] = await sideBySide(CLONES, [clone('--no-hardlinks'), clone()]);
    console.log(`    --no-hardlinks (Candor's): ${ms(copied ?? 0)}`);
    console.log(`    hard-linked:               ${ms(linked ?? 0)}`);
    console.log(`    ratio copied / linked:     ${((copied ?? 0) / (linked ?? 1)).toFixed(2)}×`);
    await diskAccounting(work);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/**
 * (d): what one poll of the disk limit costs on a clone of Candor's size.
 * The folders are measured as the watch measures them before a command and
 * whenever free space says they could be over (at least every 5 s); every
 * other poll only reads `statfs`.
 */
async function diskAccounting(work: string): Promise<void> {
  const checkout = path.resolve(__dirname, '..');
  const clone = path.join(work, 'candor-copy');
  execFileSync('cp', ['-a', '--reflink=auto', checkout, clone]);
  // A command's process holding files open, as a test runner does.
  const holder = spawn(process.execPath, ['-e', 'setInterval(() => undefined, 1 << 30)'], { cwd: clone, stdio: 'ignore' });
  try {
    const devices = new Set([fs.statSync(clone).dev]);
    const entries = Number(execFileSync('sh', ['-c', 'find . | wc -l'], { cwd: clone, encoding: 'utf8' }).trim());
    const bytes = (await measureFolders([clone]))?.bytes ?? 0;
    const cpu: number[][] = [[], [], [], []];
    const timed = (n: number, action: () => unknown) => async (): Promise<void> => {
      const before = process.cpuUsage();
      await action();
      const used = process.cpuUsage(before);
      cpu[n]?.push((used.user + used.system) / 1000);
    };
    const [tick = 0, oldWalk = 0, du = 0, tree = 0] = await sideBySide(POLLS, [
      timed(0, () => fs.statfsSync(clone)),
      timed(1, () => walkBefore(clone)),
      timed(2, async () => {
        fs.statfsSync(clone);
        await measureFolders([clone]);
        heldOpenBytes([holder.pid ?? 0], devices);
      }),
      timed(3, () => processTree(holder.pid ?? 0)),
    ]);
    const [tickCpu = 0, oldCpu = 0, duCpu = 0, treeCpu = 0] = cpu.map(median);
    console.log(`\n(d) the disk limit per poll, a copy of this checkout (${entries.toLocaleString('en-US')} entries, ${Math.round(bytes / 2 ** 20)} MiB), median of ${POLLS}; wall (CPU of Candor's own thread)`);
    console.log(`    every poll, statfs:                          ${ms(tick).padStart(8)} (${ms(tickCpu)})`);
    console.log(`    a full measure, before: the walk in Node      ${ms(oldWalk).padStart(8)} (${ms(oldCpu)})`);
    console.log(`    a full measure, now: du + files held open     ${ms(du).padStart(8)} (${ms(duCpu)})   ${ratio(du, oldWalk)} the walk's time, ${ratio(duCpu, oldCpu)} its CPU on Candor's thread`);
    console.log(`    the process tree, where no cgroup lists them   ${ms(tree).padStart(8)} (${ms(treeCpu)})`);
    console.log('    a full measure runs before each command, when free space says the folders could be over the limit, and at least every 5 s');
  } finally {
    holder.kill('SIGKILL');
  }
}

/** The disk watch's walk before du (its code, as it was): a walk by whole paths, in slices, skipping what it cannot reach. */
async function walkBefore(root: string): Promise<{ bytes: number; entries: number }> {
  const seen = new Set<string>();
  let bytes = 0;
  let entries = 0;
  const count = (stats: fs.Stats): void => {
    entries++;
    if (stats.nlink > 1 && !stats.isDirectory()) {
      const key = `${stats.dev}:${stats.ino}`;
      if (seen.has(key)) return;
      seen.add(key);
    }
    bytes += stats.blocks * 512;
  };
  count(fs.statSync(root));
  const folders = [root];
  let slice = 0;
  while (folders.length > 0) {
    const folder = folders.pop() ?? root;
    let names: string[];
    try {
      names = fs.readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      const full = `${folder}${path.sep}${name}`;
      let stats: fs.Stats;
      try {
        stats = fs.lstatSync(full);
      } catch {
        continue;
      }
      count(stats);
      if (stats.isDirectory()) folders.push(full);
      if (++slice >= 2000) {
        slice = 0;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
  }
  return { bytes, entries };
}

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull } });
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
