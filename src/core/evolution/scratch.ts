import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { isEvolutionError } from './errors';
import { repoPaths } from './paths';
import { checkScratchPath, cloneIntoScratch, fetchIntoScratch, scratchGit, type Scratch, type ScratchGitOptions } from './scratchGit';

/**
 * The scratch clone `<dataDir>/scratch/<repo-id>/`: cloned from the
 * workspace's path once, refreshed by fetch, and at the start of each run put
 * exactly at the workspace's HEAD commit — committed work only.
 */

/** The folder kept across runs while the lock file is unchanged. */
export const DEPENDENCY_DIR = 'node_modules';
const SETUP_STAMP = 'candor-setup.json';
const WORKSPACE_HEAD_REF = 'refs/candor/workspace-head';

export interface PreparedScratch {
  readonly scratch: Scratch;
  /** True when this run made the clone (first run, or the old one was unusable). */
  readonly cloned: boolean;
  /** True when the commit had to be fetched from the workspace. */
  readonly fetched: boolean;
}

export interface PrepareOptions extends ScratchGitOptions {
  readonly dataDir: string;
  /** The workspace repository's top level. */
  readonly workspaceRoot: string;
  /** The workspace's HEAD commit. */
  readonly head: string;
  /** `candor.evolution.setupCommand` ('' = what the lock file implies). */
  readonly setupCommand: string;
}

export async function prepareScratch(options: PrepareOptions): Promise<PreparedScratch> {
  const scratch: Scratch = { dataDir: options.dataDir, dir: repoPaths(options.dataDir, options.workspaceRoot).scratch };
  checkScratchPath(scratch);
  let cloned = false;
  if (!(await isUsableClone(scratch))) {
    await removeScratch(scratch);
    await cloneIntoScratch(scratch, options.workspaceRoot, options);
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
    await cloneIntoScratch(scratch, options.workspaceRoot, options);
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
  const keepDependencies = setupIsCurrent(dir, setupCommand);
  if (!keepDependencies) fs.rmSync(path.join(gitDir, SETUP_STAMP), { force: true });
  await scratchGit(scratch, keepDependencies ? ['clean', '-fdxq', '-e', DEPENDENCY_DIR] : ['clean', '-fdxq'], options);
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

/** True when the setup last run here is the one the checked-out files call for (or none is needed). */
export function setupIsCurrent(dir: string, setupCommand: string): boolean {
  const plan = setupPlan(dir, setupCommand);
  if (plan === undefined) return true;
  try {
    const stamp = JSON.parse(fs.readFileSync(path.join(dir, '.git', SETUP_STAMP), 'utf8')) as { stamp?: unknown };
    return stamp.stamp === plan.stamp;
  } catch {
    return false;
  }
}

export function writeSetupStamp(dir: string, plan: SetupPlan): void {
  fs.writeFileSync(path.join(dir, '.git', SETUP_STAMP), `${JSON.stringify({ stamp: plan.stamp, command: plan.command, lockFile: plan.lockFile ?? null })}\n`);
}

/** A clone whose git directory is damaged is caught by the first command and cloned afresh (see prepareScratch). */
async function isUsableClone(scratch: Scratch): Promise<boolean> {
  return fs.existsSync(path.join(scratch.dir, '.git', 'HEAD')) && fs.existsSync(path.join(scratch.dir, '.git', 'objects'));
}

/** Fetches the workspace's HEAD into the clone unless the commit is already there. */
async function bringCommit(scratch: Scratch, options: PrepareOptions): Promise<boolean> {
  if (await hasCommit(scratch, options.head, options)) return false;
  await fetchIntoScratch(scratch, options.workspaceRoot, [`+HEAD:${WORKSPACE_HEAD_REF}`], options);
  // HEAD moved between our read and the fetch: ask for the commit itself.
  if (!(await hasCommit(scratch, options.head, options))) await fetchIntoScratch(scratch, options.workspaceRoot, [options.head], options);
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
