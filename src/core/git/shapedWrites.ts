import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FETCH_CONFIG, PUSH_CONFIG, PUSH_FLAGS, isHandoffBranchName, isRemoteName, type Invocation } from './allowList';
import { readOnlyReason, type DirtyState } from './dirty';
import { GitGuardError, isGitGuardError } from './errors';
import type { UnsavedBufferSource } from './unsaved';

/**
 * The guard's two writes, each in its one shape (docs/architecture.md,
 * "Git"): the hand-off, a ref-only fetch from the scratch clone, and the push
 * of one evolution branch to a remote the repository configures. Neither
 * starts git itself: each hands its invocation to the guard's `run`, which
 * checks it against the allow-list and gives it the environment its
 * subcommand allows (guard.ts).
 */

/** What of the guard a shaped write uses: its reads, and the one door to git. */
export interface GuardedRepository {
  /** The work tree's top level. */
  readonly root: string;
  /** Runs one invocation after the allow-list check (guard.ts, `runGit`). */
  run(invocation: Invocation): Promise<string>;
  dirtyState(unsaved: UnsavedBufferSource): Promise<DirtyState>;
  revParse(rev: string): Promise<string | undefined>;
}

export interface HooksOption {
  /**
   * An empty folder Candor owns, given to git as `core.hooksPath` so that
   * none of the repository's hooks runs. Default: a fresh temp folder,
   * removed afterwards.
   */
  readonly emptyHooksDir?: string;
}

export interface HandOffOptions extends HooksOption {
  /** Unsaved editor buffers; any inside the repository refuse the hand-off. */
  readonly unsaved: UnsavedBufferSource;
}

export interface HandOffResult {
  readonly branch: string;
  readonly commit: string;
}

export interface PushResult {
  readonly remote: string;
  readonly branch: string;
  /** The commit the remote's branch now points at. */
  readonly commit: string;
}

/**
 * Copies `refs/heads/<branch>` from the scratch clone at `fromRepoPath` into
 * a new local branch of the same name. Ref-only: no checkout, HEAD, index
 * and work tree untouched, no gc or maintenance. Refused (`dirty`) unless
 * the workspace is clean, (`exists`) when the branch exists, (`invalid`) for
 * a name outside `candor/…`.
 */
export async function takeBranch(repo: GuardedRepository, fromRepoPath: string, branch: string, options: HandOffOptions): Promise<HandOffResult> {
  checkBranchName(branch);
  if (!path.isAbsolute(fromRepoPath) || !isDirectory(fromRepoPath)) {
    throw new GitGuardError('invalid', `the scratch clone ${JSON.stringify(fromRepoPath)} is not an absolute path to a folder`);
  }
  const state = await repo.dirtyState(options.unsaved);
  if (state.dirty) {
    throw new GitGuardError('dirty', `refused to take ${branch}: ${readOnlyReason(state) ?? 'dirty working tree'}`);
  }
  const ref = `refs/heads/${branch}`;
  if ((await repo.revParse(ref)) !== undefined) {
    throw new GitGuardError('exists', `refused to take ${branch}: a local branch of that name exists`);
  }
  const source = path.resolve(fromRepoPath);
  await refuseRedirectedSource(repo, source);
  await withEmptyHooks(options, (hooks) =>
    repo.run({
      subcommand: 'fetch',
      config: [...FETCH_CONFIG, `core.hooksPath=${hooks}`],
      args: ['--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', source, `${ref}:${ref}`],
    }),
  );
  const commit = await repo.revParse(ref);
  if (commit === undefined) throw new GitGuardError('failed', `fetch reported success but ${branch} is missing`);
  return { branch, commit };
}

/**
 * Pushes the local `refs/heads/<branch>` to the same name on `remote`: no
 * tags, no submodules, no hooks, never forced, with the user's own
 * credentials. Refused (`invalid`) for a name outside `candor/…` or a remote
 * name that could be a path, a URL or an option, (`no-remote`) when the
 * repository configures no such remote, (`no-branch`) when the branch does
 * not exist; a push the remote turns down is `rejected`, with git's reason.
 */
export async function pushBranch(repo: GuardedRepository, remote: string, branch: string, options: HooksOption = {}): Promise<PushResult> {
  checkBranchName(branch);
  await checkRemote(repo, remote);
  const ref = `refs/heads/${branch}`;
  const commit = await repo.revParse(ref);
  if (commit === undefined) throw new GitGuardError('no-branch', `refused to push ${branch}: the repository has no branch of that name`);
  try {
    await withEmptyHooks(options, (hooks) =>
      repo.run({
        subcommand: 'push',
        config: [...PUSH_CONFIG, `core.hooksPath=${hooks}`],
        args: [...PUSH_FLAGS, remote, `${ref}:${ref}`],
      }),
    );
  } catch (err) {
    throw rejection(err, remote, branch) ?? signInFailure(err, remote) ?? err;
  }
  return { remote, branch, commit };
}

/**
 * Where `remote` points, as git would expand it (`url.<base>.insteadOf`);
 * `ls-remote --get-url` never connects. Refused (`no-remote`) when the
 * repository configures no such remote: git would take the name for a path.
 */
export async function remoteUrl(repo: GuardedRepository, remote: string): Promise<string> {
  await checkRemote(repo, remote);
  return (await repo.run({ subcommand: 'ls-remote', args: ['--get-url', remote] })).replace(/\r?\n$/, '');
}

function checkBranchName(branch: string): void {
  if (!isHandoffBranchName(branch)) {
    throw new GitGuardError('invalid', `branch name ${JSON.stringify(branch)} is not candor/<lowercase letters, digits, - _ .>`);
  }
}

