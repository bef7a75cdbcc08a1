import type { AllowedSubcommand } from './allowList';
import { childEnv } from '../process/childEnv';

/**
 * A repository is untrusted input: its `.git/config` can name programs, and
 * git runs them. This is every such key (and environment variable) against
 * the commands the guard runs — status, diff-files, diff --cached, log, show,
 * rev-parse, ls-files, config --list --name-only, ls-remote --get-url, the
 * hand-off fetch and the push — and what neutralises it (docs/architecture.md,
 * "Git"). Command-line `-c` wins over every config file, includes too.
 *
 * The push is the user's own git reaching the user's own remote: their
 * transport (ssh, `core.sshCommand`), their `insteadOf` rules and their
 * credential helper take part, by design, as when they push by hand. What
 * the branch could bring along does not: its hooks (a checked-out
 * `.husky/pre-push`), its tags, its submodules.
 *
 * | key                                   | could run in          | neutralised by                                            |
 * |---------------------------------------|-----------------------|-----------------------------------------------------------|
 * | core.fsmonitor                        | status, diff-files    | `-c core.fsmonitor=false` on every call                   |
 * | filter.<driver>.clean / .process      | status, diff-files    | runs, by design: a trusted repository's filters run, as in VS Code's git; they never see the key (environment below) |
 * | diff.external, diff.<driver>.command  | diff, show            | `--no-ext-diff` wherever a diff is produced               |
 * | diff.<driver>.textconv                | diff, show            | `--no-textconv` wherever a diff is produced               |
 * | log.showSignature + gpg.program (and gpg.<format>.program) | log, show | `-c log.showSignature=false` on every call; no format asks for %G |
 * | core.pager, pager.<cmd>               | every porcelain       | `--no-pager` (and git never pages without a terminal)     |
 * | core.hooksPath, .git/hooks/*          | fetch, push (pre-push, reference-transaction); post-index-change if an index were written | reads never write the index (GIT_OPTIONAL_LOCKS=0); the fetch and the push get `-c core.hooksPath=<an empty folder Candor owns>` |
 * | push.followTags, push.recurseSubmodules, submodule.recurse | push | `-c push.followTags=false -c push.recurseSubmodules=no` and `--no-follow-tags --recurse-submodules=no` |
 * | core.alternateRefsCommand             | fetch                 | `-c core.alternateRefsCommand=` (empty) on the fetch      |
 * | url.<base>.insteadOf, protocol.*.allow | fetch                | `GIT_ALLOW_PROTOCOL=file` on the fetch (it overrides protocol.*.allow; `-c protocol.allow=never` would not); the fetch is refused unless `ls-remote --get-url` prints the scratch path unchanged |
 * | remote.<scratch path>.*  (uploadpack, url, vcs, fetch) | fetch | git ignores remote names that start with `/`, but not `C:\…`: the fetch is refused when any such key exists |
 * | remote.<name>.uploadpack + extensions.partialClone | every read (lazy fetch of a missing object) | `GIT_NO_LAZY_FETCH=1` and `GIT_ALLOW_PROTOCOL=` (none) on reads |
 * | core.sshCommand, GIT_SSH, core.gitProxy | any transport       | reads allow none, the fetch only `file`; the push allows `file`, `http`, `https` and `ssh` (the user's ssh settings apply), never `ext::`, `fd::` or a remote helper |
 * | uploadpack.packObjectsHook            | the scratch side of the fetch | honoured only from protected config; the guard never sets it |
 * | credential.helper                     | fetch, push           | `-c credential.helper=` on the fetch (and `file` never asks); the push uses the user's helper, by design |
 * | core.askPass, GIT_ASKPASS, SSH_ASKPASS | any prompt           | `GIT_TERMINAL_PROMPT=0`, `GIT_ASKPASS=` (empty: no program), SSH_ASKPASS removed |
 * | core.editor, sequence.editor, GIT_EDITOR | none of these commands | EDITOR, VISUAL, GIT_* removed from the environment     |
 * | trailer.<token>.cmd                   | interpret-trailers only; `%(trailers)` in a log format runs nothing | — |
 * | core.worktree                         | every read            | not a program, but it points the work tree elsewhere: `open` refuses a work tree that does not contain the folder |
 */

/** `-c` pairs on every call. */
export const CALL_CONFIG = ['core.fsmonitor=false', 'core.quotePath=false', 'color.ui=false', 'log.showSignature=false'] as const;

/** Global options in front of every subcommand. */
export const GLOBAL_OPTIONS = ['--no-pager'] as const;

/**
 * The `GIT_*` variables the guard sets itself and lets through simple-git's
 * environment filter; every inherited `GIT_*` is removed.
 */
export const GUARD_GIT_ENV = [
  'GIT_OPTIONAL_LOCKS',
  'GIT_CEILING_DIRECTORIES',
  'GIT_ALLOW_PROTOCOL',
  'GIT_TERMINAL_PROMPT',
  'GIT_ASKPASS',
  'GIT_NO_LAZY_FETCH',
] as const;

/** Variables simple-git refuses when passed on (they name editors, pagers or prompts). */
const GUARDED_ENV = new Set(['editor', 'visual', 'pager', 'prefix', 'ssh_askpass']);

/**
 * The transports a git process may use: `none` for every read (a read never
 * reaches a remote), `file` for the hand-off fetch from the scratch clone,
 * and for the push the ones a user's remote is reached by.
 */
export type Transport = 'none' | 'file' | 'push';

const ALLOWED_PROTOCOLS: Readonly<Record<Transport, string>> = { none: '', file: 'file', push: 'file:http:https:ssh' };

export interface GitEnvironmentOptions {
  /** Values no git process may see (the API key from SecretStorage). */
  readonly secrets?: readonly string[];
  /** GIT_CEILING_DIRECTORIES: git does not look for a repository in or above it. */
  readonly ceiling?: string;
  /** Default `none`. */
  readonly transport?: Transport;
  readonly base?: NodeJS.ProcessEnv;
}

/**
 * The environment of a guarded git: the host's without Candor's secrets
 * (`OPENAI_API_KEY`, any `CANDOR_*`, any value holding a secret) and
 * without inherited `GIT_*`, plus the guard's own settings.
 */
export function gitEnvironment(options: GitEnvironmentOptions = {}): NodeJS.ProcessEnv {
  const env = childEnv(options.secrets ?? [], options.base ?? process.env);
  for (const key of Object.keys(env)) if (GUARDED_ENV.has(key.toLowerCase())) delete env[key];
  const own: NodeJS.ProcessEnv = {
    // Never take the index lock, never write a refreshed index back.
    GIT_OPTIONAL_LOCKS: '0',
    GIT_TERMINAL_PROMPT: '0',
    // Set and empty: git asks no program for a password (core.askPass and SSH_ASKPASS are skipped).
    GIT_ASKPASS: '',
    GIT_NO_LAZY_FETCH: '1',
    // An empty list allows no transport at all: a read never reaches a remote.
    GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS[options.transport ?? 'none'],
    // Git's messages in English, so failures classify the same everywhere.
    LC_ALL: 'C',
  };
  if (options.ceiling !== undefined) own.GIT_CEILING_DIRECTORIES = options.ceiling;
  return { ...env, ...own };
}

/** The transport a subcommand's process may use: only the two shaped writes reach another repository. */
export function transportFor(subcommand: AllowedSubcommand): Transport {
  return subcommand === 'fetch' ? 'file' : subcommand === 'push' ? 'push' : 'none';
}
