import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runInvocation } from '../sandbox/command';
import type { GateCgroup } from '../sandbox/cgroup';
import { openGateCgroup, releaseGateCgroup } from '../sandbox/gateCgroups';
import { prepareForGateUser, type GateUser } from '../sandbox/gateUser';
import { DEFAULT_GATE_LIMITS, type GateLimits } from '../sandbox/limits';
import { DEPENDENCY_DIR } from '../sandbox/dependencies';
import { GateInputs, prepareSandbox, type Sandbox, type SandboxRun } from '../sandbox/sandbox';
import { KindError } from '../kindError';
import { commandEnvironment } from '../process/environment';
import { currentUserName } from '../process/userName';
import { removeTree } from '../process/removeTree';
import { realOrResolved, isInside } from '../realPath';
import { redact } from '../redact';
import { OutputExplainer, lastLines, stripAnsi, type ViewCommandResult } from './commandReport';

export { describeForModel, type ViewCommandResult } from './commandReport';

/**
 * One shell command of the agent (`run_command`), in the evolution gate's
 * OS sandbox (docs/architecture.md, "Sandbox") over a view of the
 * workspace: a copy of it under Candor's data folder, mounted at the
 * workspace's own path, so the command finds its files where the user keeps
 * them and may change them, and not one byte of the user's work changes.
 * Nothing else of the workspace is mounted but its dependency folders,
 * read-only. The command's output came from code the model chose to run:
 * the sandbox assumes it hostile, as the gate does.
 */

export interface ViewCommand {
  /** bubblewrap (or Seatbelt); never the sandbox that is off: commands never run unsandboxed. */
  readonly sandbox: Sandbox;
  /** The view folder. */
  readonly view: string;
  /** Where the view is mounted inside the sandbox. */
  readonly workspaceRoot: string;
  /** Absolute, inside workspaceRoot: where the command starts. */
  readonly cwd: string;
  readonly command: string;
  /** Dependency folders of the workspace (the view's mounts); one whose real path is not in the workspace is left out. */
  readonly readOnlyBinds: readonly { readonly source: string; readonly dest: string }[];
  readonly tmpfs: readonly string[];
  /** Candor's data folder, …; the real home is always hidden. */
  readonly hidden: readonly string[];
  /** `candor.commands.network === 'on'`. */
  readonly network: boolean;
  /** `candor.commands.environment`: names added to the allow-list. */
  readonly environment: readonly string[];
  /** Values no variable may hold (the API key from SecretStorage). */
  readonly withhold: readonly string[];
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
  /** The raw output as it comes (the caller bounds and redacts what it shows). */
  readonly onOutput: (text: string) => void;
  /** Default DEFAULT_GATE_LIMITS; the disk limit covers the view and the throwaway home and temp folder. */
  readonly limits?: Omit<GateLimits, 'diskPaths'>;
}

export type CommandErrorKind =
  /** The sandbox is off: a command of the agent never runs without one. */
  | 'unsandboxed'
  /** `cwd` is not inside the workspace, or the view is missing: a bug of the caller, never run. */
  | 'outside-view';

export class CommandError extends KindError<CommandErrorKind> {
  override readonly name = 'CommandError';
}

/** The tail runInvocation keeps; cut to TAIL_BYTES once escape sequences are gone. */
const RAW_TAIL_BYTES = 16 * 1024;

/**
 * Runs `c.command` with `/bin/sh -c` in the sandbox and resolves once it and
 * everything it started are gone: at its end, at the timeout, or when
 * `c.signal` stops it. It gets a throwaway home and temp folder of its own
 * (the gate user's when Candor is root), the allow-listed environment of
 * commandEnvironment, the gate's limits in a cgroup of its own where the
 * host has one, and the network only when asked. Throws CommandError for the
 * sandbox that is off and for a `cwd` outside the workspace.
 */
