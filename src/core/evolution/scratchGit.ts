import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childEnvironment } from '../process/environment';
import { gitBinary } from '../process/gitBinary';
import { EvolutionError } from './errors';
import { SCRATCH_DIR } from './paths';
import { isInside, realPathLenient } from '../realPath';
import { CANDOR_IDENTITY } from '../identity';

/**
 * Git in Candor's own scratch clone — where any command may run (clone,
 * fetch, reset --hard, clean, checkout, commit). Every function checks first
 * that the path it is given lies strictly inside `<dataDir>/scratch/` (on the
 * real path, so a symlink cannot point it elsewhere), and pins `GIT_DIR` and
 * `GIT_WORK_TREE` to it, so git can never walk up into an enclosing
 * repository. A bug elsewhere cannot aim these at the workspace.
 *
 * The clone holds code the model wrote, so git here trusts nothing in it
 * (docs/architecture.md, "Sandbox"): git is the absolute one from PATH, and
 * reads no config but the clone's own and Candor's `-c` pairs (no system or
 * user config, whose drivers a `.gitattributes` of the model's could name; no
 * inherited `GIT_*` variable); hooks come from an empty folder outside the
 * clone, no fsmonitor runs, no automatic gc or maintenance starts, no
 * submodule is entered, and only the file protocol is allowed (an `insteadOf`
 * rule cannot turn the source path into a command). Its work tree may belong
 * to the gate's unprivileged uid while `.git` stays Candor's:
 * `safe.directory` names the clone, and only it, so git does not refuse it.
 * What git prints is read up to a cap. Callers remove every `.git` below the
 * clone's top before git runs after a command (nestedRepos.ts).
 */

export interface Scratch {
  readonly dataDir: string;
  /** `<dataDir>/scratch/<repo-id>`. */
  readonly dir: string;
}

export interface ScratchGitOptions {
  readonly input?: string;
  readonly signal?: AbortSignal;
  readonly secrets?: readonly string[];
  /** Default 10 minutes: a clone of a large repository across filesystems takes a while. */
  readonly timeoutMs?: number;
  /** Largest stdout kept (default 64 MiB); git is killed past it and the call fails. */
  readonly maxOutputBytes?: number;
  /** A separate index and object folder (see measure.ts): where a change is staged before it is accepted. */
  readonly staging?: StagingEnv;
  /** Exit codes besides 0 that are an answer, not a failure (`check-ignore` exits 1 when nothing is ignored). */
  readonly answerCodes?: readonly number[];
}

/** Git's own variables for a staged change: a temporary index, and new objects kept apart from the clone's. */
export interface StagingEnv {
  readonly GIT_INDEX_FILE: string;
  readonly GIT_OBJECT_DIRECTORY: string;
  readonly GIT_ALTERNATE_OBJECT_DIRECTORIES: string;
}

const MAX_OUTPUT_BYTES = 64 * 1024 * 1024;

/** Throws `outside-scratch` unless `dir` is strictly inside `<dataDir>/scratch/`; returns it resolved. */
export function checkScratchPath(scratch: Scratch): string {
  const root = path.join(path.resolve(scratch.dataDir), SCRATCH_DIR);
  const dir = path.resolve(scratch.dir);
  const lexical = { outer: root, inner: dir };
  const real = { outer: realPathLenient(root), inner: realPathLenient(dir) };
  for (const { outer, inner } of [lexical, real]) {
    if (inner === outer || !isInside(outer, inner)) {
      throw new EvolutionError('outside-scratch', `refused to run git in ${dir}: not inside ${root}`);
    }
  }
  return dir;
}

/** Runs `git <args>` in the scratch clone; resolves with stdout, throws `scratch-git` with stderr. */
export async function scratchGit(scratch: Scratch, args: readonly string[], options: ScratchGitOptions = {}): Promise<string> {
  return (await scratchGitBytes(scratch, args, options)).toString('utf8');
}

