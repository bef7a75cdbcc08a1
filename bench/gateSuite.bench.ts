/**
 * What the evolution gate costs on the work it really does: Candor's own
 * unit suite, bare and inside the gate (`runGate`: bubblewrap, the gate
 * user, the seccomp filter, the default limits with their cgroup, rlimits
 * and disk poll), interleaved, at least three pairs, and the ratio of the
 * medians. Not a test: it prints times, counts and ratios.
 *
 * Both sides run the same tests: one run inside the gate first finds the
 * test files that skip anything there (a nested sandbox, root, chown, the
 * llama server) or fail there, and every timed run, bare or gated, runs only
 * the other files; each run prints its counts, and a pair whose counts
 * differ, or that skipped or failed a test, stops the bench (no ratio over
 * unequal sets). Both sides get a fresh home and
 * temp folder (the gate always does, so tsx's cache starts cold there too)
 * and the same small environment.
 *
 * Where the time goes, when the ratio is over the goal: the suite once more
 * inside the gate without the limits (so no cgroup, prlimit or disk poll:
 * the sandbox, the uid switch and seccomp alone), and one gate call of
 * `true` on the same clone (the per-call cost: the throwaway pair, the walk
 * that gives the clone to the gate user, the cgroup made and removed).
 *
 * Run: `npm run bench -- gateSuite` (CANDOR_BENCH_PAIRS=N for more pairs).
 * As root, as CI runs; about 2 × pairs + 2 runs of the suite.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runGate } from '../src/core/evolution/testGate';
import { DEFAULT_GATE_LIMITS } from '../src/core/sandbox/limits';
import { detectSandbox, isSandboxUnavailable, type Sandbox } from '../src/core/sandbox/sandbox';
import type { SuiteSummary } from '../test/helpers/skipReporter';

const CHECKOUT = path.resolve(__dirname, '..');
const GOAL = 1.1;

interface Timed {
  readonly ms: number;
  readonly summary: SuiteSummary;
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

function counts(s: SuiteSummary): string {
  return `${s.passing} passing, ${s.pending} pending, ${s.failing} failing`;
}

/** This checkout's HEAD, cloned with its installed dependencies copied in: what the scratch clone holds after setup. */
function prepareClone(work: string): string {
  const clone = path.join(work, 'candor');
  execFileSync('git', ['clone', '-q', '--no-hardlinks', CHECKOUT, clone], { stdio: 'pipe' });
  execFileSync('cp', ['-a', path.join(CHECKOUT, 'node_modules'), path.join(clone, 'node_modules')]);
  return clone;
}

/** The mocha command line over `files` (every unit test file when none is given), writing its summary to `summaryFile`. */
function mochaCommand(files: readonly string[], summaryFile: string): string {
  const spec = files.length > 0 ? files.map((f) => `'${f}'`).join(' ') : "'test/unit/**/*.test.ts'";
  return `node node_modules/mocha/bin/mocha.js --require tsx/cjs --timeout 20000 --reporter ./test/helpers/skipReporter.ts --reporter-option summary=${summaryFile} ${spec}`;
}

function readSummary(file: string): SuiteSummary {
  const summary = JSON.parse(fs.readFileSync(file, 'utf8')) as SuiteSummary;
  fs.rmSync(file);
  return summary;
}

/** The suite as a developer runs it, as root, with a fresh home and temp folder and the gate's small environment. */
async function bare(clone: string, files: readonly string[], n: number): Promise<Timed> {
  const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bare-'));
  fs.mkdirSync(path.join(fresh, 'home'));
  fs.mkdirSync(path.join(fresh, 'tmp'));
  const summaryFile = `.bench-bare-${n}.json`;
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: path.join(fresh, 'home'), TMPDIR: path.join(fresh, 'tmp'), LANG: 'C.UTF-8', CI: '1' };
  const started = performance.now();
  await new Promise<void>((resolve, reject) => {
    const child = spawn('/bin/sh', ['-c', mochaCommand(files, summaryFile)], { cwd: clone, env, stdio: 'ignore' });
    child.on('error', reject);
    child.on('close', () => resolve());
  });
  const ms = performance.now() - started;
  fs.rmSync(fresh, { recursive: true, force: true });
  return { ms, summary: readSummary(path.join(clone, summaryFile)) };
}