export async function runInView(c: ViewCommand): Promise<ViewCommandResult> {
  if (c.sandbox.kind === 'off') {
    throw new CommandError('unsandboxed', "the agent's commands never run without an OS sandbox, and candor.evolution.sandbox is \"off\": turn it back on (bubblewrap on Linux) to let the agent run commands");
  }
  const root = path.resolve(c.workspaceRoot);
  const relative = path.relative(root, path.resolve(c.cwd));
  if (!path.isAbsolute(c.cwd) || !isInside(root, path.resolve(c.cwd))) throw new CommandError('outside-view', `the command's folder ${c.cwd} is not inside the workspace ${root}`);
  if (!isFolder(c.view)) throw new CommandError('outside-view', `the view of the workspace (${c.view}) is missing`);
  const workspace = realOrResolved(root);
  const view = realOrResolved(c.view);
  // In the sandbox the view is at the workspace's real path; on macOS (no mounts) the command works in the view itself.
  const start = path.join(c.sandbox.kind === 'seatbelt' ? view : workspace, relative);
  const throwaway = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-command-'));
  const home = path.join(throwaway, 'home');
  const tmp = path.join(throwaway, 'tmp');
  fs.mkdirSync(home);
  fs.mkdirSync(tmp);
  const asked = c.limits ?? DEFAULT_GATE_LIMITS;
  let cgroup: GateCgroup | undefined;
  try {
    cgroup = openGateCgroup(asked);
    // As the gate does: where the sandbox bounds its in-memory folders and a memory cgroup what they take, the throwaway pair is in memory.
    const inMemory = asked.diskMiB > 0 && c.sandbox.sizedTmpfs === true && cgroup?.controllers.memory !== undefined;
    const limits = { ...asked, diskPaths: inMemory ? [view] : [view, throwaway], throwawayInMemory: inMemory };
    const user = c.sandbox.user;
    if (user !== undefined) await prepareHome(user, workspace, home, tmp);
    const { env, secrets } = commandEnvironment({
      home,
      tmp,
      user: user?.name ?? currentUserName(),
      network: c.network,
      extraNames: c.environment,
      isVisible: (dir) => c.sandbox.isVisible(dir, c.hidden),
      withhold: c.withhold,
    });
    const gitconfig = user !== undefined ? safeDirectoryConfig(workspace) : undefined;
    const run = { ...viewRun(c, { workspace, view, home, tmp }), ...(inMemory ? { throwawayInMemory: true, homeFiles: gitconfig !== undefined ? [{ name: '.gitconfig', text: gitconfig }] : [] } : {}) };
    const invocation = prepareSandbox(c.sandbox, run).wrap(`cd -- ${shellQuote(start)} || exit 1\n${c.command}`);
    const readOnly = [path.join(workspace, '.git'), path.join(workspace, DEPENDENCY_DIR), ...(run.readOnlyBinds ?? []).map((bind) => bind.dest)];
    const explainer = new OutputExplainer({ workspace, cwd: start, writable: [home, tmp, '/tmp', '/dev/shm'].map(realOrResolved), readOnly, network: c.network });
    // The seccomp program and the gate user's passwd and group files: fds 3, 4, 5 of bubblewrap.
    const inputs = new GateInputs(throwaway).open(invocation.inputs);
    const result = await runInvocation(invocation, {
      cwd: view,
      env,
      timeoutMs: c.timeoutMs,
      signal: c.signal,
      onOutput: (text) => {
        explainer.push(text);
        c.onOutput(text);
      },
      tailBytes: RAW_TAIL_BYTES,
      extraFds: inputs.fds,
      // The sandbox switches to the gate user itself (setpriv inside bubblewrap): the process limit counts under that uid.
      ...(user !== undefined ? { invocationUid: user.uid } : {}),
      limits,
      ...(cgroup !== undefined ? { cgroup } : {}),
    }).finally(() => inputs.close());
    const withheld = [...c.withhold, ...secrets];
    const explanation = explainer.explanation();
    return {
      exitCode: result.exitCode,
      timedOut: result.timedOut,
      cancelled: result.cancelled,
      crashed: result.crashed,
      ms: result.ms,
      tail: lastLines(result.tail, undefined, (text) => redact(stripAnsi(text), withheld)),
      ...(result.limitHit !== undefined ? { limitHit: result.limitHit } : {}),
      ...(explanation !== undefined ? { explanation } : {}),
    };
  } finally {
    if (cgroup !== undefined) releaseGateCgroup(cgroup);
    // What the command left there may be unreadable, or deeper than a path can name: removeTree handles both.
    await removeTree(throwaway).catch(() => {
      // A stray temp folder is no reason to lose the result.
    });
  }
}

/**
 * The sandbox run of `c`: the view at the workspace's real path, and the
 * workspace's own dependency folders and tmpfs folders at their places in
 * it, never a link out of the workspace, never a place beside the view.
 */
function viewRun(c: ViewCommand, at: { readonly workspace: string; readonly view: string; readonly home: string; readonly tmp: string }): SandboxRun {
  const root = path.resolve(c.workspaceRoot);
  const inWorkspace = (target: string): boolean => path.isAbsolute(target) && isInside(root, path.resolve(target));
  const inside = (target: string): string => path.join(at.workspace, path.relative(root, path.resolve(target)));
  return {
    cwd: at.workspace,
    cwdSource: at.view,
    home: at.home,
    tmp: at.tmp,
    hidden: c.hidden,
    network: c.network,
    depsWritable: false,
    readOnlyBinds: c.readOnlyBinds.filter((bind) => inWorkspace(bind.dest) && isInside(at.workspace, realOrResolved(bind.source))).map((bind) => ({ source: bind.source, dest: inside(bind.dest) })),
    tmpfs: c.tmpfs.filter(inWorkspace).map(inside),
    // The sandbox's own tmpfs folders hold at most what the disk limit allows the view and the home.
    tmpfsMiB: (c.limits ?? DEFAULT_GATE_LIMITS).diskMiB,
  };
}

/**
 * The throwaway pair becomes the gate user's. The view's `.git` stays
 * root's (mounted read-only), so its git would refuse the repository
 * ("dubious ownership"): the home's git config names it safe, at the path
 * the command sees it.
 */
async function prepareHome(user: GateUser, workspace: string, home: string, tmp: string): Promise<void> {
  const gitconfig = safeDirectoryConfig(workspace);
  if (gitconfig !== undefined) fs.writeFileSync(path.join(home, '.gitconfig'), gitconfig);
  await prepareForGateUser(home, user);
  await prepareForGateUser(tmp, user);
}

/** The git config that names the view's repository safe, at the path the command sees it; undefined for a path that would break the file. */
function safeDirectoryConfig(workspace: string): string | undefined {
  return /[\n\r]/.test(workspace) ? undefined : `[safe]\n\tdirectory = "${workspace.replace(/[\\"]/g, (ch) => `\\${ch}`)}"\n`;
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, "'\\''")}'`;
}

function isFolder(dir: string): boolean {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}