async function configNames(repo: GuardedRepository): Promise<string[]> {
  return (await repo.run({ subcommand: 'config', args: ['-z', '--name-only', '--list'] })).split('\0');
}

/**
 * The settings that send `remote`'s pushes somewhere other than the URL
 * `remoteUrl` shows: its `pushurl`, and every `url.<base>.pushInsteadOf`.
 * Names only (their values may hold credentials): a preview says that the
 * push goes elsewhere, and which setting says where.
 */
export async function pushRedirects(repo: GuardedRepository, remote: string): Promise<string[]> {
  return (await configNames(repo)).filter((name) => name === `remote.${remote}.pushurl` || (name.startsWith('url.') && name.endsWith('.pushinsteadof')));
}

/** The name is a remote's, never a path or URL, and the repository configures it (git prints the section and key in lowercase, the name as written). */
async function checkRemote(repo: GuardedRepository, remote: string): Promise<void> {
  if (typeof remote !== 'string' || !isRemoteName(remote)) {
    throw new GitGuardError('invalid', `${JSON.stringify(remote)} is not a remote name (letters, digits, . _ -, not starting with - or .)`);
  }
  const names = await configNames(repo);
  if (!names.includes(`remote.${remote}.url`) && !names.includes(`remote.${remote}.pushurl`)) {
    throw new GitGuardError('no-remote', `the repository has no remote named ${JSON.stringify(remote)} (git remote -v lists those it has)`);
  }
}

/**
 * The fetch must reach the scratch clone and nothing else: refused when an
 * `insteadOf` rule rewrites its path (an `ext::` URL runs a command), or
 * when the repository configures a remote named like the path (its
 * `uploadpack`, `url` or `vcs` would apply; git ignores such names only
 * when they start with `/`).
 */
async function refuseRedirectedSource(repo: GuardedRepository, source: string): Promise<void> {
  const url = (await repo.run({ subcommand: 'ls-remote', args: ['--get-url', source] })).replace(/\r?\n$/, '');
  if (url !== source) {
    throw new GitGuardError('unsafe-config', `refused the hand-off: this repository's config rewrites ${source} to ${JSON.stringify(url)} (url.*.insteadOf)`);
  }
  const remote = (await configNames(repo)).find((name) => name.startsWith(`remote.${source}.`));
  if (remote !== undefined) {
    throw new GitGuardError('unsafe-config', `refused the hand-off: this repository's config sets ${remote} for the scratch clone's path`);
  }
}

/**
 * git's status line for a ref the remote turned down (`! [rejected] a -> a
 * (non-fast-forward)`, `! [remote rejected] a -> a (pre-receive hook
 * declined)`) as a `rejected` error naming the reason; undefined for any
 * other failure.
 */
function rejection(err: unknown, remote: string, branch: string): GitGuardError | undefined {
  if (!isGitGuardError(err, 'failed')) return undefined;
  const text = err.detail ?? err.message;
  const line = /^\s*!\s+\[(rejected|remote rejected|remote failure)\]\s+\S+\s+->\s+\S+\s+\((.+)\)\s*$/m.exec(text);
  if (line === null) return undefined;
  const reason = line[2] ?? 'rejected';
  const behind = line[1] === 'rejected' && /non-fast-forward|fetch first|stale info/.test(reason);
  const advice = behind
    ? `${remote}'s ${branch} has commits the local branch does not; Candor's push is never forced: merge them into the local branch, or delete the remote branch, then push again`
    : `Candor's push is never forced`;
  // What the server said in its own words (a protected branch's rule, a hook's message), clipped.
  const said = [...text.matchAll(/^remote: *(\S.*?)\s*$/gm)].map((m) => m[1] ?? '').slice(0, 3).join(' ').slice(0, 300);
  return new GitGuardError('rejected', `${remote} rejected the push of ${branch}: ${reason}${said !== '' ? ` (the remote says: ${said})` : ''}. ${advice}.`, text);
}

/** git could not sign in to the remote: the fix is the user's own git setup, as for a push by hand. */
function signInFailure(err: unknown, remote: string): GitGuardError | undefined {
  if (!isGitGuardError(err, 'failed')) return undefined;
  const text = err.detail ?? err.message;
  if (!/could not read (Username|Password)|Authentication failed|Permission denied \(publickey|terminal prompts disabled|HTTP Basic: Access denied/i.test(text)) return undefined;
  const said = text.split('\n').find((line) => /^(fatal|remote|error):/.test(line.trim()))?.trim() ?? '';
  return new GitGuardError('failed', `the push could not sign in to ${remote}${said !== '' ? ` (${said})` : ''}: Candor pushes with your own git credentials, as a push by hand would; set up a credential helper or an ssh key for this remote and try again`, text);
}

/** Runs `write` with an empty hooks folder: the caller's (checked empty), or a fresh one removed afterwards. */
async function withEmptyHooks<T>(options: HooksOption, write: (hooks: string) => Promise<T>): Promise<T> {
  const hooks = options.emptyHooksDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'candor-no-hooks-'));
  try {
    if (!path.isAbsolute(hooks) || !isEmptyDirectory(hooks)) {
      throw new GitGuardError('invalid', `the hooks folder ${JSON.stringify(hooks)} is not an absolute path to an empty folder`);
    }
    return await write(hooks);
  } finally {
    if (options.emptyHooksDir === undefined) fs.rmSync(hooks, { recursive: true, force: true });
  }
}

function isEmptyDirectory(target: string): boolean {
  try {
    return fs.readdirSync(target).length === 0;
  } catch {
    return false;
  }
}

function isDirectory(target: string): boolean {
  try {
    return fs.statSync(target).isDirectory();
  } catch {
    return false;
  }
}
