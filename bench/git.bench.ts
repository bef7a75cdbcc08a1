/**
 * The read-only guard's status against git run directly, side by side.
 *
 *   npx tsx bench/git.bench.ts
 *
 * A repository with 20,000 tracked files and 2,000 changes (1,000 modified,
 * 1,000 untracked) is generated once (files written by Node, the commit by
 * `git fast-import`) and cached under the OS temp folder.
 * Both sides run the same git binary, arguments and environment (the
 * guard's: no secrets, fsmonitor, signatures and pager off, the ceiling
 * above the repository), so the ratio is the guard's own overhead
 * (simple-git, the allow-list, parsing). Target: < 1.5x.
 */
import { execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { ReadOnlyGit } from '../src/core/git/guard';
import { CALL_CONFIG, GLOBAL_OPTIONS, gitEnvironment } from '../src/core/git/hostileConfig';
import { ceilingFor } from '../src/core/git/parents';
import { gitBinary } from '../src/core/process/gitBinary';

const TRACKED = 20_000;
const MODIFIED = 1_000;
const UNTRACKED = 1_000;
const RUNS = 15;
const WARMUP = 2;
const CACHE = path.join(os.tmpdir(), `candor-bench-git-${TRACKED}-${MODIFIED}-${UNTRACKED}-v2`);
const READY = path.join(CACHE, 'ready');
const REPO = path.join(CACHE, 'repo');

const STATUS_ARGS = [
  ...CALL_CONFIG.flatMap((pair) => ['-c', pair]),
  ...GLOBAL_OPTIONS,
  'status', '--porcelain=v2', '--branch', '-z', '--untracked-files=all', '--find-renames',
];

const gitEnv = (): NodeJS.ProcessEnv => ({
  ...process.env,
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: os.devNull,
});

function git(args: string[], input?: string): void {
  execFileSync('git', args, { cwd: REPO, env: gitEnv(), input, stdio: [input === undefined ? 'ignore' : 'pipe', 'ignore', 'inherit'], maxBuffer: 256 * 1024 * 1024 });
}

function relativeName(i: number): string {
  return `d${String(i % 200).padStart(3, '0')}/file-${i}.txt`;
}

function fileName(i: number): string {
  return path.join(REPO, relativeName(i));
}

function content(i: number): string {
  return `tracked file ${i}\n`;
}

/** One commit of every tracked file, as a single pack: no 20,000 loose objects. */
function fastImportStream(): string {
  const parts = ['commit refs/heads/main\n', 'committer Bench <bench@example.invalid> 1700000000 +0000\n', 'data 9\ngenerated\n'];
  for (let i = 0; i < TRACKED; i++) {
    const data = content(i);
    parts.push(`M 100644 inline ${relativeName(i)}\ndata ${Buffer.byteLength(data)}\n${data}\n`);
  }
  parts.push('\n');
  return parts.join('');
}

function generate(): void {
  if (fs.existsSync(READY)) return;
  const started = Date.now();
  fs.rmSync(CACHE, { recursive: true, force: true });
  fs.mkdirSync(REPO, { recursive: true });
  for (let d = 0; d < 200; d++) fs.mkdirSync(path.join(REPO, `d${String(d).padStart(3, '0')}`));
  for (let i = 0; i < TRACKED; i++) fs.writeFileSync(fileName(i), content(i));
  git(['init', '-q', '-b', 'main']);
  git(['fast-import', '--quiet'], fastImportStream());
  git(['read-tree', 'main']);
  for (let i = 0; i < MODIFIED; i++) fs.appendFileSync(fileName(i * 7), 'modified\n');
  fs.mkdirSync(path.join(REPO, 'untracked'));
  for (let i = 0; i < UNTRACKED; i++) fs.writeFileSync(path.join(REPO, 'untracked', `new-${i}.txt`), `new ${i}\n`);
  // The guard never writes the index, so give both sides a fresh one: wait out
  // the racy-git window, then refresh once (this is the bench's own repository).
  execFileSync('sleep', ['1.1']);
  git(['update-index', '-q', '--refresh']);
  fs.writeFileSync(READY, new Date().toISOString());
  console.log(`generated ${REPO} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}

function direct(binary: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, STATUS_ARGS, { cwd: REPO, env: gitEnvironment({ ceiling: ceilingFor(REPO, 'never') }) });
    let bytes = 0;
    child.stdout.on('data', (chunk: Buffer) => (bytes += chunk.length));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(bytes) : reject(new Error(`git status exited ${code}`))));
  });
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? 0) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

export interface GitBenchResult {
  readonly guardMedianMs: number;
  readonly directMedianMs: number;
  readonly ratio: number;
}

export async function run(): Promise<GitBenchResult> {
  generate();
  const binary = gitBinary([REPO]);
  if (binary === undefined) throw new Error('no git on PATH');
  const guard = await ReadOnlyGit.open(REPO, { gitBinary: binary });
  const check = await guard.status();
  const changes = check.unstaged.length + check.untracked.length;
  if (changes !== MODIFIED + UNTRACKED) throw new Error(`expected ${MODIFIED + UNTRACKED} changes, status reports ${changes}`);

  const guardMs: number[] = [];
  const directMs: number[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    // Alternate which side goes first so neither always meets a warm cache.
    const viaGuard = (): Promise<unknown> => guard.status();
    const viaDirect = (): Promise<unknown> => direct(binary);
    const order = i % 2 === 0 ? [viaGuard, viaDirect] : [viaDirect, viaGuard];
    for (const side of order) {
      const start = performance.now();
      await side();
      const elapsed = performance.now() - start;
      if (i >= WARMUP) (side === viaDirect ? directMs : guardMs).push(elapsed);
    }
  }
  const result = { guardMedianMs: median(guardMs), directMedianMs: median(directMs), ratio: median(guardMs) / median(directMs) };
  console.log(`git status: ${TRACKED.toLocaleString('en-US')} tracked files, ${changes.toLocaleString('en-US')} changes, ${RUNS} alternating runs`);
  console.log(`  direct  ${binary} ${STATUS_ARGS.join(' ')}  median ${result.directMedianMs.toFixed(1)} ms`);
  console.log(`  guard   ReadOnlyGit.status() (simple-git + allow-list + parse)  median ${result.guardMedianMs.toFixed(1)} ms`);
  console.log(`  ratio   ${result.ratio.toFixed(2)}x (target < 1.5x) ${result.ratio < 1.5 ? 'ok' : 'OVER TARGET'}`);
  return result;
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
}
