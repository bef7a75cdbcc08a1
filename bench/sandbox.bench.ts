/**
 * Benchmarks of the OS sandbox around evolution's commands (issue 10). Not a
 * test: it prints times and ratios measured side by side in one run, the
 * plain and the sandboxed sample taken in turn so that machine noise hits
 * both alike.
 *
 * (a) start-up per command: `node -e 0`, and the evolution benchmark's test
 *     command, each in bubblewrap against the same command in a plain shell
 *     (both spawned the way the gate spawns them);
 * (b) the whole gate call (`runGate`: throwaway home, sandbox, clean-up)
 *     against the same call with the sandbox off;
 * (c) the scratch clone with objects copied (`--no-hardlinks`, what Candor
 *     does) against a hard-linked local clone, on the 10,000-commit
 *     repository of bench/evolution.bench.ts.
 *
 * `@anthropic-ai/sandbox-runtime` was evaluated by reading only (it needs
 * socat and ripgrep besides bubblewrap); its cost is not measured here.
 *
 * Run: `npx tsx bench/sandbox.bench.ts`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { runGate } from '../src/core/evolution/testGate';
import { NO_SANDBOX, detectSandbox, sandboxEnv, type Invocation, type Sandbox } from '../src/core/evolution/sandbox';
import { generatedRepo } from './evolution.bench';

const STARTS = 40;
const CLONES = 5;

// A CA bundle makes every `node` start half a second slower here; it would drown what is measured.
delete process.env.NODE_EXTRA_CA_CERTS;

function ms(value: number): string {
  return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value.toFixed(1)} ms`;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

/** Runs each action `times` times, in turn, and returns each one's median. */
async function sideBySide(times: number, actions: ReadonlyArray<() => unknown>): Promise<number[]> {
  const samples = actions.map(() => [] as number[]);
  for (let i = 0; i < times; i++) {
    for (const [n, action] of actions.entries()) {
      const started = performance.now();
      await action();
      samples[n]?.push(performance.now() - started);
    }
  }
  return samples.map(median);
}

function spawnOnce(invocation: Invocation, cwd: string, env: NodeJS.ProcessEnv): void {
  const result = spawnSync(invocation.file, [...invocation.args], { cwd, env, stdio: 'ignore' });
  if (result.status !== 0) throw new Error(`${invocation.file} ${invocation.args.join(' ')} exited ${result.status}`);
}

async function startUp(sandbox: Sandbox, label: string, command: string, cwd: string, work: string): Promise<void> {
  const home = fs.mkdtempSync(path.join(work, 'home-'));
  const tmp = fs.mkdtempSync(path.join(work, 'tmp-'));
  const env = sandboxEnv([], home, tmp);
  const run = { cwd, home, tmp, network: false, depsWritable: false };
  const [plain, boxed] = await sideBySide(STARTS, [() => spawnOnce(NO_SANDBOX.wrap(command, run), cwd, env), () => spawnOnce(sandbox.wrap(command, run), cwd, env)]);
  console.log(`    ${label.padEnd(38)} plain ${ms(plain ?? 0).padStart(9)}   bubblewrap ${ms(boxed ?? 0).padStart(9)}   +${ms((boxed ?? 0) - (plain ?? 0))}   ratio ${((boxed ?? 0) / (plain ?? 1)).toFixed(2)}×`);
}

export async function run(): Promise<void> {
  const sandbox = await detectSandbox('required');
  if (sandbox.kind === 'unavailable') throw new Error(sandbox.message);
  const workspace = generatedRepo();
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-sandbox-'));
  try {
    console.log(`sandbox: ${sandbox.kind}; ${STARTS} starts each, medians`);
    console.log('\n(a) start-up per command, sandboxed against plain');
    await startUp(sandbox, '`node -e 0`', 'node -e 0', workspace, work);
    await startUp(sandbox, '`node test.js` (the evolution bench)', 'node test.js', workspace, work);
    await startUp(sandbox, '`true`', 'true', workspace, work);

    console.log('\n(b) a whole gate call (`node test.js`), sandboxed against off');
    const steps = [{ name: 'test' as const, command: 'node test.js' }];
    const [off, boxed] = await sideBySide(STARTS, [
      () => runGate(steps, { cwd: workspace, sandbox: NO_SANDBOX, timeoutMs: 60_000 }),
      () => runGate(steps, { cwd: workspace, sandbox, timeoutMs: 60_000, hidden: [work] }),
    ]);
    console.log(`    off ${ms(off ?? 0)}   bubblewrap ${ms(boxed ?? 0)}   +${ms((boxed ?? 0) - (off ?? 0))}   ratio ${((boxed ?? 0) / (off ?? 1)).toFixed(2)}×`);

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
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
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
