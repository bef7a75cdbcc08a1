import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { hashBounded, isUnsafeFile, readBounded } from '../boundedRead';
import { EvolutionError, isEvolutionError } from './errors';
import { isKindError } from '../kindError';
import { RemovalError, removeTree } from '../process/removeTree';
import { clearToTree, restoreGitlinkFolders } from './cleanTree';
import { removeNestedRepositories } from './nestedRepos';
import { filterRefusal, listTree, type TreeListing } from './treeListing';
import { discardStaging } from './measure';
import { DEPENDENCY_DIR } from '../sandbox/dependencies';
import { repoPaths } from './paths';
import { checkScratchPath, cloneIntoScratch, fetchIntoScratch, scratchGit, SOURCE_TRACES, type Scratch, type ScratchGitOptions } from './scratchGit';

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
  /** The commit's submodule folders, left empty: Candor never populates submodules in the clone. */
  readonly gitlinks: readonly string[];
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

/**
 * The clone at the repository's HEAD, clean. A clone that is unusable, or
 * that cannot be reset, is renamed aside (removed in the background) and
 * made afresh, so one broken clone never breaks the next run. A HEAD whose
 * `.gitattributes` names a filter is refused (`refused`, see filterRefusal).
 */
export async function prepareScratch(options: PrepareOptions): Promise<PreparedScratch> {
  const scratch: Scratch = { dataDir: options.dataDir, dir: repoPaths(options.dataDir, options.repositoryRoot).scratch };
  checkScratchPath(scratch);
  removeAsides(scratch);
  let cloned = false;
  if (!(await isUsableClone(scratch))) {
    await setAside(scratch);
    await cloneIntoScratch(scratch, options.repositoryRoot, options);
    cloned = true;
  }
  try {
    return { scratch, cloned, ...(await bringToHead(scratch, options)) };
  } catch (err) {
    if (cloned || !mayReclone(err)) throw err;
    // A clone damaged by a killed run, or one that cannot be reset: start it over once.
    await setAside(scratch);
    await cloneIntoScratch(scratch, options.repositoryRoot, options);
    return { scratch, cloned: true, ...(await bringToHead(scratch, options)) };
  }
}

async function bringToHead(scratch: Scratch, options: PrepareOptions): Promise<{ fetched: boolean; gitlinks: readonly string[] }> {
  // Before any git: the clone holds whatever the last run's commands left in it.
  await removeNestedRepositories(scratch);
  const fetched = await bringCommit(scratch, options);
  const listing = await listTree(scratch, options.head, options);
  const refusal = await filterRefusal(scratch, listing, options);
  if (refusal !== undefined) throw new EvolutionError('refused', refusal);
  await resetScrubbed(scratch, options.head, listing, options.setupCommand, options);
  return { fetched, gitlinks: listing.gitlinks };
}

/** Git failed, a file could not be read safely or removed, or the file system refused: a fresh clone may fix it; a cancel may not be undone. */
function mayReclone(err: unknown): boolean {
  if (isEvolutionError(err)) return err.kind === 'scratch-git';
  return isUnsafeFile(err) || isKindError(err, RemovalError) || typeof (err as NodeJS.ErrnoException | undefined)?.code === 'string';
}

/**
 * Puts the clone at `commit`, a clean start (docs/architecture.md,
 * "Evolution"). Before any git, every `.git` below the top goes
 * (nestedRepos.ts), then everything the commit does not hold, at any depth
 * and of any kind, ignored files included, and every submodule folder's
 * contents (cleanTree.ts); then a forced detached checkout and a hard reset
 * restore what it holds. The one exception is the dependency folder, kept
 * only when setup itself filled it for the very setup inputs the clean
 * checkout now holds (see dependenciesReusable); with no lock file it always
 * goes. Also clears what a killed run may have left: lock files, an
 * unfinished revert, a staged change. Files are read only after the clean,
 * and only with bounds.
 */
export async function resetTo(scratch: Scratch, commit: string, setupCommand: string, options: ScratchGitOptions = {}): Promise<void> {
  await removeNestedRepositories(scratch);
  await resetScrubbed(scratch, commit, await listTree(scratch, commit, options), setupCommand, options);
}

