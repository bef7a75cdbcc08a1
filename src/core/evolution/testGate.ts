import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runInvocation, type GateLimits, type LimitMechanisms } from '../sandbox/command';
import { openGateCgroup, releaseGateCgroup } from '../sandbox/gateCgroups';
import type { GateCgroup } from '../sandbox/cgroup';
import { parseGateSummary, type GateCounts } from './gateSummary';
import { withFileSizeWhere } from './fileSizeWhere';
import { gateEnvironment } from '../process/environment';
import { currentUserName } from '../process/userName';
import { prepareForGateUser, type GateUser } from '../sandbox/gateUser';
import { GateInputs, prepareSandbox, type Sandbox } from '../sandbox/sandbox';
import { realOrResolved } from '../realPath';
import { removeTree } from '../process/removeTree';
import { isAlive } from '../process/lockFile';

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
 * stops at the first that does not pass. The steps get a throwaway home
 * and temp folder, made fresh for this call and removed after it at any
 * depth, so nothing a command leaves there reaches the next run (what an
 * earlier gate could not remove goes at the next one): host folders the
 * steps share, or, where the limits allow it, in-memory folders of the disk
 * limit's size, fresh for each step (docs/architecture.md, "Sandbox",
 * limits). When the sandbox runs the commands as the gate user, the clone's
 * work tree and the throwaway pair are made that user's first
 * (prepareForGateUser), so what Candor wrote in the clone since the last
 * call is writable too. With limits, the steps share one cgroup, made before
 * the first command and removed after the result (gateCgroups.ts).
 */
export async function runGate(steps: readonly GateStep[], options: GateOptions): Promise<GateResult> {
  await removeStaleThrowaways();
  const throwaway = fs.mkdtempSync(path.join(os.tmpdir(), `${THROWAWAY_PREFIX}${process.pid}-`));
  inUse.add(throwaway);
  const home = path.join(throwaway, 'home');
  const tmp = path.join(throwaway, 'tmp');
  fs.mkdirSync(home);
  fs.mkdirSync(tmp);
  const user = options.sandbox.user;
  let ms = 0;
  let last: GateResult = { passed: true, ms: 0, tail: '', exitCode: 0, timedOut: false, cancelled: false, crashed: false };
  let cgroup: GateCgroup | undefined;
  try {
    if (user !== undefined) await prepareGateUser(user, options.cwd, home, tmp);
    const { env } = gateEnvironment({
      home,
      tmp,
      user: user?.name ?? currentUserName(),
      network: options.network === true,
      extraNames: options.environment ?? [],
      isVisible: (dir) => options.sandbox.isVisible(dir, options.hidden),
      withhold: options.secrets,
    });
    if (options.limits !== undefined && steps.some((step) => step.command.trim() !== '')) cgroup = openGateCgroup(options.limits);
    // Where the sandbox bounds its in-memory folders and a memory cgroup bounds what they take, the throwaway pair lives in memory.
    const inMemory = options.limits !== undefined && options.limits.diskMiB > 0 && options.sandbox.sizedTmpfs === true && cgroup?.controllers.memory !== undefined;
    const limits = options.limits !== undefined ? { ...options.limits, diskPaths: inMemory ? [options.cwd] : [options.cwd, throwaway], throwawayInMemory: inMemory } : undefined;
    // The sandbox's own tmpfs folders hold at most what the disk limit allows the clone and the home.
    const tmpfsMiB = limits?.diskMiB;
    const gitconfig = user !== undefined ? safeDirectoryConfig(options.cwd) : undefined;
    const memory = inMemory ? { throwawayInMemory: true, homeFiles: gitconfig !== undefined ? [{ name: '.gitconfig', text: gitconfig }] : [] } : {};
    const sandbox = prepareSandbox(options.sandbox, { cwd: options.cwd, home, tmp, hidden: options.hidden, network: options.network === true, depsWritable: options.depsWritable === true, ...(tmpfsMiB !== undefined ? { tmpfsMiB } : {}), ...memory });
    // The seccomp program and the gate user's passwd and group files: fds 3, 4, 5 of bubblewrap.
    const inputFiles = new GateInputs(throwaway);
    for (const step of steps) {
      if (step.command.trim() === '') continue;
      options.onOutput?.(`$ ${step.command}\n`);
      options.onCommand?.(step.name);
      const invocation = sandbox.wrap(step.command);
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
    await removeThrowaway(throwaway);
  }
}

/** `candor-gate-<pid>-<random>`: the pid of the process whose gate made it, so that a later one knows whether it may go. */
const THROWAWAY_PREFIX = 'candor-gate-';
/** This process's throwaway folders of gates still running. */
const inUse = new Set<string>();

/**
 * The throwaway pair goes, at any depth (removeTree: a command may leave a
 * tree deeper than PATH_MAX, or folders its owner cannot enter). A removal
 * that fails anyway does not fail the gate: the folder is left to the next
 * gate's sweep (removeStaleThrowaways), which tries it again.
 */
async function removeThrowaway(throwaway: string): Promise<void> {
  try {
    await removeTree(throwaway);
  } catch {
    // Swept by the next gate: it is no longer in use.
  } finally {
    inUse.delete(throwaway);
  }
}

/**
 * Throwaway folders that earlier gates left in the temp folder: each is
 * removed when the process named in it is gone, or is this one and no gate
 * of it uses the folder. One of a live process (another window's gate may be
 * running) stays; so does one another user owns.
 */
async function removeStaleThrowaways(): Promise<void> {
  const tmp = os.tmpdir();
  let names: string[];
  try {
    names = fs.readdirSync(tmp).filter((name) => name.startsWith(THROWAWAY_PREFIX));
  } catch {
    return;
  }
  const uid = process.getuid?.();
  for (const name of names) {
    const pid = Number(/^candor-gate-(\d+)-/.exec(name)?.[1] ?? Number.NaN);
    const folder = path.join(tmp, name);
    if (!Number.isInteger(pid) || pid <= 0 || inUse.has(folder) || (pid !== process.pid && isAlive(pid))) continue;
    const stat = await fs.promises.lstat(folder).catch(() => undefined);
    if (stat?.isDirectory() !== true || (uid !== undefined && stat.uid !== uid)) continue;
    await removeTree(folder).catch(() => undefined);
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
  const gitconfig = safeDirectoryConfig(cwd);
  if (gitconfig !== undefined) fs.writeFileSync(path.join(home, '.gitconfig'), gitconfig);
  await prepareForGateUser(cwd, user);
  await prepareForGateUser(home, user);
  await prepareForGateUser(tmp, user);
}

/** The git config that names the clone safe; undefined for a path that would break the file. */
function safeDirectoryConfig(cwd: string): string | undefined {
  const clone = realOrResolved(cwd);
  return /[\n\r]/.test(clone) ? undefined : `[safe]\n\tdirectory = "${clone.replace(/[\\"]/g, (c) => `\\${c}`)}"\n`;
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
