import { childEnv } from './childEnv';
import { runShellCommand } from './command';

export type GateStepName = 'setup' | 'build' | 'test';

export interface GateStep {
  readonly name: GateStepName;
  readonly command: string;
}

export interface GateOptions {
  /** The scratch clone. */
  readonly cwd: string;
  /** Per command. */
  readonly timeoutMs: number;
  /** Values kept out of the commands' environment (the API key), beside OPENAI_API_KEY and CANDOR_*. */
  readonly secrets?: readonly string[];
  readonly signal?: AbortSignal;
  readonly onOutput?: (chunk: string) => void;
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

/** Runs the steps in order in the scratch clone; stops at the first that does not pass. */
export async function runGate(steps: readonly GateStep[], options: GateOptions): Promise<GateResult> {
  const env = childEnv(options.secrets ?? []);
  let ms = 0;
  let last: GateResult = { passed: true, ms: 0, tail: '', exitCode: 0, timedOut: false, cancelled: false, crashed: false };
  for (const step of steps) {
    if (step.command.trim() === '') continue;
    options.onOutput?.(`$ ${step.command}\n`);
    const result = await runShellCommand(step.command, {
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
