import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runInvocation } from './command';
import { sandboxEnv, type Sandbox } from './sandbox';

export type GateStepName = 'setup' | 'build' | 'test';

export interface GateStep {
  readonly name: GateStepName;
  readonly command: string;
}

export interface GateOptions {
  /** The scratch clone. */
  readonly cwd: string;
  /** Every command runs inside it (docs/architecture.md, "Sandbox"); NO_SANDBOX only when the user turned it off. */
  readonly sandbox: Sandbox;
  /** Folders the commands must not see: the data folder, the source repository (the real home is always hidden). */
  readonly hidden?: readonly string[];
  /** Default false: only setup, and only on HEAD's manifest and lock file, gets the network. */
  readonly network?: boolean;
  /** Default false: the dependency folder is writable during setup only. */
  readonly depsWritable?: boolean;
  /** Per command. */
  readonly timeoutMs: number;
  /** Values kept out of the commands' environment (the API key), beside OPENAI_API_KEY and CANDOR_*. */
  readonly secrets?: readonly string[];
  readonly signal?: AbortSignal;
  readonly onOutput?: (chunk: string) => void;
  /** Called just before each command starts. */
  readonly onCommand?: (step: GateStepName) => void;
  readonly tailBytes?: number;
}

export interface GateResult {
  readonly passed: boolean;
  /** All steps together. */
  readonly ms: number;
  /** The tail of the last step that ran (the failing one, or the tests). */
  readonly tail: string;
  readonly exitCode: number | null;
  readonly timedOut: boolean;
  readonly cancelled: boolean;
  readonly crashed: boolean;
  /** The step that failed. */
  readonly failedStep?: GateStepName;
}

/**
 * Runs the steps in order in the scratch clone, each inside the sandbox;
 * stops at the first that does not pass. The steps share a throwaway home
 * and temp folder, made fresh for this call and removed after it, so nothing
 * a command leaves there reaches the next run.
 */
export async function runGate(steps: readonly GateStep[], options: GateOptions): Promise<GateResult> {
  const throwaway = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-gate-'));
  const home = path.join(throwaway, 'home');
  const tmp = path.join(throwaway, 'tmp');
  fs.mkdirSync(home);
  fs.mkdirSync(tmp);
  const env = sandboxEnv(options.secrets ?? [], home, tmp);
  let ms = 0;
  let last: GateResult = { passed: true, ms: 0, tail: '', exitCode: 0, timedOut: false, cancelled: false, crashed: false };
  try {
    for (const step of steps) {
      if (step.command.trim() === '') continue;
      options.onOutput?.(`$ ${step.command}\n`);
      options.onCommand?.(step.name);
      const invocation = options.sandbox.wrap(step.command, {
        cwd: options.cwd,
        home,
        tmp,
        hidden: options.hidden,
        network: options.network === true,
        depsWritable: options.depsWritable === true,
      });
      const result = await runInvocation(invocation, {
        cwd: options.cwd,
        env,
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        onOutput: options.onOutput,
        tailBytes: options.tailBytes,
      });
      ms += result.ms;
      const { passed, exitCode, timedOut, cancelled, crashed, tail } = result;
      last = { passed, ms, tail, exitCode, timedOut, cancelled, crashed };
      if (!passed) return { ...last, failedStep: step.name };
    }
    return last;
  } finally {
    try {
      fs.rmSync(throwaway, { recursive: true, force: true });
    } catch {
      // A command may leave a folder its owner cannot enter; a stray temp folder is no reason to fail the gate.
    }
  }
}

/** One line for people: `tests passed in 1.2 s`, `build timed out after 60 s`, … */
export function describeGate(result: GateResult, timeoutMs: number): string {
  const seconds = (result.ms / 1000).toFixed(1);
  if (result.passed) return `passed in ${seconds} s`;
  const step = result.failedStep ?? 'test';
  if (result.cancelled) return `${step} cancelled`;
  if (result.timedOut) return `${step} timed out after ${Math.round(timeoutMs / 1000)} s`;
  if (result.crashed) return `${step} command could not be started`;
  return `${step} failed (exit ${result.exitCode ?? 'by signal'})`;
}
