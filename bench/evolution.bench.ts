/**
 * Benchmarks of evolution runs (issue 5). Not a test: it prints times and
 * ratios measured side by side in one run, on a generated repository of
 * 10,000 commits and 5,000 files (made with `git fast-import`, cached under
 * the OS temp folder):
 *
 * (a) creating the scratch clone as Candor does (`--no-hardlinks`: objects
 *     copied) against a `--no-local` clone (the pack protocol, as across
 *     filesystems); bench/sandbox.bench.ts sets it against a hard-linked one;
 * (b) refreshing the clone by fetch (and the whole per-run preparation)
 *     against cloning it again;
 * (c) a whole run's own overhead (triage, clone refresh, change, measure,
 *     ship, record) against the bare test command;
 * (d) the rollback, with a Candor commit that breaks the tests 200 commits
 *     below HEAD: the walk to the newest passing commit and the collection
 *     of the candidates against the bare test command (target: under 10%),
 *     then the revert and its re-gate, each timed on its own.
 *
 * Run: `npx tsx bench/evolution.bench.ts`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runEvolution } from '../src/core/evolution/pipeline';
import { prepareScratch } from '../src/core/evolution/scratch';
import { readHistory, revertUntilGreen } from '../src/core/evolution/rollback';
import { GateRunner } from '../src/core/evolution/gateRunner';
import { detectSandbox, isSandboxUnavailable } from '../src/core/sandbox/sandbox';
import { repoPaths } from '../src/core/evolution/paths';
import { gateKey, markGated } from '../src/core/evolution/record';
import { startOfflineServer } from '../src/core/offline/server';
import { parseScenario } from '../src/core/offline/scenario';
import { createClient, openAiChatModel } from '../src/core/provider/openaiModel';
import { saveRant } from '../src/core/rants';

const COMMITS = 10_000;
const FILES = 5_000;
const CACHE = path.join(os.tmpdir(), `candor-bench-evolution-${COMMITS}x${FILES}-v1`);
const REPEAT = 3;

const GIT_ENV: NodeJS.ProcessEnv = {
  ...Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('GIT_'))),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: os.devNull,
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid',
  LC_ALL: 'C',
};

function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', args, { cwd, env: GIT_ENV, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** The fast-import stream: one commit adding every file, then one small edit per commit. */
function fastImportStream(): string {
  const parts: string[] = [];
  const blob = (text: string): string => `data ${Buffer.byteLength(text)}\n${text}\n`;
  const file = (i: number, version: number): string => `// file ${i}, version ${version}\nexport const value${i} = ${version};\n${'// padding line\n'.repeat(4)}`;
  let time = 1_700_000_000;
  for (let c = 0; c < COMMITS; c++) {
    parts.push(`commit refs/heads/main\nmark :${c + 1}\ncommitter Bench <bench@example.invalid> ${time++} +0000\n${blob(`commit ${c}`)}`);
    if (c > 0) parts.push(`from :${c}\n`);
    if (c === 0) {
      for (let i = 0; i < FILES - 1; i++) parts.push(`M 644 inline src/dir${i % 50}/file${i}.js\n${blob(file(i, 0))}`);
      parts.push(`M 644 inline test.js\n${blob("require('assert').ok(true);\nconsole.log('tests ok');\n")}`);
    } else {
      const i = (c * 7919) % (FILES - 1);
      parts.push(`M 644 inline src/dir${i % 50}/file${i}.js\n${blob(file(i, c))}`);
    }
    parts.push('\n');
  }
  return parts.join('');
}

/** The cached repository, reset to the commit it was generated with (bench/sandbox.bench.ts uses it too). */
export function generatedRepo(): string {
  const repo = path.join(CACHE, 'workspace');
  const marker = path.join(CACHE, 'generated-head');
  if (!fs.existsSync(marker)) {
    fs.rmSync(CACHE, { recursive: true, force: true });
    fs.mkdirSync(repo, { recursive: true });
    const started = performance.now();
    git(repo, 'init', '-q', '-b', 'main');
    const result = spawnSync('git', ['fast-import', '--quiet'], { cwd: repo, env: GIT_ENV, input: fastImportStream(), maxBuffer: 64 * 1024 * 1024 });
    if (result.status !== 0) throw new Error(`fast-import failed: ${result.stderr.toString()}`);
    git(repo, 'reset', '-q', '--hard', 'main');
    fs.writeFileSync(marker, git(repo, 'rev-parse', 'HEAD').trim());
    console.log(`generated ${COMMITS.toLocaleString('en-US')} commits × ${FILES.toLocaleString('en-US')} files in ${ms(performance.now() - started)} (cached in ${CACHE})`);
  }
  const head = fs.readFileSync(marker, 'utf8').trim();
  git(repo, 'checkout', '-q', '-f', 'main');
  git(repo, 'reset', '-q', '--hard', head);
  git(repo, 'clean', '-qfdx');
  return repo;
}

async function time(action: () => unknown): Promise<number> {
  const started = performance.now();
  await action();
  return performance.now() - started;
}

