import * as fs from 'node:fs';
import * as path from 'node:path';
import { simpleGit, type SimpleGit } from 'simple-git';
import { chooseBinary } from './binary';
import { checkInvocation, type Invocation } from './allowList';
import { computeDirtyState, type DirtyState, type InProgress, type InProgressOperation } from './dirty';
import { GitGuardError, classifyGitFailure } from './errors';
import { CALL_CONFIG, GLOBAL_OPTIONS, GUARD_GIT_ENV, gitEnvironment, transportFor, type Transport } from './hostileConfig';
import { ceilingFor, explainNotARepo, samePath, type ParentFolderRule } from './parents';
import { isInside, realOrResolved } from '../realPath';
import { FILE_LISTS, checkRev, isDirectory, lines, type FileList } from './guardInputs';
import { parsePorcelainV2, type GitStatus } from './status';
import { noUnsavedBuffers, unsavedInWorktree, type UnsavedBufferSource } from './unsaved';
import { parseHistory, parseLog, parseTrailers, type CommitSummary, type HistoryEntry, type Trailer } from './parse';
import { pushBranch, pushRedirects, remoteUrl, takeBranch, type GuardedRepository, type HandOffOptions, type HandOffResult, type HooksOption, type PushResult } from './shapedWrites';
export type { HandOffOptions, HandOffResult, HooksOption, PushResult } from './shapedWrites';
export type { FileList } from './guardInputs';

export interface GuardOptions {
  /**
   * The git executable, as an absolute path. Default: git found on PATH once
   * (src/core/process/gitBinary.ts), never inside the folder being opened or
   * `untrustedRoots`.
   */
  readonly gitBinary?: string;
  /** A git process silent for this long is killed. Default 120 s. */
  readonly timeoutMs?: number;
  /**
   * Values no git process may see in its environment (the key from
   * SecretStorage). `OPENAI_API_KEY` and `CANDOR_*` are always removed.
   * Read when the repository is opened.
   */
  readonly secrets?: readonly string[];
  /**
   * `never` (default): a folder without a repository of its own is not a
   * repository, even inside one. `always`: the repository above is used.
   * Mirrors `candor.git.openRepositoryInParentFolders`.
   */
  readonly openRepositoryInParentFolders?: ParentFolderRule;
  /** More folders whose contents never provide git (the other workspace folders). */
  readonly untrustedRoots?: readonly string[];
}

export interface RepositoryOverview {
  readonly status: GitStatus;
  readonly inProgress: readonly InProgress[];
  readonly dirty: DirtyState;
}

/** How one repository's git processes are started. */
interface GitSettings {
  readonly binary: string;
  readonly timeoutMs: number;
  readonly secrets: readonly string[];
}

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
 * two writes are `takeBranch`, a ref-only fetch refused on a dirty
 * workspace, and `pushBranch`, the push of one evolution branch, each in one
 * shape (shapedWrites.ts). There is no raw or exec method: every call goes
 * through `runGit`, which checks the allow-list, and the simple-git instance
 * never leaves this object.
 */
export class ReadOnlyGit {
  readonly #git: SimpleGit;
  readonly #settings: GitSettings;

  private constructor(
    /** The work tree's top level, as git reports it (symlinks resolved). */
    readonly root: string,
    /** Absolute path of the git directory. */
    readonly gitDir: string,
    settings: GitSettings,
  ) {
    this.#settings = settings;
    this.#git = makeGit(root, settings, { ceiling: ceilingFor(root, 'never') });
  }

