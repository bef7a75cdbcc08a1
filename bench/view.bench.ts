/**
 * The workspace view (src/core/commands/view) against git itself, side by
 * side in one run, the samples of each pair taken in turn (A B A B …) and
 * compared by their medians.
 *
 *   npx tsx -e "require('./bench/view.bench.ts').run()"
 *
 * A repository of 20,000 tracked files (200 folders; the commit made by
 * `git fast-import`) is generated once and cached under the OS temp
 * folder, then 10 of its files are changed and 2 unsaved buffers laid over
 * the view.
 *
 * (a) A refresh of the view, against `git status --porcelain=v2
 *     --untracked-files=all` of the same repository (goal ≤ 1.5×): with
 *     nothing new since the last refresh; after one more file was saved
 *     (before each sample of both sides); and right after a command, whose
 *     check of the view for files it changed the refresh then waits for.
 * (b) The first build of the view, against `git clone --no-hardlinks` of
 *     the repository (which checks the files out too); and the first build
 *     with the view's own git repository (ensureGit).
 * (c) A command in the real sandbox over the view of a small repository
 *     (runInView: bubblewrap, as the gate user when run as root), against
 *     the same `/bin/sh -c` command spawned bare in the workspace, with the
 *     same environment; the refresh is not in it (goal ≤ 1.3× for
 *     `node test.js`). Between the two, the same bubblewrap invocation
 *     spawned alone, without and with the rlimits (prlimit), to tell
 *     bubblewrap's own start and the limits apart from what runInView does
 *     around them per command (the sandbox prepared, a throwaway home, the
 *     disk check after).
 *     `true` beside it shows the sandbox's fixed cost per command. Alone:
 *     `npx tsx bench/view.bench.ts sandbox`.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runInView } from '../src/core/commands/sandboxedCommand';
import { WorkspaceView, type RefreshReport, type ViewOverlay } from '../src/core/commands/view/workspaceView';
import { settleGateCgroups } from '../src/core/sandbox/gateCgroups';
import { prepareForGateUser } from '../src/core/sandbox/gateUser';
import { GateInputs, detectSandbox, prepareSandbox, type Invocation, type Sandbox } from '../src/core/sandbox/sandbox';
import { ReadOnlyGit } from '../src/core/git/guard';
import { gitEnvironment } from '../src/core/git/hostileConfig';
import { ceilingFor } from '../src/core/git/parents';
import { DEFAULT_GATE_LIMITS, prepareLimits } from '../src/core/sandbox/limits';
import { commandEnvironment } from '../src/core/process/environment';
import { gitBinary } from '../src/core/process/gitBinary';

const TRACKED = 20_000;
const FOLDERS = 200;
const CHANGED = 10;
const REFRESHES = 21;
const BUILDS = 5;
/** Rounds of the four ways of running a command, after WARMUP_ROUNDS. */
const COMMANDS = 40;
const WARMUP_ROUNDS = 3;
/** Untimed, before each command: the kernel finishes what the last one left (a cgroup removed in the background). */
const SETTLE_MS = 10;
const SANDBOX_GOAL = 1.3;
const CACHE = path.join(os.tmpdir(), `candor-bench-view-${TRACKED}-v1`);
const REPO = path.join(CACHE, 'repo');
const READY = path.join(CACHE, 'ready');

const BENCH_ENV: NodeJS.ProcessEnv = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, GIT_AUTHOR_NAME: 'Bench', GIT_AUTHOR_EMAIL: 'bench@example.invalid', GIT_COMMITTER_NAME: 'Bench', GIT_COMMITTER_EMAIL: 'bench@example.invalid' };

function git(cwd: string, args: string[], input?: string): string {
  return execFileSync('git', args, { cwd, env: BENCH_ENV, input, encoding: 'utf8', stdio: [input === undefined ? 'ignore' : 'pipe', 'pipe', 'inherit'], maxBuffer: 256 * 1024 * 1024 });
}

const relativeName = (i: number): string => `d${String(i % FOLDERS).padStart(3, '0')}/file-${i}.ts`;
const content = (i: number): string => `export const value${i} = ${i};\n${'// filler line of a source file\n'.repeat(i % 40)}`;