/** `scratchGit` with stdout as bytes (a blob compared byte for byte). */
export async function scratchGitBytes(scratch: Scratch, args: readonly string[], options: ScratchGitOptions = {}): Promise<Buffer> {
  const dir = checkScratchPath(scratch);
  return runGit(dir, args, { ...options, scratch, gitDir: path.join(dir, '.git'), workTree: dir });
}

/**
 * `git clone --no-hardlinks --dissociate --no-checkout <source> <scratch>`:
 * objects are copied, never hard-linked, and none are borrowed (a source
 * with `objects/info/alternates` would pass them on), so nothing written in
 * the clone can change the source's files and the gate needs no folder of
 * the source's. Then everything that names the source goes: the remote, the
 * reflog (`clone: from <path>`), FETCH_HEAD; and no reflog is written again.
 */
export async function cloneIntoScratch(scratch: Scratch, source: string, options: ScratchGitOptions = {}): Promise<void> {
  const dir = checkScratchPath(scratch);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  await runGit(path.dirname(dir), ['clone', '--quiet', '--no-hardlinks', '--dissociate', '--no-checkout', '--no-tags', '--', path.resolve(source), dir], { ...options, scratch });
  // Nothing in the scratch clone may reach back into the workspace (a `git push` in a test script).
  await scratchGit(scratch, ['remote', 'remove', 'origin'], options);
  await scratchGit(scratch, ['config', 'core.logAllRefUpdates', 'false'], options);
  forgetSource(dir);
}

/** `git fetch` from a local path into the scratch clone, writing no FETCH_HEAD (it would name the source). */
export async function fetchIntoScratch(scratch: Scratch, source: string, refspecs: readonly string[], options: ScratchGitOptions = {}): Promise<void> {
  await scratchGit(scratch, ['fetch', '--quiet', '--no-tags', '--no-recurse-submodules', '--no-write-fetch-head', '--', path.resolve(source), ...refspecs], options);
}

/** The files of a clone's `.git` that name where it came from (or borrow from it: alternates). */
export const SOURCE_TRACES = ['logs', 'FETCH_HEAD', path.join('objects', 'info', 'alternates')] as const;

function forgetSource(dir: string): void {
  for (const name of SOURCE_TRACES) fs.rmSync(path.join(dir, '.git', name), { recursive: true, force: true });
}

/**
 * `<dataDir>/scratch/.no-hooks`: the hooks folder of every scratch git
 * command. Outside the clone, so the model's code cannot plant a hook in it;
 * emptied before use in case anything else did.
 */
export function noHooksDir(scratch: Scratch): string {
  const dir = path.join(path.resolve(scratch.dataDir), SCRATCH_DIR, '.no-hooks');
  fs.mkdirSync(dir, { recursive: true });
  for (const entry of fs.readdirSync(dir)) fs.rmSync(path.join(dir, entry), { recursive: true, force: true });
  return dir;
}

/**
 * What every scratch git command carries: no hooks from the clone, no
 * fsmonitor program, no signature program, no attributes file of the user's,
 * no automatic gc or maintenance (each a process of its own, after the
 * command), no submodule looked into (a second line behind the removal of
 * every nested `.git`: porcelain commands honour it, `diff-files` and
 * `add` do not), Candor's identity, and the clone named safe (its work tree
 * may be owned by the gate's uid).
 */
function hardening(scratch: Scratch): string[] {
  const dir = path.resolve(scratch.dir);
  const pairs = [
    `core.hooksPath=${noHooksDir(scratch)}`, 'core.fsmonitor=false', `core.attributesFile=${os.devNull}`, 'log.showSignature=false',
    'gc.auto=0', 'maintenance.auto=false', 'diff.ignoreSubmodules=all', 'submodule.recurse=false', 'fetch.recurseSubmodules=false',
    ...CANDOR_IDENTITY, `safe.directory=${dir}`, `safe.directory=${path.join(dir, '.git')}`,
  ];
  return pairs.flatMap((pair) => ['-c', pair]);
}