  /**
   * Opens the repository of the folder `dir`: its own, or with
   * `openRepositoryInParentFolders: 'always'` the one it lies in.
   */
  static async open(dir: string, options: GuardOptions = {}): Promise<ReadOnlyGit> {
    const absolute = path.resolve(dir);
    if (!isDirectory(absolute)) {
      throw new GitGuardError('not-a-repo', `${absolute} is not a folder`);
    }
    const folder = realOrResolved(absolute);
    const rule = options.openRepositoryInParentFolders ?? 'never';
    const untrusted = [absolute, folder, ...(options.untrustedRoots ?? [])];
    const settings: GitSettings = {
      binary: chooseBinary(options.gitBinary, untrusted),
      timeoutMs: options.timeoutMs ?? 120_000,
      secrets: options.secrets ?? [],
    };
    const probe = makeGit(folder, settings, { ceiling: ceilingFor(folder, rule) });
    let out: string;
    try {
      out = await runGit(probe, absolute, { subcommand: 'rev-parse', args: ['--show-toplevel', '--absolute-git-dir'] });
    } catch (err) {
      throw explainNotARepo(err, absolute, rule);
    }
    const [top, gitDir] = lines(out);
    if (top === undefined || gitDir === undefined || top === '') {
      throw new GitGuardError('not-a-repo', `${absolute} has no work tree`);
    }
    const root = path.normalize(top);
    // `core.worktree` can aim the work tree anywhere (a home folder, say):
    // the work tree must be the folder itself, or contain it when parent
    // repositories are allowed.
    if (rule === 'never' ? !samePath(root, folder) : !isInside(realOrResolved(root), folder)) {
      throw new GitGuardError('not-a-repo', `${absolute}: git's work tree for it is ${root}, which ${rule === 'never' ? 'is not this folder' : 'does not contain it'} (core.worktree?)`);
    }
    const binary = samePath(root, folder) || options.gitBinary !== undefined ? settings.binary : chooseBinary(options.gitBinary, [...untrusted, root]);
    return new ReadOnlyGit(root, path.normalize(gitDir), { ...settings, binary });
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
    return this.#run({ subcommand: 'diff-files', args: ['-p', '--no-color', '--no-ext-diff', '--no-textconv'] });
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

  /**
   * The newest `count` commits reachable from `rev`, each before its
   * parents (`--topo-order`), with its parents and whole message; [] when
   * `rev` names no commit (an unborn branch).
   */
  async history(rev: string, count: number): Promise<HistoryEntry[]> {
    if (!Number.isInteger(count) || count < 1 || count > MAX_LOG) {
      throw new GitGuardError('invalid', `history count must be an integer from 1 to ${MAX_LOG}, got ${count}`);
    }
    if ((await this.revParse(`${checkRev(rev)}^{commit}`)) === undefined) return [];
    const out = await this.#run({
      subcommand: 'log',
      args: ['-z', '--topo-order', '--no-color', '--no-decorate', `--max-count=${count}`, '--format=%H%x1f%P%x1f%B', '--end-of-options', rev, '--'],
    });
    return parseHistory(out);
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