/** resetTo once the nested `.git` entries are gone and the commit's tree is listed (a run's start does both first). */
async function resetScrubbed(scratch: Scratch, commit: string, listing: TreeListing, setupCommand: string, options: ScratchGitOptions): Promise<void> {
  const dir = checkScratchPath(scratch);
  const gitDir = path.join(dir, '.git');
  for (const stale of ['index.lock', 'HEAD.lock', 'sequencer', 'REVERT_HEAD', 'CHERRY_PICK_HEAD', 'MERGE_HEAD']) {
    await fs.promises.rm(path.join(gitDir, stale), { recursive: true, force: true });
  }
  await discardStaging(scratch);
  excludeDependencies(gitDir);
  await clearToTree(dir, listing, DEPENDENCY_DIR);
  await scratchGit(scratch, ['checkout', '--quiet', '--force', '--detach', commit], options);
  await scratchGit(scratch, ['reset', '--quiet', '--hard', commit], options);
  await restoreGitlinkFolders(dir, listing);
  if (!listing.folders.has(DEPENDENCY_DIR) && !(await dependenciesReusable(scratch, setupCommand))) {
    await fs.promises.rm(setupStampFile(scratch), { force: true });
    await removeTree(path.join(dir, DEPENDENCY_DIR));
  }
}

/**
 * The dependency folder may stay only when all of these hold: the clean
 * checkout has a lock file; the folder is a real folder; and the setup stamp
 * says setup filled it for exactly these setup inputs, on a clone that held
 * no change of the model's (`reusable`, see writeSetupStamp).
 */
async function dependenciesReusable(scratch: Scratch, setupCommand: string): Promise<boolean> {
  const plan = await setupPlan(scratch.dir, setupCommand);
  if (plan?.lockFile === undefined) return false;
  const deps = await fs.promises.lstat(path.join(scratch.dir, DEPENDENCY_DIR)).catch(() => undefined);
  if (deps?.isDirectory() !== true) return false;
  const stamp = await readStamp(setupStampFile(scratch));
  return stamp?.stamp === plan.stamp && stamp.reusable === true;
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
  /** sha256 of the command and of every setup input present (its name and bytes). */
  readonly stamp: string;
  readonly lockFile?: string;
}

const IMPLIED_SETUP: ReadonlyArray<readonly [string, string]> = [
  ['package-lock.json', 'npm ci'],
  ['npm-shrinkwrap.json', 'npm ci'],
  ['yarn.lock', 'yarn install --frozen-lockfile'],
  ['pnpm-lock.yaml', 'pnpm install --frozen-lockfile'],
];

/** The most Candor reads of one setup input (a large lock file is a few MiB). */
export const SETUP_INPUT_MAX_BYTES = 32 * 1024 * 1024;

/**
 * The setup the scratch clone needs: the configured command, or the lock
 * file's implied install, or none. Each setup input is read with bounds
 * (boundedRead.ts): one that is a symlink, a FIFO, a folder, a device or
 * too large throws `UnsafeFileError` naming it, and the run ends there.
 */
export async function setupPlan(dir: string, setupCommand: string): Promise<SetupPlan | undefined> {
  const inputs = await setupInputDigests(dir);
  const lock = IMPLIED_SETUP.find(([file]) => inputs.has(file));
  const command = setupCommand.trim() !== '' ? setupCommand.trim() : lock?.[1];
  if (command === undefined) return undefined;
  const hash = createHash('sha256').update(command).update('\0');
  for (const [name, digest] of inputs) hash.update(name).update('\0').update(digest).update('\0');
  return lock !== undefined ? { command, stamp: hash.digest('hex'), lockFile: lock[0] } : { command, stamp: hash.digest('hex') };
}

/** sha256 of each setup input present, read with bounds; a symlink, FIFO, folder or device in place of one throws `UnsafeFileError`. */
async function setupInputDigests(dir: string): Promise<Map<string, string>> {
  const digests = new Map<string, string>();
  for (const name of SETUP_INPUTS) {
    const hash = createHash('sha256');
    if ((await hashBounded(path.join(dir, name), SETUP_INPUT_MAX_BYTES, hash, `${name} in the scratch clone`)) !== undefined) digests.set(name, hash.digest('hex'));
  }
  return digests;
}

/** True when the setup last run in `dir` (per `stampFile`) is the one the files there call for (or none is needed). */
export async function setupIsCurrent(dir: string, setupCommand: string, stampFile: string): Promise<boolean> {
  const plan = await setupPlan(dir, setupCommand);
  if (plan === undefined) return true;
  return (await readStamp(stampFile))?.stamp === plan.stamp;
}

interface SetupStamp {
  readonly stamp: string;
  /** True when setup ran on a clone that held no change (git status clean): only then is its folder kept for a later run. */
  readonly reusable: boolean;
}