/**
 * Beside PATH and the locale: the user's name and the temp folder. Not the
 * home: no config of the user's (or of the system) is read, so a driver they
 * defined (`filter.lfs`) never runs on what the model left.
 */
const SCRATCH_GIT_NAMES = ['USER', 'LOGNAME', 'TMPDIR'];
const SCRATCH_GIT_SET = { LC_ALL: 'C', GIT_TERMINAL_PROMPT: '0', GIT_ALLOW_PROTOCOL: 'file', GIT_CONFIG_GLOBAL: os.devNull, GIT_CONFIG_NOSYSTEM: '1' };

interface RunOptions extends ScratchGitOptions {
  readonly scratch: Scratch;
  readonly gitDir?: string;
  readonly workTree?: string;
}

function runGit(cwd: string, gitArgs: readonly string[], options: RunOptions): Promise<Buffer> {
  // An allow-list, not the host's environment minus a deny-list: the clone holds the model's code, and a
  // secret under a harmless name must not reach git here whether or not the caller named it.
  const env: NodeJS.ProcessEnv = childEnvironment({ use: 'git in the scratch clone', names: SCRATCH_GIT_NAMES, extraNames: [], set: SCRATCH_GIT_SET, withhold: options.secrets }).env;
  if (options.gitDir !== undefined) env.GIT_DIR = options.gitDir;
  if (options.workTree !== undefined) env.GIT_WORK_TREE = options.workTree;
  if (options.staging !== undefined) Object.assign(env, options.staging);
  const args = [...hardening(options.scratch), ...gitArgs];
  const git = gitBinary([path.join(path.resolve(options.scratch.dataDir), SCRATCH_DIR)]);
  if (git === undefined) return Promise.reject(new EvolutionError('scratch-git', 'git was not found on PATH (outside the scratch folder); evolution runs need it'));
  return new Promise((resolve, reject) => {
    const child = spawn(git, args, { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], signal: options.signal, timeout: options.timeoutMs ?? 600_000, killSignal: 'SIGKILL' });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    const maxOutput = options.maxOutputBytes ?? MAX_OUTPUT_BYTES;
    let outBytes = 0;
    let overflow = false;
    child.stdout.on('data', (chunk: Buffer) => {
      outBytes += chunk.length;
      if (outBytes <= maxOutput) out.push(chunk);
      else if (!overflow) {
        overflow = true;
        child.kill('SIGKILL');
      }
    });
    // stderr: only its last lines are reported.
    let errBytes = 0;
    child.stderr.on('data', (chunk: Buffer) => {
      err.push(chunk);
      errBytes += chunk.length;
      while (errBytes > 64 * 1024 && err.length > 1) errBytes -= (err.shift() as Buffer).length;
    });
    child.on('error', (error) => {
      const aborted = options.signal?.aborted === true;
      reject(new EvolutionError(aborted ? 'cancelled' : 'scratch-git', aborted ? 'cancelled by the user' : `git ${args.join(' ')} could not start: ${error.message}`));
    });
    child.on('close', (code, signal) => {
      const subcommand = args.find((a, i) => !a.startsWith('-') && args[i - 1] !== '-c') ?? 'git';
      if (overflow) {
        reject(new EvolutionError('scratch-git', `git ${subcommand} in the scratch clone printed more than ${maxOutput} bytes; Candor stopped it`));
        return;
      }
      if (code === 0 || (code !== null && options.answerCodes?.includes(code) === true)) {
        resolve(Buffer.concat(out));
        return;
      }
      if (options.signal?.aborted === true) {
        reject(new EvolutionError('cancelled', 'cancelled by the user'));
        return;
      }
      const stderr = Buffer.concat(err).toString('utf8').trim().split('\n').slice(-5).join('\n');
      reject(new EvolutionError('scratch-git', `git ${subcommand} failed in the scratch clone (${signal ?? `exit ${code}`}): ${stderr}`));
    });
    child.stdin.on('error', () => undefined);
    child.stdin.end(options.input ?? '');
  });
}