async function median(times: number, setup: () => void, action: () => unknown): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    setup();
    samples.push(await time(action));
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)] ?? 0;
}

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(0)} ms`;
}

function ratio(a: number, b: number): string {
  return `${(a / b).toFixed(2)}×`;
}

export async function run(): Promise<void> {
  const workspace = generatedRepo();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-evo-'));
  try {
    console.log(`repository: ${git(workspace, 'rev-list', '--count', 'HEAD').trim()} commits, ${git(workspace, 'ls-files').split('\n').length - 1} files`);

    // (a) the scratch clone (--no-hardlinks) vs --no-local clone (pack protocol).
    const target = path.join(work, 'clone');
    const reset = (): void => fs.rmSync(target, { recursive: true, force: true });
    const local = await median(REPEAT, reset, () => git(work, 'clone', '-q', '--no-hardlinks', '--no-checkout', workspace, target));
    const noLocal = await median(REPEAT, reset, () => git(work, 'clone', '-q', '--no-local', '--no-checkout', workspace, target));
    reset();
    console.log(`\n(a) scratch clone creation (median of ${REPEAT})`);
    console.log(`    --no-hardlinks (Candor's):  ${ms(local)}`);
    console.log(`    --no-local clone:           ${ms(noLocal)}`);
    console.log(`    ratio --no-local / Candor:  ${ratio(noLocal, local)}`);

    // (b) refresh by fetch vs re-clone, through the real scratch code.
    const dataDir = path.join(work, 'data');
    const scratchDir = repoPaths(dataDir, workspace).scratch;
    const prepare = (head: string): Promise<unknown> => prepareScratch({ dataDir, repositoryRoot: workspace, head, setupCommand: '' });
    const base = git(workspace, 'rev-parse', 'HEAD').trim();
    await prepare(base);
    let n = 0;
    const newCommit = (): void => {
      fs.appendFileSync(path.join(workspace, 'src/dir0/file0.js'), `// bench edit ${n++}\n`);
      git(workspace, 'commit', '-qam', `bench edit ${n}`);
    };
    const fetchOnly = await median(REPEAT, newCommit, () => git(scratchDir, 'fetch', '-q', '--no-tags', workspace, '+HEAD:refs/candor/workspace-head'));
    const refresh = await median(REPEAT, newCommit, () => prepare(git(workspace, 'rev-parse', 'HEAD').trim()));
    const reclone = await median(REPEAT, () => fs.rmSync(scratchDir, { recursive: true, force: true }), () => prepare(git(workspace, 'rev-parse', 'HEAD').trim()));
    console.log(`\n(b) refreshing the scratch clone after a new commit (median of ${REPEAT})`);
    console.log(`    fetch alone:                         ${ms(fetchOnly)}`);
    console.log(`    refresh (fetch, checkout, clean):    ${ms(refresh)}`);
    console.log(`    re-clone (clone, checkout, clean):   ${ms(reclone)}`);
    console.log(`    ratio re-clone / refresh:            ${ratio(reclone, refresh)}`);
    git(workspace, 'reset', '-q', '--hard', base);

    // (c) a whole run against the bare test command.
    const testCommand = 'node test.js';
    const bare = await median(REPEAT, () => undefined, () => execFileSync('sh', ['-c', testCommand], { cwd: workspace, stdio: 'ignore' }));
    const scenario = { current: parseScenario({ rules: [{ respond: { text: '' } }] }) };
    const server = await startOfflineServer({ scenario: () => scenario.current, countTokens: (t) => Math.ceil(t.length / 4) });
    try {
      // One data folder for every run, as in use: run 0 makes the clone, the others refresh it.
      const runData = path.join(work, 'runs');
      // HEAD gated before, so each run gates its change once, like the bare command.
      markGated(repoPaths(runData, workspace).gated, base, gateKey({ testCommand }));
      const runs: Array<{ total: number; gate: number; outcome: string }> = [];
      for (let i = 0; i <= REPEAT; i++) {
        const rant = saveRant(runData, { text: `The value of file ${i} is wrong`, project: path.basename(workspace), session: null });
        scenario.current = parseScenario({
          rules: [
            { match: { system: '^You triage' }, respond: { text: JSON.stringify({ rants: [{ id: rant.id, class: 'agent-code', note: 'fix the value' }] }) } },
            { match: { lastRole: 'user' }, respond: { toolCalls: [{ name: 'write_file', arguments: { path: `src/dir${i}/file${i}.js`, content: `export const value${i} = ${i + 100};\n` } }] } },
            { respond: { text: 'Fixed the value.' }, chunkChars: 100 },
          ],
        });
        server.resetCounts();
        const started = performance.now();
        const record = await runEvolution(
          { repository: workspace, dataDir: runData, testCommand, maxChangedLines: 200, maxChangedFiles: 10, timeoutMs: 120_000, model: openAiChatModel(createClient(server.baseUrl, 'bench'), { provider: 'offline', model: 'bench' }, { idleTimeoutMs: 60_000, maxRetries: 0 }) },
          { print: () => undefined },
        );
        runs.push({ total: performance.now() - started, gate: record.gate?.ms ?? 0, outcome: record.outcome });
      }
      const cold = runs[0] ?? { total: 0, gate: 0, outcome: 'none' };
      const warm = runs.slice(1).sort((a, b) => a.total - b.total);
      const mid = warm[Math.floor(warm.length / 2)] ?? cold;
      console.log(`\n(c) a whole run against the bare test command (median of ${REPEAT})`);
      console.log(`    outcomes:                    ${runs.map((r) => r.outcome).join(', ')}`);
      console.log(`    bare \`${testCommand}\`:         ${ms(bare)}`);
      console.log(`    first run (makes the clone): ${ms(cold.total)} (of which the gate ${ms(cold.gate)})`);
      console.log(`    later run (refreshes it):    ${ms(mid.total)} (of which the gate ${ms(mid.gate)})`);
      console.log(`    run's own overhead:          ${ms(mid.total - mid.gate)}`);
      console.log(`    ratio run / bare command:    ${ratio(mid.total, bare)}`);
      console.log(`    ratio overhead / bare:       ${ratio(mid.total - mid.gate, bare)}`);
    } finally {
      await server.close();
    }

    await rollback(workspace, path.join(work, 'rollback'), testCommand, bare);
  } finally {
    git(workspace, 'reset', '-q', '--hard', fs.readFileSync(path.join(CACHE, 'generated-head'), 'utf8').trim());
    fs.rmSync(work, { recursive: true, force: true });
  }
}

