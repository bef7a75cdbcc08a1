import * as fs from 'node:fs';
import * as path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { checkInvocation, isHandoffBranchName, type Invocation } from './allowList';
import { computeDirtyState, readOnlyReason, type DirtyState, type InProgress, type InProgressOperation } from './dirty';
import { GitGuardError, classifyGitFailure } from './errors';
import { parsePorcelainV2, type GitStatus } from './status';
import { noUnsavedBuffers, unsavedInWorktree, type UnsavedBufferSource } from './unsaved';
import { parseBranches, parseLog, parseTrailers, type BranchInfo, type CommitSummary, type Trailer } from './parse';

export interface GuardOptions {
  /** The git executable: a name looked up on PATH or an absolute path. Default `git`. */
  readonly gitBinary?: string;
  /** A git process silent for this long is killed. Default 120 s. */
  readonly timeoutMs?: number;
}

export interface AheadBehind {
  readonly branch: string;
  readonly upstream: string;
  readonly ahead: number;
  readonly behind: number;
}

export interface RepositoryOverview {
  readonly status: GitStatus;
  readonly inProgress: readonly InProgress[];
  readonly dirty: DirtyState;
}

export interface HandOffOptions {
  /** Unsaved editor buffers; any inside the repository refuse the hand-off. */
  readonly unsaved: UnsavedBufferSource;
}

export interface HandOffResult {
  readonly branch: string;
  readonly commit: string;
}

/**
 * Settings every call carries. `core.fsmonitor=false` keeps a repository's
 * configured monitor hook from running; `core.quotePath=false` keeps
 * non-ASCII paths readable in diffs.
 */
const CALL_CONFIG = ['core.fsmonitor=false', 'core.quotePath=false', 'color.ui=false'];

const IN_PROGRESS_MARKERS: ReadonlyArray<readonly [string, InProgressOperation]> = [
  ['MERGE_HEAD', 'merging'],
  ['rebase-merge', 'rebasing'],
  ['rebase-apply', 'rebasing'],
  ['CHERRY_PICK_HEAD', 'cherry-picking'],
  ['REVERT_HEAD', 'reverting'],
  ['BISECT_LOG', 'bisecting'],
];

const MAX_LOG = 10_000;

/**
 * The only way Candor reaches a workspace repository. Its methods read; the
 * one write is `takeBranch`, a ref-only fetch refused on a dirty workspace.
 * There is no raw or exec method: every call goes through `runGit`, which
 * checks the allow-list, and the simple-git instance never leaves this object.
 */
export class ReadOnlyGit {
  readonly #git: SimpleGit;

  private constructor(
    /** The work tree's top level, as git reports it (symlinks resolved). */
    readonly root: string,
    /** Absolute path of the git directory. */
    readonly gitDir: string,
    git: SimpleGit,
  ) {
    this.#git = git;
  }

  /** Opens the repository whose work tree contains `dir`. */
  static async open(dir: string, options: GuardOptions = {}): Promise<ReadOnlyGit> {
    const absolute = path.resolve(dir);
    if (!isDirectory(absolute)) {
      throw new GitGuardError('not-a-repo', `${absolute} is not a folder`);
    }
    const probe = makeGit(absolute, options);
    const out = await runGit(probe, absolute, { subcommand: 'rev-parse', args: ['--show-toplevel', '--absolute-git-dir'] });
    const [root, gitDir] = lines(out);
    if (root === undefined || gitDir === undefined || root === '') {
      throw new GitGuardError('not-a-repo', `${absolute} has no work tree`);
    }
    return new ReadOnlyGit(path.normalize(root), path.normalize(gitDir), makeGit(root, options));
  }