  /**
   * One of the file lists a copy of the work tree is made from
   * (src/core/commands/view), as its NUL-separated records: `work`, each
   * tracked file as `<mode> <blob> <stage>\t<path>` and each untracked one not
   * ignored as `<path>`; `ignored`, what git ignores, a wholly ignored folder
   * as `<path>/`; `staged`, HEAD against the index as raw diff records.
   */
  async listFiles(which: FileList): Promise<string[]> {
    return (await this.#run(FILE_LISTS[which])).split('\0').filter((record) => record !== '');
  }

  /** The exact bytes of one blob, named by its full object name (`show <oid>^{blob}`, no conversion). */
  blob(oid: string): Promise<Buffer> {
    if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(oid)) return Promise.reject(new GitGuardError('invalid', `not an object name: ${JSON.stringify(oid)}`));
    return runGit(this.#git, this.root, { subcommand: 'show', args: ['--no-textconv', '--no-ext-diff', '--no-color', `${oid}^{blob}`] }, 'bytes');
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

  /** The dirty state (docs/architecture.md, "Git"): git's view of the disk plus the editor's unsaved buffers. */
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

  /** The hand-off (shapedWrites.ts): `refs/heads/<branch>` of the scratch clone at `fromRepoPath`, fetched ref-only into a new local branch. */
  takeBranch(fromRepoPath: string, branch: string, options: HandOffOptions): Promise<HandOffResult> {
    return takeBranch(this.#guarded(), fromRepoPath, branch, options);
  }

  /** The push (shapedWrites.ts): `refs/heads/<branch>` to the same name on `remote`, no tags, no hooks, never forced. */
  pushBranch(remote: string, branch: string, options: HooksOption = {}): Promise<PushResult> {
    return pushBranch(this.#guarded(), remote, branch, options);
  }

  /** Where a configured remote points, `insteadOf` rules expanded; never connects. */
  remoteUrl(remote: string): Promise<string> {
    return remoteUrl(this.#guarded(), remote);
  }

  /** The config names that send `remote`'s pushes elsewhere than `remoteUrl` (a `pushurl`, `pushInsteadOf` rules). */
  pushRedirects(remote: string): Promise<string[]> {
    return pushRedirects(this.#guarded(), remote);
  }

  #guarded(): GuardedRepository {
    return { root: this.root, run: (invocation) => this.#run(invocation), dirtyState: (unsaved) => this.dirtyState(unsaved), revParse: (rev) => this.revParse(rev) };
  }

  /** Reads through the one instance made at open; the fetch and the push each get a process whose environment allows their transport. */
  #run(invocation: Invocation): Promise<string> {
    const transport = transportFor(invocation.subcommand);
    const git = transport === 'none' ? this.#git : makeGit(this.root, this.#settings, { ceiling: ceilingFor(this.root, 'never'), transport });
    return runGit(git, this.root, invocation);
  }

  #display(marker: string): string {
    const absolute = path.resolve(this.root, marker);
    return (isInside(this.root, absolute) ? path.relative(this.root, absolute) : absolute).split(path.sep).join('/');
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
function runGit(git: SimpleGit, where: string, invocation: Invocation): Promise<string>;
function runGit(git: SimpleGit, where: string, invocation: Invocation, output: 'bytes'): Promise<Buffer>;
async function runGit(git: SimpleGit, where: string, invocation: Invocation, output: 'text' | 'bytes' = 'text'): Promise<string | Buffer> {
  checkInvocation(invocation);
  const configArgs = (invocation.config ?? []).flatMap((pair) => ['-c', pair]);
  try {
    // Bytes only for a blob's content: simple-git's raw decodes as UTF-8, which would change a binary file.
    if (output === 'bytes' && invocation.subcommand === 'show') return await git.showBuffer([...invocation.args]);
    return await git.raw([...GLOBAL_OPTIONS, ...configArgs, invocation.subcommand, ...invocation.args]);
  } catch (err) {
    throw classifyGitFailure(err, where);
  }
}

function makeGit(baseDir: string, settings: GitSettings, call: { ceiling: string | undefined; transport?: Transport }): SimpleGit {
  return simpleGit({
    baseDir,
    binary: settings.binary,
    config: [...CALL_CONFIG],
    maxConcurrentProcesses: 4,
    timeout: { block: settings.timeoutMs },
    // simple-git strips inherited GIT_* variables (so a stray GIT_DIR or
    // GIT_INDEX_FILE in the host cannot redirect us) and allows only the guard's own.
    allowEnvironment: [...GUARD_GIT_ENV],
    unsafe: {
      // Each of these is a value the guard sets to switch a program off
      // (hostileConfig.ts): core.fsmonitor=false, core.hooksPath=<empty
      // folder>, credential.helper= and GIT_ASKPASS= (empty).
      allowUnsafeFsMonitor: true,
      allowUnsafeHooksPath: true,
      allowUnsafeCredentialHelper: true,
      allowUnsafeAskPass: true,
      // An absolute path chosen by Candor, never by the model; it may hold
      // spaces (Program Files).
      allowUnsafeCustomBinary: true,
    },
  }).env(gitEnvironment({ secrets: settings.secrets, ceiling: call.ceiling, transport: call.transport }));
}
