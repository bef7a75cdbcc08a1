import { setupInputsMatch, setupIsCurrent, setupPlan, setupStampFile, writeSetupStamp } from './scratch';
import type { Scratch } from './scratchGit';
import type { Sandbox } from '../sandbox/sandbox';
import { runGate, type GateOptions, type GateResult, type GateStep } from './testGate';
import { removeNestedRepositories } from './nestedRepos';

export interface GateRunnerOptions {
  readonly scratch: Scratch;
  /** The commit the run started from: setup reaches the network only while its manifest and lock file are this commit's. */
  readonly base: string;
  readonly sandbox: Sandbox;
  /** Folders the commands must not see: the data folder and the agent's repository. */
  readonly hidden: readonly string[];
  readonly testCommand: string;
  readonly buildCommand?: string;
  readonly setupCommand?: string;
  readonly timeoutMs: number;
  readonly secrets?: readonly string[];
  /** `candor.evolution.limits.*`, for every command. */
  readonly limits?: GateOptions['limits'];
  /** `candor.evolution.environment`. */
  readonly environment?: readonly string[];
  readonly signal?: AbortSignal;
  readonly print: (line: string) => void;
  readonly onOutput?: (chunk: string) => void;
  /** Called just before any command starts (the record names the sandbox then). */
  readonly onCommand: () => void;
}

/**
 * The run's commands in the scratch clone: setup when needed, then build
 * and tests, all in the sandbox; and the model's `run_tests`. One path for
 * all of them (docs/architecture.md, "Evolution"): the same sandbox, what it
 * hides, limits, environment, timeout and bounded output, so the record's
 * `limits` is true of every command of the run. After each command, before
 * any host git, every `.git` it left below the clone's top is removed
 * (nestedRepos.ts) and remembered for the change's measure.
 */
export class GateRunner {
  #removed: string[] = [];

  constructor(private readonly o: GateRunnerOptions) {}

  testSteps(): GateStep[] {
    return [
      { name: 'build', command: this.o.buildCommand ?? '' },
      { name: 'test', command: this.o.testCommand },
    ];
  }

  /**
   * Setup, when the lock file (or the command) changed since the last
   * install; undefined when none was needed. The dependency folder is
   * writable; the network only while the setup inputs are the base's.
   */
  async ensureSetup(): Promise<GateResult | undefined> {
    const { scratch } = this.o;
    const setupCommand = this.o.setupCommand ?? '';
    const plan = await setupPlan(scratch.dir, setupCommand);
    if (plan === undefined || (await setupIsCurrent(scratch.dir, setupCommand, setupStampFile(scratch)))) return undefined;
    const network = await setupInputsMatch(scratch, this.o.base, { secrets: this.o.secrets });
    this.o.print(`setup: ${plan.command}${plan.lockFile !== undefined ? ` (${plan.lockFile} changed)` : ''}${network ? '' : ' — without network: the manifest or lock file differs from HEAD'}`);
    const setup = await this.run([{ name: 'setup', command: plan.command }], { ...this.gateOptions(), network, depsWritable: true });
    if (setup.passed) await writeSetupStamp(scratch, plan, { secrets: this.o.secrets, signal: this.o.signal });
    return setup;
  }

  /** The gate: setup when needed, then build and tests. */
  async gate(): Promise<GateResult> {
    const setup = await this.ensureSetup();
    if (setup !== undefined && !setup.passed) return setup;
    const result = await this.run(this.testSteps(), this.gateOptions());
    return setup !== undefined ? { ...result, ms: result.ms + setup.ms } : result;
  }

  /** The model's `run_tests`: build and tests as the gate runs them, stopped by the tool call's signal. */
  runTests(signal: AbortSignal): Promise<GateResult> {
    return this.run(this.testSteps(), { ...this.gateOptions(), signal });
  }

  /** The `.git` entries removed after this runner's commands since the last call (relative to the clone), and forgets them. */
  takeRemovedRepositories(): string[] {
    return this.#removed.splice(0);
  }

  private async run(steps: readonly GateStep[], options: GateOptions): Promise<GateResult> {
    try {
      return await runGate(steps, options);
    } finally {
      this.#removed.push(...(await removeNestedRepositories(this.o.scratch)));
    }
  }

  /** What every command of the run shares: the sandbox, what it hides, the timeout, the secrets, where output goes. */
  commandOptions(): Pick<GateOptions, 'sandbox' | 'hidden' | 'timeoutMs' | 'secrets' | 'onOutput' | 'onCommand' | 'limits' | 'environment'> {
    const o = this.o;
    return { sandbox: o.sandbox, hidden: o.hidden, timeoutMs: o.timeoutMs, secrets: o.secrets, limits: o.limits, environment: o.environment, onOutput: o.onOutput, onCommand: () => o.onCommand() };
  }

  private gateOptions(): GateOptions {
    return { ...this.commandOptions(), cwd: this.o.scratch.dir, signal: this.o.signal };
  }
}
