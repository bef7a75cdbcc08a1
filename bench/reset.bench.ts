/**
 * The scratch clone's reset, and the model's run_tests under the limits
 * (issues 30 and 31). Not a test: it prints times and ratios measured side
 * by side in one run, the samples of each way taken in turn.
 *
 * (a) The reset between runs, on a clone of Candor's own repository (this
 *     checkout's HEAD) with a dependency folder of Candor's size kept by a
 *     matching setup stamp (30,000 entries standing in for node_modules),
 *     after what a gate typically leaves: an ignored build folder and a
 *     coverage folder (500 files), 50 untracked files, 20 changed tracked
 *     files. Before: the 0.1.0 reset, kept below (checkout, reset,
 *     `git clean -ffdx`, a walk for FIFOs), its git calls through today's
 *     scratchGit. After: today's resetTo (every nested `.git` removed with
 *     find, the commit's tree listed, everything else removed with rm, then
 *     checkout and reset). Then once each with 25 folders of 200 characters
 *     left in the clone: the old reset fails there.
 * (b) run_tests, `node -e 0` in the sandbox on the same clone: the call it
 *     made before (runGate with no limits and no environment), the same
 *     call with the limits, and the run's one runner (GateRunner.runTests:
 *     the limits, the environment, the removal of nested `.git` after it).
 *
 * Run: `npm run bench -- reset`.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { prepareScratch, resetTo, setupPlan, setupStampFile, writeSetupStamp, DEPENDENCY_DIR } from '../src/core/evolution/scratch';
import { discardStaging } from '../src/core/evolution/measure';
import { scratchGit, type Scratch } from '../src/core/evolution/scratchGit';
import { readBounded } from '../src/core/boundedRead';
import { runGate } from '../src/core/evolution/testGate';
import { GateRunner } from '../src/core/evolution/gateRunner';
import { detectSandbox, isSandboxUnavailable } from '../src/core/sandbox/sandbox';
import { DEFAULT_GATE_LIMITS } from '../src/core/sandbox/limits';
import { settleGateCgroups } from '../src/core/sandbox/gateCgroups';

const RESETS = 9;
const RUNS = 9;
const DEPENDENCY_ENTRIES = 30_000;

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

const GIT_ENV: NodeJS.ProcessEnv = { ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_'))), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: os.devNull, LC_ALL: 'C' };

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'safe.directory=*', ...args], { cwd, env: GIT_ENV, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
}

// ---- The 0.1.0 reset, as it was (scratch.ts before issue 30), for the "before" column only. ----

async function oldResetTo(scratch: Scratch, commit: string, setupCommand: string): Promise<void> {
  const dir = scratch.dir;
  const gitDir = path.join(dir, '.git');
  for (const stale of ['index.lock', 'HEAD.lock', 'sequencer', 'REVERT_HEAD', 'CHERRY_PICK_HEAD', 'MERGE_HEAD']) {
    await fs.promises.rm(path.join(gitDir, stale), { recursive: true, force: true });
  }
  await discardStaging(scratch);
  await scratchGit(scratch, ['checkout', '--quiet', '--force', '--detach', commit]);
  await scratchGit(scratch, ['reset', '--quiet', '--hard', commit]);
  await scratchGit(scratch, ['clean', '-ffdxq', '-e', `/${DEPENDENCY_DIR}`]);
  await oldRemoveSpecialFiles(dir);
  if (!(await oldDependenciesReusable(scratch, setupCommand))) {
    await fs.promises.rm(setupStampFile(scratch), { force: true });
    await scratchGit(scratch, ['clean', '-ffdxq']);
  }
}

async function oldRemoveSpecialFiles(dir: string): Promise<void> {
  const pending = [dir];
  while (pending.length > 0) {
    const current = pending.pop() as string;
    for (const entry of await fs.promises.readdir(current, { withFileTypes: true })) {
      const full = path.join(current, entry.name);
      if (current === dir && (entry.name === '.git' || (entry.name === DEPENDENCY_DIR && entry.isDirectory()))) continue;
      if (entry.isDirectory()) pending.push(full);
      else if (!entry.isFile() && !entry.isSymbolicLink()) await fs.promises.rm(full, { force: true });
    }
  }
}

async function oldDependenciesReusable(scratch: Scratch, setupCommand: string): Promise<boolean> {
  const plan = await setupPlan(scratch.dir, setupCommand);
  if (plan?.lockFile === undefined) return false;
  if ((await fs.promises.lstat(path.join(scratch.dir, DEPENDENCY_DIR)).catch(() => undefined))?.isDirectory() !== true) return false;
  const stamp = JSON.parse((await readBounded(setupStampFile(scratch), 64 * 1024))?.toString('utf8') ?? 'null') as { stamp?: string; reusable?: boolean } | null;
  return stamp?.stamp === plan.stamp && stamp.reusable === true;
}

// ---- The clone and what a gate leaves in it. ----

/** A dependency folder of Candor's size: DEPENDENCY_ENTRIES entries in packages of ten files. */
function fillDependencies(dir: string): void {
  const deps = path.join(dir, DEPENDENCY_DIR);
  for (let p = 0; p * 11 < DEPENDENCY_ENTRIES; p++) {
    const pkg = path.join(deps, `pkg${p}`);
    fs.mkdirSync(pkg, { recursive: true });
    for (let f = 0; f < 10; f++) fs.writeFileSync(path.join(pkg, `f${f}.js`), `module.exports = ${f};\n`);
  }
}

