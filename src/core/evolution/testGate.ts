import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runInvocation, type GateLimits, type LimitMechanisms } from '../sandbox/command';
import { openGateCgroup, releaseGateCgroup } from '../sandbox/gateCgroups';
import type { GateCgroup } from '../sandbox/cgroup';
import { parseGateSummary, type GateCounts } from './gateSummary';
import { withFileSizeWhere } from './fileSizeWhere';
import { gateEnvironment } from '../process/environment';
import { prepareForGateUser, type GateUser } from '../sandbox/gateUser';
import { GateInputs, prepareSandbox, type Sandbox } from '../sandbox/sandbox';
import { realOrResolved } from '../realPath';

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
  /** `candor.evolution.limits.*`; the disk limit covers the clone and the throwaway home and temp folder. */
  readonly limits?: Omit<GateLimits, 'diskPaths'>;
  /** `candor.evolution.environment`: names passed on beside the allow-list. */
  readonly environment?: readonly string[];
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
  /** The limit the last command hit, for people (it did not pass then). */
  readonly limitHit?: string;
  /** Which mechanism enforced each limit (the record's `limits`). */
  readonly limits?: LimitMechanisms;
  /** What the test runner's summary block counted, read from a longer tail than the one kept. */
  readonly counts?: GateCounts;
}

/** The record keeps this much of the output; the summary block is looked for in SUMMARY_TAIL_BYTES (mocha prints its failures after it). */
const KEPT_TAIL_BYTES = 4096;
const SUMMARY_TAIL_BYTES = 64 * 1024;

/**
 * Runs the steps in order in the scratch clone, each inside the sandbox;
 * stops at the first that does not pass. The steps share a throwaway home
 * and temp folder, made fresh for this call and removed after it, so nothing
 * a command leaves there reaches the next run. When the sandbox runs the
 * commands as the gate user, the clone's work tree and the throwaway pair
 * are made that user's first (prepareForGateUser), so what Candor wrote in
 * the clone since the last call is writable too. With limits, the steps
 * share one cgroup, made at the first command and removed after the result
 * (gateCgroups.ts).
 */
export async function runGate(steps: readonly GateStep[], options: GateOptions): Promise<GateResult> {
  const throwaway = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-gate-'));
  const home = path.join(throwaway, 'home');
  const tmp = path.join(throwaway, 'tmp');
  fs.mkdirSync(home);
  fs.mkdirSync(tmp);
  const user = options.sandbox.user;
  let ms = 0;
  let last: GateResult = { passed: true, ms: 0, tail: '', exitCode: 0, timedOut: false, cancelled: false, crashed: false };
  let cgroup: GateCgroup | undefined;
  let cgroupTried = false;
  try {
    if (user !== undefined) await prepareGateUser(user, options.cwd, home, tmp);
    const { env } = gateEnvironment({
      home,
      tmp,
      user: user?.name ?? os.userInfo().username,
      network: options.network === true,
      extraNames: options.environment ?? [],
      isVisible: (dir) => options.sandbox.isVisible(dir, options.hidden),
      withhold: options.secrets,
    });
    const limits = options.limits !== undefined ? { ...options.limits, diskPaths: [options.cwd, throwaway] } : undefined;
    // The sandbox's own tmpfs folders hold at most what the disk limit allows the clone and the home.
    const tmpfsMiB = limits?.diskMiB;
    const sandbox = prepareSandbox(options.sandbox, { cwd: options.cwd, home, tmp, hidden: options.hidden, network: options.network === true, depsWritable: options.depsWritable === true, ...(tmpfsMiB !== undefined ? { tmpfsMiB } : {}) });
    // The seccomp program and the gate user's passwd and group files: fds 3, 4, 5 of bubblewrap.
    const inputFiles = new GateInputs(throwaway);
    for (const step of steps) {
      if (step.command.trim() === '') continue;
      options.onOutput?.(`$ ${step.command}\n`);
      options.onCommand?.(step.name);
      const invocation = sandbox.wrap(step.command);
      if (limits !== undefined && !cgroupTried) {
        cgroupTried = true;
        cgroup = openGateCgroup(limits);
      }
      const inputs = inputFiles.open(invocation.inputs);
      const result = await runInvocation(invocation, {
        cwd: options.cwd,
        env,
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        onOutput: options.onOutput,
        tailBytes: options.tailBytes ?? SUMMARY_TAIL_BYTES,
        extraFds: inputs.fds,
        // The sandbox switches to the gate user itself (setpriv inside bubblewrap): the process limit counts under that uid.
        ...(user !== undefined ? { invocationUid: user.uid } : {}),
        ...(limits !== undefined ? { limits } : {}),
        ...(cgroup !== undefined ? { cgroup } : {}),
      }).finally(() => inputs.close());
      ms += result.ms;
      const { passed, exitCode, timedOut, cancelled, crashed } = result;
      const limitHit = result.limitHit !== undefined ? withFileSizeWhere(result.limitHit, result.tail) : undefined;
      const counts = step.name === 'test' ? parseGateSummary(result.tail) : undefined;
      last = {
        passed, ms, tail: keptTail(result.tail, options.tailBytes), exitCode, timedOut, cancelled, crashed,
        ...(limitHit !== undefined ? { limitHit } : {}),
        ...(result.limits !== undefined ? { limits: result.limits } : {}),
        ...(counts !== undefined ? { counts } : {}),
      };
      if (!passed) return { ...last, failedStep: step.name };
    }
    return last;
  } finally {
    if (cgroup !== undefined) releaseGateCgroup(cgroup);
    try {
      fs.rmSync(throwaway, { recursive: true, force: true });
    } catch {
      // A command may leave a folder its owner cannot enter; a stray temp folder is no reason to fail the gate.
    }
  }
}