/** The same command through runGate, as an evolution run gives it: the sandbox, the gate user, and (unless `limits` is false) the default limits. */
async function gated(sandbox: Sandbox, clone: string, files: readonly string[], n: number, limits = true): Promise<Timed> {
  const summaryFile = `.bench-gate-${n}.json`;
  const started = performance.now();
  const result = await runGate([{ name: 'test', command: mochaCommand(files, summaryFile) }], { sandbox, cwd: clone, timeoutMs: 3_600_000, ...(limits ? { limits: DEFAULT_GATE_LIMITS } : {}) });
  const ms = performance.now() - started;
  if (!fs.existsSync(path.join(clone, summaryFile))) throw new Error(`the suite inside the gate wrote no summary: ${result.tail.slice(-2000)}`);
  return { ms, summary: readSummary(path.join(clone, summaryFile)) };
}

/** Every unit test file of the clone, relative to it. */
function unitTestFiles(clone: string): string[] {
  return (fs.readdirSync(path.join(clone, 'test/unit'), { recursive: true }) as string[]).filter((f) => f.endsWith('.test.ts')).map((f) => path.join('test/unit', f)).sort();
}

function sameCounts(a: SuiteSummary, b: SuiteSummary): boolean {
  return a.passing === b.passing && a.pending === b.pending && a.failing === b.failing;
}

export async function run(): Promise<void> {
  if (process.getuid?.() !== 0) throw new Error('gateSuite measures the gate as evolution runs it as root (the gate user, the cgroup): run it as root, as CI does');
  const sandbox = await detectSandbox('required');
  if (isSandboxUnavailable(sandbox)) throw new Error(sandbox.message);
  const pairs = Math.max(3, Number(process.env.CANDOR_BENCH_PAIRS ?? 3));
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-gatesuite-'));
  try {
    const clone = prepareClone(work);
    const probe = await gated(sandbox, clone, [], 0);
    const left = [...probe.summary.filesWithSkips, ...probe.summary.filesWithFailures];
    const files = unitTestFiles(clone).filter((f) => !left.includes(f));
    console.log(`the whole suite inside the gate: ${counts(probe.summary)} in ${seconds(probe.ms)}`);
    console.log(`timed: the ${files.length} of ${unitTestFiles(clone).length} test files that skip and fail nothing there (left out, skipping: ${probe.summary.filesWithSkips.join(', ')}; failing: ${probe.summary.filesWithFailures.join(', ') || 'none'})`);
    const bareRuns: Timed[] = [];
    const gateRuns: Timed[] = [];
    for (let i = 1; i <= pairs; i++) {
      // Interleaved, the order swapped each pair, so that the machine's drift hits both sides alike.
      let plain: Timed;
      let boxed: Timed;
      if (i % 2 === 1) {
        plain = await bare(clone, files, i);
        boxed = await gated(sandbox, clone, files, i);
      } else {
        boxed = await gated(sandbox, clone, files, i);
        plain = await bare(clone, files, i);
      }
      console.log(`pair ${i}: bare ${seconds(plain.ms)} (${counts(plain.summary)}), gate ${seconds(boxed.ms)} (${counts(boxed.summary)})`);
      if (!sameCounts(plain.summary, boxed.summary) || plain.summary.pending + plain.summary.failing > 0) throw new Error(`pair ${i} ran unequal sets (or skipped or failed tests): no ratio over them`);
      bareRuns.push(plain);
      gateRuns.push(boxed);
    }
    const bareMedian = median(bareRuns.map((r) => r.ms));
    const gateMedian = median(gateRuns.map((r) => r.ms));
    const ratio = gateMedian / bareMedian;
    console.log(`\nmedian of ${pairs}: bare ${seconds(bareMedian)}, inside the gate ${seconds(gateMedian)}; ratio ${ratio.toFixed(3)}x (goal ≤ ${GOAL.toFixed(2)}x)`);
    const noLimits = await gated(sandbox, clone, files, pairs + 1, false);
    const perCall = performance.now();
    await runGate([{ name: 'test', command: 'true' }], { sandbox, cwd: clone, timeoutMs: 60_000, limits: DEFAULT_GATE_LIMITS });
    const callMs = performance.now() - perCall;
    console.log(`where it goes: inside the gate without the limits (no cgroup, prlimit or disk poll) ${seconds(noLimits.ms)} (${counts(noLimits.summary)}), ${(noLimits.ms / bareMedian).toFixed(3)}x bare; one gate call of \`true\` on this clone ${seconds(callMs)}`);
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