async function readStamp(stampFile: string): Promise<SetupStamp | undefined> {
  try {
    const parsed = JSON.parse((await readBounded(stampFile, 64 * 1024))?.toString('utf8') ?? 'null') as { stamp?: unknown; reusable?: unknown } | null;
    return typeof parsed?.stamp === 'string' ? { stamp: parsed.stamp, reusable: parsed.reusable === true } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Records that `plan`'s setup passed. Its dependency folder is `reusable`
 * by a later run only when the clone, setup's own ignored output aside,
 * holds nothing but its commit: setup that ran on the model's change (its
 * manifest, or a script the manifest runs) filled the folder with what that
 * change chose, and the next run must not inherit it.
 */
export async function writeSetupStamp(scratch: Scratch, plan: SetupPlan, options: ScratchGitOptions = {}): Promise<void> {
  const status = await scratchGit(scratch, ['status', '--porcelain=v1', '-z', '--untracked-files=all', '--ignore-submodules=all'], options);
  const reusable = plan.lockFile !== undefined && status.split('\0').every((entry) => entry === '');
  await fs.promises.writeFile(setupStampFile(scratch), `${JSON.stringify({ stamp: plan.stamp, command: plan.command, lockFile: plan.lockFile ?? null, reusable })}\n`);
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
 * without network. The clone's file is compared by its git blob id, hashed
 * through a bounded read; anything but a plain file never matches.
 */
export async function setupInputsMatch(scratch: Scratch, base: string, options: ScratchGitOptions = {}): Promise<boolean> {
  const dir = checkScratchPath(scratch);
  // One ls-tree says which inputs HEAD holds, with their blob ids.
  const listed = await scratchGit(scratch, ['ls-tree', '-z', '--full-name', base, '--', ...SETUP_INPUTS], options);
  const blobs = new Map<string, { readonly mode: string; readonly id: string }>();
  for (const entry of listed.split('\0')) {
    const match = /^(\d+) blob ([0-9a-f]+)\t(.+)$/.exec(entry);
    if (match?.[1] !== undefined && match[2] !== undefined && match[3] !== undefined) blobs.set(match[3], { mode: match[1], id: match[2] });
  }
  for (const name of SETUP_INPUTS) {
    const file = path.join(dir, name);
    const stat = await fs.promises.lstat(file).catch(() => undefined);
    const blob = blobs.get(name);
    if (stat === undefined && blob === undefined) continue;
    if (stat === undefined || blob === undefined || !stat.isFile() || blob.mode === '120000') return false;
    if ((await blobId(file, blob.id.length === 64 ? 'sha256' : 'sha1', `${name} in the scratch clone`)) !== blob.id) return false;
  }
  return true;
}

/** Git's id of the file's bytes as a blob (`<algorithm>("blob <size>\0" + bytes)`), read with bounds. */
async function blobId(file: string, algorithm: 'sha1' | 'sha256', label: string): Promise<string | undefined> {
  const hash = createHash(algorithm);
  try {
    const read = await hashBounded(file, SETUP_INPUT_MAX_BYTES, hash, label, (size) => `blob ${size}\0`);
    return read === undefined ? undefined : hash.digest('hex');
  } catch (err) {
    if (isUnsafeFile(err)) return undefined;
    throw err;
  }
}

/**
 * A clone Candor can keep using: its git directory is a real folder (not a
 * gitfile or a link, which would aim git elsewhere) with HEAD and objects,
 * and nothing in it names the source (a clone made before `--no-hardlinks`
 * had a reflog: it is made afresh, objects copied). A clone damaged
 * otherwise is caught by the first command and set aside (see
 * prepareScratch).
 */
async function isUsableClone(scratch: Scratch): Promise<boolean> {
  const gitDir = path.join(scratch.dir, '.git');
  if ((await fs.promises.lstat(gitDir).catch(() => undefined))?.isDirectory() !== true) return false;
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

/** Removals of set-aside clones still under way in this process. */
const removing = new Set<string>();

/**
 * The clone out of the way at once, and with it what described it (the
 * setup stamp, a staged change): renamed to `<repo-id>.aside-<pid>-<random>`
 * beside it, and removed in the background, at any depth. A clone that
 * cannot even be renamed is removed in place.
 */
async function setAside(scratch: Scratch): Promise<void> {
  const dir = checkScratchPath(scratch);
  if ((await fs.promises.lstat(dir).catch(() => undefined)) !== undefined) {
    const aside = `${dir}${ASIDE}${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      await fs.promises.rename(dir, aside);
      removeInBackground(aside);
    } catch {
      await removeTree(dir);
    }
  }
  await fs.promises.rm(setupStampFile(scratch), { force: true });
  await discardStaging(scratch);
}

const ASIDE = '.aside-';

/** Clones of this repository set aside by earlier runs (whose background removal did not finish), removed in the background. */
function removeAsides(scratch: Scratch): void {
  const dir = checkScratchPath(scratch);
  const prefix = `${path.basename(dir)}${ASIDE}`;
  let names: string[] = [];
  try {
    names = fs.readdirSync(path.dirname(dir)).filter((name) => name.startsWith(prefix));
  } catch {
    return;
  }
  for (const name of names) removeInBackground(path.join(path.dirname(dir), name));
}

function removeInBackground(aside: string): void {
  if (removing.has(aside)) return;
  removing.add(aside);
  void removeTree(aside)
    .catch(() => undefined)
    .finally(() => removing.delete(aside));
}