/** What a gate typically leaves: build and coverage output, untracked files, changed tracked files. */
function leaveDebris(dir: string, tracked: readonly string[]): void {
  for (const folder of ['dist', 'coverage']) {
    for (let i = 0; i < 250; i++) {
      const file = path.join(dir, folder, `d${i % 10}`, `f${i}.js`);
      fs.mkdirSync(path.dirname(file), { recursive: true });
      fs.writeFileSync(file, `// ${i}\n`);
    }
  }
  for (let i = 0; i < 50; i++) fs.writeFileSync(path.join(dir, 'src', `left-by-test-${i}.tmp`), 'x\n');
  for (const file of tracked.slice(0, 20)) fs.appendFileSync(path.join(dir, file), '\n// changed by the gate\n');
}

function leaveDeepTree(dir: string): void {
  execFileSync('sh', ['-c', "d=$(printf 'd%.0s' $(seq 200)) && mkdir .t && echo leaf > .t/leaf && for i in $(seq 25); do mkdir .w && mv .t \".w/$d\" && mv .w .t || exit 1; done && mv .t deep"], { cwd: dir });
}

export async function run(): Promise<void> {
  const repository = git(__dirname, 'rev-parse', '--show-toplevel').trim();
  const head = git(repository, 'rev-parse', 'HEAD').trim();
  const work = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-reset-')));
  try {
    const { scratch } = await prepareScratch({ dataDir: work, repositoryRoot: repository, head, setupCommand: '' });
    const tracked = git(scratch.dir, 'ls-files', '--', 'src/*.ts').split('\n').filter((f) => f.endsWith('.ts'));
    fillDependencies(scratch.dir);
    const plan = await setupPlan(scratch.dir, '');
    if (plan?.lockFile === undefined) throw new Error('the repository has no lock file: the dependency folder would not be kept');
    await writeSetupStamp(scratch, plan);
    console.log(`(a) the reset of a clone of this repository (${git(scratch.dir, 'ls-files').split('\n').length - 1} tracked files, ${DEPENDENCY_ENTRIES.toLocaleString('en-US')}-entry dependency folder kept), after a gate's leftovers; median of ${RESETS}, in turn`);
    const ways: Array<[string, () => Promise<void>]> = [
      ['before (0.1.0: git clean)', () => oldResetTo(scratch, head, '')],
      ['after (nested .git removed, tree listed, rm)', () => resetTo(scratch, head, '')],
    ];
    const samples = ways.map(() => [] as number[]);
    for (let i = 0; i < RESETS; i++) {
      for (const [n, [, reset]] of ways.entries()) {
        leaveDebris(scratch.dir, tracked);
        const started = performance.now();
        await reset();
        samples[n]?.push(performance.now() - started);
      }
    }
    if (git(scratch.dir, 'status', '--porcelain', '--ignored').trim() !== `!! ${DEPENDENCY_DIR}/` || !fs.existsSync(path.join(scratch.dir, DEPENDENCY_DIR, 'pkg0'))) throw new Error('a reset left the clone unclean or lost the dependency folder');
    const [before = 0, after = 0] = samples.map(median);
    console.log(`    ${ways[0]?.[0]}: ${ms(before)}`);
    console.log(`    ${ways[1]?.[0]}: ${ms(after)}`);
    console.log(`    ratio after / before: ${(after / (before || 1)).toFixed(2)}×`);
    for (const [label, reset] of ways) {
      leaveDeepTree(scratch.dir);
      const started = performance.now();
      const outcome = await reset().then(() => 'done', (err: unknown) => `fails: ${String((err as Error).message).split('\n')[0]?.slice(0, 90)}`);
      console.log(`    with a tree of 25 folders of 200 characters, ${label}: ${outcome} (${ms(performance.now() - started)})`);
    }
    await resetTo(scratch, head, '');
    await runTestsCost(scratch);
  } finally {
    execFileSync('rm', ['-rf', '--one-file-system', work]);
  }
}

async function runTestsCost(scratch: Scratch): Promise<void> {
  const sandbox = await detectSandbox('required');
  if (isSandboxUnavailable(sandbox)) {
    console.log(`\n(b) run_tests under the limits: not measured here (${sandbox.message})`);
    return;
  }
  console.log(`\n(b) run_tests (\`node -e 0\`) in the sandbox (${sandbox.kind}) on the same clone; median of ${RUNS}, in turn`);
  const runner = new GateRunner({ scratch, base: 'HEAD', sandbox, hidden: [], testCommand: 'node -e 0', timeoutMs: 60_000, limits: DEFAULT_GATE_LIMITS, environment: [], print: () => undefined, onCommand: () => undefined });
  const signal = new AbortController().signal;
  const bare = { cwd: scratch.dir, sandbox, network: false, depsWritable: false, timeoutMs: 60_000 };
  const ways: Array<[string, () => Promise<unknown>]> = [
    ['before (runGate: no limits, no environment)', () => runGate(runner.testSteps(), bare)],
    ['the limits alone (runGate with them)', () => runGate(runner.testSteps(), { ...bare, limits: DEFAULT_GATE_LIMITS, environment: [] })],
    ['after (the one runner: limits, environment, nested .git removed)', () => runner.runTests(signal)],
  ];
  const samples = ways.map(() => [] as number[]);
  for (let i = 0; i < RUNS; i++) {
    for (const [n, [, call]] of ways.entries()) {
      const started = performance.now();
      await call();
      samples[n]?.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  await settleGateCgroups();
  const [before = 0, limited = 0, after = 0] = samples.map(median);
  console.log(`    ${ways[0]?.[0]}: ${ms(before)}`);
  console.log(`    ${ways[1]?.[0]}: ${ms(limited)} (${(limited / (before || 1)).toFixed(2)}×)`);
  console.log(`    ${ways[2]?.[0]}: ${ms(after)} (${(after / (before || 1)).toFixed(2)}×)`);
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