  async status(): Promise<GitStatus> {
    const out = await this.#run({
      subcommand: 'status',
      args: ['--porcelain=v2', '--branch', '-z', '--untracked-files=all', '--find-renames'],
    });
    return parsePorcelainV2(out);
  }

  /** Merges, rebases, cherry-picks, reverts, `am` sessions and bisects under way. */
  async inProgress(): Promise<InProgress[]> {
    const args = IN_PROGRESS_MARKERS.flatMap(([marker]) => ['--git-path', marker]);
    args.push('--git-path', 'rebase-apply/applying');
    const paths = lines(await this.#run({ subcommand: 'rev-parse', args }));
    const found: InProgress[] = [];
    const amMarker = paths[IN_PROGRESS_MARKERS.length];
    const am = amMarker !== undefined && fs.existsSync(path.resolve(this.root, amMarker));
    IN_PROGRESS_MARKERS.forEach(([, operation], index) => {
      const marker = paths[index];
      if (marker === undefined || !fs.existsSync(path.resolve(this.root, marker))) return;
      // `git am` keeps its state in rebase-apply too, with an `applying` marker.
      const kind = operation === 'rebasing' && marker.endsWith('rebase-apply') && am ? 'applying-mailbox' : operation;
      if (found.some((entry) => entry.operation === kind)) return;
      found.push({ operation: kind, marker: this.#display(marker) });
    });
    return found;
  }

  /** Work tree against the index (`diff-files -p`: never refreshes the index). */
  diffUnstaged(): Promise<string> {
    return this.#run({ subcommand: 'diff-files', args: ['-p', '--no-color', '--no-ext-diff'] });
  }

  /** Index against HEAD. */
  diffStaged(): Promise<string> {
    return this.#run({ subcommand: 'diff', args: ['--cached', '--no-color', '--no-ext-diff', '--no-textconv', '--find-renames'] });
  }

  /** The newest `count` commits reachable from HEAD; [] on an unborn branch. */
  async log(count: number): Promise<CommitSummary[]> {
    if (!Number.isInteger(count) || count < 1 || count > MAX_LOG) {
      throw new GitGuardError('invalid', `log count must be an integer from 1 to ${MAX_LOG}, got ${count}`);
    }
    if ((await this.headCommit()) === undefined) return [];
    const out = await this.#run({
      subcommand: 'log',
      args: ['-z', '--no-color', `--max-count=${count}`, '--format=%H%x1f%h%x1f%an%x1f%ae%x1f%aI%x1f%s', 'HEAD', '--'],
    });
    return parseLog(out);
  }

  /** `git show` of a revision: header, stat and patch. */
  async show(rev: string): Promise<string> {
    return this.#run({
      subcommand: 'show',
      args: ['--no-color', '--no-ext-diff', '--no-textconv', '--stat', '--patch', '--format=fuller', '--end-of-options', checkRev(rev), '--'],
    });
  }

  /** The object name `rev` resolves to, or undefined when it names nothing. */
  async revParse(rev: string): Promise<string | undefined> {
    const out = await this.#run({ subcommand: 'rev-parse', args: ['--verify', '--quiet', '--end-of-options', checkRev(rev)] });
    const hash = out.trim();
    return hash === '' ? undefined : hash;
  }

  /** Tracked paths, repository-relative. */
  async lsFiles(): Promise<string[]> {
    const out = await this.#run({ subcommand: 'ls-files', args: ['-z', '--cached'] });
    return out.split('\0').filter((entry) => entry !== '');
  }

  /** Of the given repository-relative paths, those git ignores (untracked and matched by an ignore rule). */
  async ignoredAmong(paths: readonly string[]): Promise<Set<string>> {
    const ignored = new Set<string>();
    for (let start = 0; start < paths.length; start += 200) {
      const batch = paths.slice(start, start + 200).map((p) => `:(literal)${p}`);
      const out = await this.#run({ subcommand: 'ls-files', args: ['-z', '--others', '--ignored', '--exclude-standard', '--', ...batch] });
      for (const entry of out.split('\0')) if (entry !== '') ignored.add(entry);
    }
    return ignored;
  }

  async branches(): Promise<BranchInfo[]> {
    const out = await this.#run({
      subcommand: 'for-each-ref',
      args: ['--format=%(refname:short)%00%(objectname)%00%(upstream:short)%00%(upstream:track)%00%(HEAD)', 'refs/heads'],
    });
    return parseBranches(out);
  }

  /** Ahead/behind of the current branch against its upstream; undefined when detached, without upstream, or upstream gone. */
  async aheadBehind(): Promise<AheadBehind | undefined> {
    const ref = (await this.#run({ subcommand: 'symbolic-ref', args: ['-q', 'HEAD'] })).trim();
    if (ref === '') return undefined;
    const [upstream = '', track = ''] = (await this.#run({
      subcommand: 'for-each-ref',
      args: ['--format=%(upstream)%00%(upstream:track)', '--end-of-options', ref],
    })).trim().split('\0');
    if (upstream === '' || track.includes('gone')) return undefined;
    if ((await this.headCommit()) === undefined) return undefined;
    const counts = (await this.#run({ subcommand: 'rev-list', args: ['--left-right', '--count', `${ref}...${upstream}`, '--'] })).trim();
    const [ahead, behind] = counts.split(/\s+/).map(Number);
    return {
      branch: ref.replace(/^refs\/heads\//, ''),
      upstream: upstream.replace(/^refs\/remotes\//, ''),
      ahead: ahead ?? 0,
      behind: behind ?? 0,
    };
  }

  /** The commit HEAD points at; undefined on an unborn branch. */
  headCommit(): Promise<string | undefined> {
    return this.revParse('HEAD^{commit}');
  }

  /** Trailers of the HEAD commit (`Candor-Rant: <id>` among them); [] on an unborn branch. */
  async topCommitTrailers(): Promise<Trailer[]> {
    if ((await this.headCommit()) === undefined) return [];
    const out = await this.#run({ subcommand: 'log', args: ['-1', '--no-color', '--format=%(trailers:only,unfold)', 'HEAD', '--'] });
    return parseTrailers(out);
  }

  /** design.md §2's dirty state: git's view of the disk plus the editor's unsaved buffers. */
  async dirtyState(unsaved: UnsavedBufferSource = noUnsavedBuffers): Promise<DirtyState> {
    return (await this.overview(unsaved)).dirty;
  }

  /** Status, operations in progress and the dirty state from one status run. */
  async overview(unsaved: UnsavedBufferSource = noUnsavedBuffers): Promise<RepositoryOverview> {
    const [status, inProgress] = await Promise.all([this.status(), this.inProgress()]);
    const inside = unsavedInWorktree(unsaved.unsavedFiles(), this.root, this.gitDir);
    // Decision: an unsaved buffer of a git-ignored file does not count, just
    // as the saved file would not (ignored files are never dirty on disk, and
    // no git write can touch them). Ignored is asked of git for files on disk;
    // a buffer whose file is not on disk counts (we cannot ask, so we refuse).
    const ignored = inside.length > 0 ? await this.ignoredAmong(inside) : new Set<string>();
    const dirty = computeDirtyState(status, inProgress, inside.filter((file) => !ignored.has(file)));
    return { status, inProgress, dirty };
  }

  /**
   * The one write: copy `refs/heads/<branch>` from the scratch clone at
   * `fromRepoPath` into a new local branch of the same name. Ref-only: no
   * checkout, HEAD, index and work tree untouched, no gc or maintenance.
   * Refused (`dirty`) unless the workspace is clean, (`exists`) when the
   * branch exists, (`invalid`) for a name outside `candor/…`.
   */
  async takeBranch(fromRepoPath: string, branch: string, options: HandOffOptions): Promise<HandOffResult> {
    if (!isHandoffBranchName(branch)) {
      throw new GitGuardError('invalid', `branch name ${JSON.stringify(branch)} is not candor/<lowercase letters, digits, - _ .>`);
    }
    if (!path.isAbsolute(fromRepoPath) || !isDirectory(fromRepoPath)) {
      throw new GitGuardError('invalid', `the scratch clone ${JSON.stringify(fromRepoPath)} is not an absolute path to a folder`);
    }
    const state = await this.dirtyState(options.unsaved);
    if (state.dirty) {
      throw new GitGuardError('dirty', `refused to take ${branch}: ${readOnlyReason(state) ?? 'dirty working tree'}`);
    }
    const ref = `refs/heads/${branch}`;
    if ((await this.revParse(ref)) !== undefined) {
      throw new GitGuardError('exists', `refused to take ${branch}: a local branch of that name exists`);
    }
    await this.#run({
      subcommand: 'fetch',
      config: ['gc.auto=0', 'maintenance.auto=false', 'fetch.writeCommitGraph=false'],
      args: ['--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', path.resolve(fromRepoPath), `${ref}:${ref}`],
    });
    const commit = await this.revParse(ref);
    if (commit === undefined) throw new GitGuardError('failed', `fetch reported success but ${branch} is missing`);
    return { branch, commit };
  }

  #run(invocation: Invocation): Promise<string> {
    return runGit(this.#git, this.root, invocation);
  }

  #display(marker: string): string {
    const absolute = path.resolve(this.root, marker);
    const relative = path.relative(this.root, absolute);
    return (relative.startsWith('..') ? absolute : relative).split(path.sep).join('/');
  }
}

