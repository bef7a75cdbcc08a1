import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isEvolutionError } from './errors';
import { DEPENDENCY_DIR, repoPaths } from './paths';
import { checkScratchPath, cloneIntoScratch, fetchIntoScratch, scratchGit, scratchGitBytes, SOURCE_TRACES, type Scratch, type ScratchGitOptions } from './scratchGit';

/**
 * The scratch clone `<dataDir>/scratch/<repo-id>/`: cloned from the agent
 * repository's path once, refreshed by fetch, and at the start of each run
 * put exactly at its HEAD commit — committed work only.
 */

export { DEPENDENCY_DIR };
const WORKSPACE_HEAD_REF = 'refs/candor/workspace-head';

export interface PreparedScratch {
  readonly scratch: Scratch;
  /** True when this run made the clone (first run, or the old one was unusable). */
  readonly cloned: boolean;
  /** True when the commit had to be fetched from the repository. */
  readonly fetched: boolean;
}

export interface PrepareOptions extends ScratchGitOptions {
  readonly dataDir: string;
  /** The agent repository's top level. */
  readonly repositoryRoot: string;
  /** Its HEAD commit. */
  readonly head: string;
  /** `candor.evolution.setupCommand` ('' = what the lock file implies). */
  readonly setupCommand: string;
}

export async function prepareScratch(options: PrepareOptions): Promise<PreparedScratch> {
  const scratch: Scratch = { dataDir: options.dataDir, dir: repoPaths(options.dataDir, options.repositoryRoot).scratch };
  checkScratchPath(scratch);
  let cloned = false;
  if (!(await isUsableClone(scratch))) {
    await removeScratch(scratch);
    await cloneIntoScratch(scratch, options.repositoryRoot, options);
    cloned = true;
  }
  try {
    const fetched = await bringCommit(scratch, options);
    await resetTo(scratch, options.head, options.setupCommand, options);
    return { scratch, cloned, fetched };
  } catch (err) {
    if (cloned || !isEvolutionError(err, 'scratch-git')) throw err;
    // A clone damaged by a killed run: start it over once.
    await removeScratch(scratch);
    await cloneIntoScratch(scratch, options.repositoryRoot, options);
    const fetched = await bringCommit(scratch, options);
    await resetTo(scratch, options.head, options.setupCommand, options);
    return { scratch, cloned: true, fetched };
  }
}

/**
 * Puts the clone at `commit`: forced detached checkout, hard reset, and a
 * clean of everything untracked and ignored except the dependency folder
 * while the setup stamp still matches. Also clears what a killed run may
 * have left: lock files and an unfinished revert.
 */
export async function resetTo(scratch: Scratch, commit: string, setupCommand: string, options: ScratchGitOptions = {}): Promise<void> {
  const dir = checkScratchPath(scratch);
  const gitDir = path.join(dir, '.git');
  for (const stale of ['index.lock', 'HEAD.lock', 'sequencer', 'REVERT_HEAD', 'CHERRY_PICK_HEAD', 'MERGE_HEAD']) {
    fs.rmSync(path.join(gitDir, stale), { recursive: true, force: true });
  }
  excludeDependencies(gitDir);
  await scratchGit(scratch, ['checkout', '--quiet', '--force', '--detach', commit], options);
  await scratchGit(scratch, ['reset', '--quiet', '--hard', commit], options);
  const stamp = setupStampFile(scratch);
  const keepDependencies = setupIsCurrent(dir, setupCommand, stamp);
  if (!keepDependencies) fs.rmSync(stamp, { force: true });
  // -ff: a repository the model's code nested in the clone goes too.
  await scratchGit(scratch, keepDependencies ? ['clean', '-ffdxq', '-e', DEPENDENCY_DIR] : ['clean', '-ffdxq'], options);
}

/**
 * `<dataDir>/scratch/<repo-id>.setup.json`: which setup filled the
 * dependency folder. Outside the clone, so code that runs in the clone can
 * neither read nor forge it.
 */
export function setupStampFile(scratch: Scratch): string {
  return `${checkScratchPath(scratch)}.setup.json`;
}

export interface SetupPlan {
  readonly command: string;
  /** sha256 of the lock file's name and bytes and the command. */
  readonly stamp: string;
  readonly lockFile?: string;
}

const IMPLIED_SETUP: ReadonlyArray<readonly [string, string]> = [
  ['package-lock.json', 'npm ci'],
  ['npm-shrinkwrap.json', 'npm ci'],
  ['yarn.lock', 'yarn install --frozen-lockfile'],
  ['pnpm-lock.yaml', 'pnpm install --frozen-lockfile'],
];

/** The setup the scratch clone needs: the configured command, or the lock file's implied install, or none. */
export function setupPlan(dir: string, setupCommand: string): SetupPlan | undefined {
  const lock = IMPLIED_SETUP.find(([file]) => fs.existsSync(path.join(dir, file)));
  const command = setupCommand.trim() !== '' ? setupCommand.trim() : lock?.[1];
  if (command === undefined) return undefined;
  const hash = createHash('sha256').update(command).update('\0');
  if (lock !== undefined) hash.update(lock[0]).update('\0').update(fs.readFileSync(path.join(dir, lock[0])));
  return lock !== undefined ? { command, stamp: hash.digest('hex'), lockFile: lock[0] } : { command, stamp: hash.digest('hex') };
}