function generate(): void {
  if (fs.existsSync(READY)) return;
  const started = Date.now();
  fs.rmSync(CACHE, { recursive: true, force: true });
  for (let d = 0; d < FOLDERS; d++) fs.mkdirSync(path.join(REPO, `d${String(d).padStart(3, '0')}`), { recursive: true });
  const stream = ['commit refs/heads/main\n', 'committer Bench <bench@example.invalid> 1700000000 +0000\n', 'data 9\ngenerated\n'];
  for (let i = 0; i < TRACKED; i++) {
    const data = content(i);
    fs.writeFileSync(path.join(REPO, relativeName(i)), data);
    stream.push(`M 100644 inline ${relativeName(i)}\ndata ${Buffer.byteLength(data)}\n${data}\n`);
  }
  git(REPO, ['init', '-q', '-b', 'main']);
  git(REPO, ['fast-import', '--quiet'], `${stream.join('')}\n`);
  git(REPO, ['read-tree', 'main']);
  for (let i = 0; i < CHANGED; i++) fs.appendFileSync(path.join(REPO, relativeName(i * 997)), '// changed, not committed\n');
  // The guard never writes the index: give both sides a fresh one once the racy-git second has passed.
  execFileSync('sleep', ['1.1']);
  git(REPO, ['update-index', '-q', '--refresh']);
  fs.writeFileSync(READY, new Date().toISOString());
  console.log(`generated ${REPO} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function gitStatus(binary: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['status', '--porcelain=v2', '--untracked-files=all'], { cwd: REPO, env: gitEnvironment({ ceiling: ceilingFor(REPO, 'never') }), stdio: ['ignore', 'pipe', 'inherit'] });
    child.stdout.resume();
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git status exited ${code}`))));
  });
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Median of each action over `times` rounds, the actions taken in turn, the first going first in even rounds only. */
async function sideBySide(times: number, actions: ReadonlyArray<{ before?: () => void | Promise<void>; run: () => Promise<unknown> }>): Promise<number[]> {
  const samples = actions.map(() => [] as number[]);
  for (let round = 0; round < times + 1; round++) {
    const order = round % 2 === 0 ? actions.map((_, i) => i) : actions.map((_, i) => actions.length - 1 - i);
    for (const i of order) {
      const action = actions[i];
      if (action === undefined) continue;
      await action.before?.();
      const started = performance.now();
      await action.run();
      // The first round warms caches up.
      if (round > 0) samples[i]?.push(performance.now() - started);
    }
  }
  return samples.map(median);
}

const ms = (value: number): string => `${value.toFixed(1)} ms`;
const ratio = (value: number, base: number): string => `${(value / (base || 1)).toFixed(2)}×`;

export async function run(): Promise<void> {
  generate();
  const binary = gitBinary([REPO]);
  if (binary === undefined) throw new Error('no git on PATH');
  const guard = await ReadOnlyGit.open(REPO, { gitBinary: binary });
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-view-run-'));
  const buffers: ViewOverlay[] = [0, 1].map((n) => ({ path: relativeName(5000 + n), bytes: Buffer.from(`${content(5000 + n)}// unsaved ${n}\n`) }));
  const saved = path.join(REPO, relativeName(12_345));
  const original = fs.readFileSync(saved);
  try {
    const view = new WorkspaceView({ root: REPO, viewDir: path.join(work, 'views', 'repo'), git: guard });
    const first: RefreshReport = await view.refresh(buffers);
    console.log(`view: ${TRACKED.toLocaleString('en-US')} tracked files, ${CHANGED} changed, ${buffers.length} unsaved buffers; first build ${ms(first.ms)} (${first.copied} copied, ${first.overlaid} overlaid)`);

    console.log(`\n(a) refresh against git status --porcelain=v2 --untracked-files=all (${REFRESHES} interleaved samples, medians; goal ≤ 1.5×)`);
    const status = { run: () => gitStatus(binary) };
    let edits = 0;
    const edit = (): void => fs.writeFileSync(saved, `${original.toString()}// saved ${++edits}\n`);
    const [steady = 0, statusSteady = 0] = await sideBySide(REFRESHES, [{ run: () => view.refresh(buffers) }, status]);
    const check = await view.refresh(buffers);
    console.log(`    nothing new:       refresh ${ms(steady)}  git status ${ms(statusSteady)}  ratio ${ratio(steady, statusSteady)}  (checked ${check.checked}, hashed ${check.hashed}, copied ${check.copied})`);
    const [edited = 0, statusEdited = 0] = await sideBySide(REFRESHES, [{ before: edit, run: () => view.refresh(buffers) }, { before: edit, run: status.run }]);
    console.log(`    one more save:     refresh ${ms(edited)}  git status ${ms(statusEdited)}  ratio ${ratio(edited, statusEdited)}`);
    const [afterCommand = 0, statusAfter = 0] = await sideBySide(REFRESHES, [{ before: () => view.use(buffers, {}, async () => undefined), run: () => view.refresh(buffers) }, status]);
    console.log(`    after a command:   refresh ${ms(afterCommand)}  git status ${ms(statusAfter)}  ratio ${ratio(afterCommand, statusAfter)}  (includes the wait for the check of the view's ${TRACKED.toLocaleString('en-US')} files)`);
    fs.writeFileSync(saved, original);

    console.log(`\n(b) first build against git clone --no-hardlinks (${BUILDS} interleaved samples, medians)`);
    // Each sample writes into a folder of its own, all removed at the end: deleting 20,000 files
    // just before a sample would slow whichever side came next.
    let samples = 0;
    const build = (withGit: boolean) => ({
      run: async () => {
        const v = new WorkspaceView({ root: REPO, viewDir: path.join(work, `build-${++samples}`, 'repo'), git: guard });
        await v.refresh(buffers);
        if (withGit) await v.ensureGit();
      },
    });
    const cloneIt = { run: async () => void git(work, ['clone', '-q', '--no-hardlinks', REPO, path.join(work, `clone-${++samples}`)]) };
    const [built = 0, cloned = 0, builtWithGit = 0] = await sideBySide(BUILDS, [build(false), cloneIt, build(true)]);
    console.log(`    first build:           ${ms(built)}   git clone --no-hardlinks ${ms(cloned)}   ratio ${ratio(built, cloned)}`);
    console.log(`    first build + its git: ${ms(builtWithGit)}   ratio ${ratio(builtWithGit, cloned)} (ensureGit reads every file once and writes one pack)`);
  } finally {
    fs.writeFileSync(saved, original);
    fs.rmSync(work, { recursive: true, force: true });
  }
  await sandboxOverhead();
}

