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
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { WorkspaceView, type RefreshReport, type ViewOverlay } from '../src/core/commands/view/workspaceView';
import { ReadOnlyGit } from '../src/core/git/guard';
import { gitEnvironment } from '../src/core/git/hostileConfig';
import { ceilingFor } from '../src/core/git/parents';
import { gitBinary } from '../src/core/process/gitBinary';

const TRACKED = 20_000;
const FOLDERS = 200;
const CHANGED = 10;
const REFRESHES = 21;
const BUILDS = 5;
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
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