/** True when the setup last run in `dir` (per `stampFile`) is the one the checked-out files call for (or none is needed). */
export function setupIsCurrent(dir: string, setupCommand: string, stampFile: string): boolean {
  const plan = setupPlan(dir, setupCommand);
  if (plan === undefined) return true;
  try {
    const stamp = JSON.parse(fs.readFileSync(stampFile, 'utf8')) as { stamp?: unknown };
    return stamp.stamp === plan.stamp;
  } catch {
    return false;
  }
}

export function writeSetupStamp(stampFile: string, plan: SetupPlan): void {
  fs.writeFileSync(stampFile, `${JSON.stringify({ stamp: plan.stamp, command: plan.command, lockFile: plan.lockFile ?? null })}\n`);
}

/**
 * The files that decide what setup downloads and runs: the manifest, the
 * lock files, and the package managers' own settings (an `.npmrc` can name
 * another registry or a script shell).
 */
export const SETUP_INPUTS = ['package.json', 'package-lock.json', 'npm-shrinkwrap.json', 'yarn.lock', 'pnpm-lock.yaml', 'pnpm-workspace.yaml', '.npmrc', '.yarnrc', '.yarnrc.yml'] as const;

/**
 * True when every setup input in the clone is byte for byte what `base`
 * holds (present in both with the same bytes, or absent from both): only
 * then may setup reach the network. A change that alters them runs its setup
 * without network.
 */
export async function setupInputsMatch(scratch: Scratch, base: string, options: ScratchGitOptions = {}): Promise<boolean> {
  const dir = checkScratchPath(scratch);
  // One ls-tree says which inputs HEAD holds; only those are read back.
  const listed = await scratchGit(scratch, ['ls-tree', '-z', '--full-name', base, '--', ...SETUP_INPUTS], options);
  const blobs = new Map<string, string>();
  for (const entry of listed.split('\0')) {
    const match = /^\d+ blob ([0-9a-f]+)\t(.+)$/.exec(entry);
    if (match?.[1] !== undefined && match[2] !== undefined) blobs.set(match[2], match[1]);
  }
  for (const name of SETUP_INPUTS) {
    const working = readOrUndefined(path.join(dir, name));
    const blob = blobs.get(name);
    if (working === undefined && blob === undefined) continue;
    if (working === undefined || working === null || blob === undefined) return false;
    if (!working.equals(await scratchGitBytes(scratch, ['cat-file', 'blob', blob], options))) return false;
  }
  return true;
}

/** The file's bytes; undefined when absent; null when it is not a plain file (a symlink planted in place of the manifest never matches). */
function readOrUndefined(file: string): Buffer | undefined | null {
  try {
    return fs.lstatSync(file).isFile() ? fs.readFileSync(file) : null;
  } catch {
    return undefined;
  }
}

/**
 * A clone Candor can keep using: its git directory is there, and nothing in
 * it names the source (a clone made before `--no-hardlinks` had a reflog:
 * it is made afresh, objects copied). A clone damaged otherwise is caught by
 * the first command and cloned afresh (see prepareScratch).
 */
async function isUsableClone(scratch: Scratch): Promise<boolean> {
  const gitDir = path.join(scratch.dir, '.git');
  return fs.existsSync(path.join(gitDir, 'HEAD')) && fs.existsSync(path.join(gitDir, 'objects')) && !SOURCE_TRACES.some((name) => fs.existsSync(path.join(gitDir, name)));
}

/** Fetches the repository's HEAD into the clone unless the commit is already there. */
async function bringCommit(scratch: Scratch, options: PrepareOptions): Promise<boolean> {
  if (await hasCommit(scratch, options.head, options)) return false;
  await fetchIntoScratch(scratch, options.repositoryRoot, [`+HEAD:${WORKSPACE_HEAD_REF}`], options);
  // HEAD moved between our read and the fetch: ask for the commit itself.
  if (!(await hasCommit(scratch, options.head, options))) await fetchIntoScratch(scratch, options.repositoryRoot, [options.head], options);
  return true;
}

async function hasCommit(scratch: Scratch, commit: string, options: ScratchGitOptions): Promise<boolean> {
  try {
    await scratchGit(scratch, ['cat-file', '-e', `${commit}^{commit}`], options);
    return true;
  } catch {
    return false;
  }
}

/** Dependencies installed by setup are never part of a change. */
function excludeDependencies(gitDir: string): void {
  const file = path.join(gitDir, 'info', 'exclude');
  const line = `${DEPENDENCY_DIR}/`;
  let text = '';
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    fs.mkdirSync(path.dirname(file), { recursive: true });
  }
  if (!text.split('\n').includes(line)) fs.writeFileSync(file, `${text}${text === '' || text.endsWith('\n') ? '' : '\n'}# Candor: dependencies installed in the scratch clone\n${line}\n`);
}

async function removeScratch(scratch: Scratch): Promise<void> {
  const dir = checkScratchPath(scratch);
  await fs.promises.rm(dir, { recursive: true, force: true });
}