/** (d): a Candor commit that breaks the tests, 200 commits below HEAD; the generated HEAD is the newest commit known to pass. */
async function rollback(workspace: string, dataDir: string, testCommand: string, bare: number): Promise<void> {
  const base = git(workspace, 'rev-parse', 'HEAD').trim();
  fs.writeFileSync(path.join(workspace, 'test.js'), "require('assert').fail('broken by a Candor change');\n");
  git(workspace, 'commit', '-qam', 'candor: stricter test\n\nCandor-Rant: 01benchbenchbenchbenchbench');
  const stream: string[] = [];
  for (let i = 0; i < 200; i++) {
    const data = `export const onTop${i} = ${i};\n`;
    stream.push(`commit refs/heads/main\ncommitter Bench <bench@example.invalid> ${1_800_000_000 + i} +0000\ndata 7\non top\n${i === 0 ? 'from refs/heads/main^0\n' : ''}M 644 inline src/dir${i % 50}/ontop${i}.js\ndata ${Buffer.byteLength(data)}\n${data}\n`);
  }
  const imported = spawnSync('git', ['fast-import', '--quiet', '--force'], { cwd: workspace, env: GIT_ENV, input: stream.join('') });
  if (imported.status !== 0) throw new Error(`fast-import failed: ${imported.stderr.toString()}`);
  git(workspace, 'reset', '-q', '--hard', 'main');
  const head = git(workspace, 'rev-parse', 'HEAD').trim();
  const prepared = await prepareScratch({ dataDir, repositoryRoot: workspace, head, setupCommand: '' });
  const passed = new Set([base]);

  const walks: number[] = [];
  let found = 0;
  for (let i = 0; i < REPEAT * 3; i++) {
    const started = performance.now();
    const history = await readHistory(prepared.scratch, head, passed);
    walks.push(performance.now() - started);
    found = history.candidates.length;
    if (history.base !== base) throw new Error('the walk did not find the passing commit');
  }
  walks.sort((a, b) => a - b);
  const walk = walks[Math.floor(walks.length / 2)] ?? 0;

  const sandbox = await detectSandbox('required');
  if (isSandboxUnavailable(sandbox)) throw new Error(sandbox.message);
  const gates = new GateRunner({ scratch: prepared.scratch, base: head, sandbox, hidden: [dataDir, workspace], testCommand, timeoutMs: 120_000, print: () => undefined, onCommand: () => undefined });
  let gating = 0;
  const started = performance.now();
  const history = await readHistory(prepared.scratch, head, passed);
  const result = await revertUntilGreen(prepared.scratch, history.candidates, {
    gate: async () => {
      const gateStarted = performance.now();
      const gate = await gates.gate();
      gating += performance.now() - gateStarted;
      return gate;
    },
    setupCommand: '',
  });
  const total = performance.now() - started;
  console.log(`\n(d) rollback: a Candor commit 200 commits below HEAD (walk: median of ${walks.length})`);
  console.log(`    walk to B and collect candidates: ${ms(walk)} (${found} candidate)`);
  console.log(`    bare \`${testCommand}\`:             ${ms(bare)}`);
  console.log(`    ratio walk / bare command:        ${((walk / bare) * 100).toFixed(1)}% (target: under 10%)`);
  console.log(`    revert (git revert in the clone): ${ms(total - gating)}`);
  console.log(`    its re-gate (sandboxed tests):    ${ms(gating)} → ${result.kind}`);
  git(workspace, 'reset', '-q', '--hard', base);
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