/** The last KEPT_TAIL_BYTES of `tail`, from a line start, with Tail's marker counting everything before it. */
function keptTail(tail: string, asked: number | undefined): string {
  if (asked !== undefined || Buffer.byteLength(tail) <= KEPT_TAIL_BYTES) return tail;
  const marker = /^\[… ([\d,]+) earlier bytes not kept\]\n/.exec(tail);
  const before = marker !== null ? Number((marker[1] ?? '0').replace(/,/g, '')) : 0;
  const body = marker !== null ? tail.slice(marker[0].length) : tail;
  let kept = body.slice(-KEPT_TAIL_BYTES);
  while (Buffer.byteLength(kept) > KEPT_TAIL_BYTES) kept = kept.slice(1);
  const newline = kept.indexOf('\n');
  if (newline >= 0 && newline < kept.length - 1) kept = kept.slice(newline + 1);
  const dropped = before + Buffer.byteLength(body) - Buffer.byteLength(kept);
  return `[… ${dropped.toLocaleString('en-US')} earlier bytes not kept]\n${kept}`;
}

/**
 * The clone's work tree and the throwaway pair become the gate user's. Its
 * git would refuse the clone, whose `.git` stays root's ("dubious
 * ownership"), so the throwaway home's git config names the clone safe: a
 * build that runs `git describe` works as before.
 */
async function prepareGateUser(user: GateUser, cwd: string, home: string, tmp: string): Promise<void> {
  const clone = realOrResolved(cwd);
  if (!/[\n\r]/.test(clone)) fs.writeFileSync(path.join(home, '.gitconfig'), `[safe]\n\tdirectory = "${clone.replace(/[\\"]/g, (c) => `\\${c}`)}"\n`);
  await prepareForGateUser(cwd, user);
  await prepareForGateUser(home, user);
  await prepareForGateUser(tmp, user);
}

/** One line for people: `tests passed in 1.2 s`, `build timed out after 60 s`, … */
export function describeGate(result: GateResult, timeoutMs: number): string {
  const seconds = (result.ms / 1000).toFixed(1);
  if (result.passed) return `passed in ${seconds} s`;
  const step = result.failedStep ?? 'test';
  if (result.cancelled) return `${step} cancelled`;
  if (result.timedOut) return `${step} timed out after ${Math.round(timeoutMs / 1000)} s`;
  if (result.crashed) return `${step} command could not be started`;
  if (result.limitHit !== undefined) return `${step} ${result.limitHit}`;
  return `${step} failed (exit ${result.exitCode ?? 'by signal'})`;
}