const TEST_JS = "const assert = require('node:assert');\nassert.strictEqual([1, 2, 3].map((n) => n * 2).join(','), '2,4,6');\n";

/** A small repository, committed: test.js, which asserts something trivial and exits 0, and a README. */
function smallWorkspace(dir: string): string {
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'test.js'), TEST_JS);
  fs.writeFileSync(path.join(dir, 'README.md'), '# bench\n');
  git(dir, ['init', '-q', '-b', 'main']);
  git(dir, ['add', '-A']);
  git(dir, ['commit', '-q', '-m', 'initial']);
  return dir;
}

/** One process to its end, its output read; rejects unless it exits 0. `fds`: what it reads at fds 3, 4, … */
function spawnToEnd(invocation: Invocation, cwd: string, env: NodeJS.ProcessEnv, fds: readonly number[] = []): Promise<void> {
  const command = [invocation.file, ...invocation.args].join(' ');
  return new Promise((resolve, reject) => {
    const child = spawn(invocation.file, [...invocation.args], { cwd, env, stdio: ['ignore', 'pipe', 'pipe', ...fds] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${output}`))));
  });
}

const settle = async (): Promise<void> => {
  await settleGateCgroups();
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
};

/**
 * The invocation runInView spawns, made once and spawned alone: the view at
 * the workspace's path, the data folder hidden, the same environment and
 * inputs, but one home and temp folder for all; with `limits`, the
 * default limits as rlimits (prlimit in front, no cgroup).
 */
async function bubblewrapAlone(sandbox: Sandbox, at: { workspace: string; view: string; data: string; work: string }): Promise<(command: string, limits: boolean) => Promise<void>> {
  const home = path.join(at.work, 'alone', 'home');
  const tmp = path.join(at.work, 'alone', 'tmp');
  for (const dir of [home, tmp]) fs.mkdirSync(dir, { recursive: true });
  const user = sandbox.user;
  if (user !== undefined) for (const dir of [home, tmp]) await prepareForGateUser(dir, user);
  const { env } = commandEnvironment({ home, tmp, user: user?.name ?? os.userInfo().username, network: false, extraNames: [], isVisible: (dir) => sandbox.isVisible(dir, [at.data]) });
  const prepared = prepareSandbox(sandbox, { cwd: at.workspace, cwdSource: at.view, home, tmp, hidden: [at.data], network: false, depsWritable: false });
  const inputs = new GateInputs(path.join(at.work, 'alone'));
  return async (command, limits) => {
    const wrapped = prepared.wrap(`cd -- '${at.workspace.replace(/'/g, "'\\''")}' || exit 1\n${command}`);
    const invocation = limits ? prepareLimits(wrapped, { limits: { ...DEFAULT_GATE_LIMITS, diskPaths: [] }, cgroups: false, ...(user !== undefined ? { invocationUid: user.uid } : {}) }).invocation : wrapped;
    const open = inputs.open(wrapped.inputs);
    try {
      await spawnToEnd(invocation, at.view, env, open.fds);
    } finally {
      open.close();
    }
  };
}

/** (c) The sandbox's cost per command over a built view, the refresh left out. */
export async function sandboxOverhead(): Promise<void> {
  console.log(`\n(c) a command in the sandbox over the view (runInView) against the same command bare in the workspace, refresh excluded`);
  const sandbox = await detectSandbox('required');
  if (sandbox.kind === 'unavailable') {
    console.log(`    skipped: no OS sandbox here: ${sandbox.message}`);
    return;
  }
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-view-sandbox-')));
  try {
    const workspace = smallWorkspace(path.join(work, 'workspace'));
    const data = path.join(work, 'data');
    const binary = gitBinary([workspace]);
    if (binary === undefined) throw new Error('no git on PATH');
    const user = sandbox.user;
    const view = new WorkspaceView({
      root: workspace,
      viewDir: path.join(data, 'views', 'workspace'),
      git: await ReadOnlyGit.open(workspace, { gitBinary: binary }),
      hidden: [data],
      ...(user !== undefined ? { owner: { uid: user.uid, gid: user.gid } } : {}),
    });
    const built = await view.refresh();
    const home = path.join(work, 'bare');
    fs.mkdirSync(path.join(home, 'tmp'), { recursive: true });
    // The bare side gets the variables the sandboxed command gets (no CA bundle, no NODE_OPTIONS): only the sandbox differs.
    const { env } = commandEnvironment({ home, tmp: path.join(home, 'tmp'), user: os.userInfo().username, network: false, extraNames: [], isVisible: () => true });
    const as = user !== undefined ? `as the gate user (uid ${user.uid})` : 'as this user';
    console.log(`    sandbox: ${sandbox.kind}, ${as}; the view built once in ${ms(built.ms)} (${built.copied} files); ${COMMANDS} interleaved rounds after ${WARMUP_ROUNDS}, medians; goal ≤ ${SANDBOX_GOAL.toFixed(1)}× for node test.js`);
    const signal = new AbortController().signal;
    const sandboxed = async (command: string): Promise<void> => {
      const mounts = view.mounts();
      const result = await runInView({
        sandbox,
        view: view.dir,
        workspaceRoot: workspace,
        cwd: workspace,
        command,
        readOnlyBinds: mounts.readOnly,
        tmpfs: mounts.tmpfs,
        hidden: [data],
        network: false,
        environment: [],
        withhold: [],
        timeoutMs: 30_000,
        signal,
        onOutput: () => undefined,
      });
      if (result.exitCode !== 0) throw new Error(`${command} exited ${result.exitCode} in the sandbox: ${result.tail}`);
    };
    const alone = await bubblewrapAlone(sandbox, { workspace, view: view.dir, data, work });
    const rows: Array<{ bare: number; bwrap: number; limited: number; boxed: number }> = [];
    for (const [label, command] of [['`true`', 'true'], ['`node test.js`', 'node test.js']] as const) {
      const actions = [
        { before: settle, run: () => spawnToEnd({ file: '/bin/sh', args: ['-c', command] }, workspace, env) },
        { before: settle, run: () => alone(command, false) },
        { before: settle, run: () => alone(command, true) },
        { before: settle, run: () => sandboxed(command) },
      ];
      await sideBySide(WARMUP_ROUNDS, actions);
      const [plain = 0, bwrap = 0, limited = 0, boxed = 0] = await sideBySide(COMMANDS, actions);
      rows.push({ bare: plain, bwrap, limited, boxed });
      console.log(`    ${label}`);
      console.log(`      bare ${ms(plain)}   bubblewrap alone ${ms(bwrap)} (${ratio(bwrap, plain)})   with the rlimits ${ms(limited)} (${ratio(limited, plain)})   runInView ${ms(boxed)} (${ratio(boxed, plain)})`);
    }
    const [fixed, node] = rows;
    if (fixed !== undefined && node !== undefined) {
      const measured = node.boxed / (node.bare || 1);
      console.log(`    where the fixed cost goes (\`true\`, +${ms(fixed.boxed - fixed.bare)} per command): +${ms(fixed.bwrap - fixed.bare)} bubblewrap's own start (namespaces, mounts, seccomp, setpriv to the gate user),`);
      console.log(`      +${ms(fixed.limited - fixed.bwrap)} the rlimits (prlimit), +${ms(fixed.boxed - fixed.limited)} runInView around them (per command: the sandbox prepared, a throwaway home and temp folder, the environment, the inputs written, the disk check and clean-up after)`);
      console.log(`    node test.js: +${ms(node.boxed - node.bare)} on ${ms(node.bare)} bare`);
      console.log(`    goal: node test.js in the sandbox at most ${SANDBOX_GOAL.toFixed(2)}× bare — measured ${measured.toFixed(2)}× ${measured <= SANDBOX_GOAL ? 'ok' : 'OVER GOAL'}`);
    }
  } finally {
    await settleGateCgroups();
    fs.rmSync(work, { recursive: true, force: true });
  }
}

if (require.main === module) {
  (process.argv[2] === 'sandbox' ? sandboxOverhead() : run()).catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