export function openWorkspaceRepo(dir: string, options: GuardOptions = {}): Promise<ReadOnlyGit> {
  return ReadOnlyGit.open(dir, options);
}

/**
 * The one function that starts git. It checks the invocation against the
 * allow-list before anything runs; per-call config goes in front of the
 * subcommand as `-c key=value`.
 */
async function runGit(git: SimpleGit, where: string, invocation: Invocation): Promise<string> {
  checkInvocation(invocation);
  const configArgs = (invocation.config ?? []).flatMap((pair) => ['-c', pair]);
  try {
    return await git.raw([...configArgs, invocation.subcommand, ...invocation.args]);
  } catch (err) {
    throw classifyGitFailure(err, where);
  }
}

function makeGit(baseDir: string, options: GuardOptions): SimpleGit {
  return simpleGit({
    baseDir,
    binary: options.gitBinary ?? 'git',
    config: CALL_CONFIG,
    maxConcurrentProcesses: 4,
    timeout: { block: options.timeoutMs ?? 120_000 },
    // simple-git strips inherited GIT_* variables (so a stray GIT_DIR or
    // GIT_INDEX_FILE in the host cannot redirect us) and allows only these.
    allowEnvironment: ['GIT_OPTIONAL_LOCKS'],
    unsafe: {
      // We only ever set core.fsmonitor=false, which switches the hook off.
      allowUnsafeFsMonitor: true,
      // The binary comes from the host's settings, never from the model; a
      // path with spaces (Program Files) must work.
      allowUnsafeCustomBinary: options.gitBinary !== undefined,
    },
  }).env({
    ...inheritedEnv(),
    // Never take the index lock, never write a refreshed index back.
    GIT_OPTIONAL_LOCKS: '0',
    // Git's messages in English, so failures classify the same everywhere.
    LC_ALL: 'C',
  });
}

/**
 * The host's environment without the variables simple-git guards: GIT_*
 * (GIT_DIR, GIT_INDEX_FILE, … would redirect the guard) and the editor and
 * pager hooks. simple-git would refuse them if we passed them on.
 */
function inheritedEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    const lower = key.toLowerCase();
    if (lower.startsWith('git_') || GUARDED_ENV.has(lower)) continue;
    env[key] = value;
  }
  return env;
}

const GUARDED_ENV = new Set(['editor', 'visual', 'pager', 'prefix', 'ssh_askpass']);

function checkRev(rev: string): string {
  if (typeof rev !== 'string' || rev === '' || rev.length > 256 || rev.startsWith('-') || /[\0\n\r]/.test(rev)) {
    throw new GitGuardError('invalid', `not a revision: ${JSON.stringify(rev)}`);
  }
  return rev;
}

function lines(text: string): string[] {
  return text.split('\n').map((line) => line.replace(/\r$/, '')).filter((line) => line !== '');
}

function isDirectory(target: string): boolean {
  try {
    return fs.statSync(target).isDirectory();
  } catch {
    return false;
  }
}
