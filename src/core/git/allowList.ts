import { GitGuardError } from './errors';

/**
 * The only git subcommands the guard can start in a workspace repository.
 * Everything here reads, except `fetch` and `push`, each allowed in exactly
 * one shape: the ref-only branch hand-off (see `fetchShapeProblem`) and the
 * push of one evolution branch (see `pushShapeProblem`). `config` only lists
 * names and `ls-remote` only expands a URL: neither connects.
 */
export const ALLOWED_SUBCOMMANDS = [
  'status',
  'diff-files',
  'diff',
  'log',
  'show',
  'rev-parse',
  'ls-files',
  'config',
  'ls-remote',
  'fetch',
  'push',
] as const;

export type AllowedSubcommand = (typeof ALLOWED_SUBCOMMANDS)[number];

export interface Invocation {
  readonly subcommand: AllowedSubcommand;
  readonly args: readonly string[];
  /** Extra `-c key=value` pairs for this call only; only the fetch and the push may carry them. */
  readonly config?: readonly string[];
}

/** Options that write files, run external programs or leave the repository. */
const DENIED_OPTION_PREFIXES = [
  '--output',
  '--ext-diff',
  '--textconv',
  '--filters',
  '--no-index',
  '--upload-pack',
  '--receive-pack',
  '--exec',
  '--update-head-ok',
  '--open-files-in-pager',
  '--show-signature',
];

/** `config` may list names only (values can hold credentials), never read or write a value. */
const CONFIG_LIST_FLAGS = new Set(['--list', '-l', '--name-only', '-z', '--null']);

export const FETCH_FLAGS = ['--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '--no-auto-maintenance', '--quiet'] as const;
/**
 * Every hand-off fetch carries these, plus `core.hooksPath=<an empty folder>`
 * (hostileConfig.ts says why each is there).
 */
export const FETCH_CONFIG = ['gc.auto=0', 'maintenance.auto=false', 'fetch.writeCommitGraph=false', 'core.alternateRefsCommand=', 'credential.helper='] as const;
const HOOKS_PATH = 'core.hooksPath=';

/**
 * The push of one evolution branch carries these, plus
 * `core.hooksPath=<an empty folder>`, and nothing else: no tags follow it,
 * no submodule is pushed, no pre-push hook runs. No `credential.helper=`:
 * the user's own helper signs the push in (docs/architecture.md, "Git").
 */
export const PUSH_CONFIG = ['push.followTags=false', 'push.recurseSubmodules=no'] as const;
export const PUSH_FLAGS = ['--no-follow-tags', '--recurse-submodules=no'] as const;

/**
 * A remote's name as the push and `remoteUrl` take it: a letter or digit,
 * then letters, digits, `.`, `_` or `-`. Never a path, a URL or an option.
 */
const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

export function isRemoteName(name: string): boolean {
  return REMOTE_NAME.test(name);
}

/**
 * The one rule for an evolution branch's name, shared by the guard, the
 * scratch clone's ship step and the chat view's messages: `candor/`, then a
 * lowercase letter or digit, then up to 79 more of those or `-`
 * (`candor/rant-<rant id>`, `candor/revert-<short sha>`). No `.`, `_` or `/`
 * after the prefix, so no `..`, `.lock` or nested ref can be formed.
 */
const HANDOFF_BRANCH = /^candor\/[a-z0-9][a-z0-9-]{0,79}$/;

export function isHandoffBranchName(name: string): boolean {
  return HANDOFF_BRANCH.test(name);
}

/** Throws `forbidden` unless the invocation is one the guard may run. */
export function checkInvocation(invocation: Invocation): void {
  const problem = invocationProblem(invocation);
  if (problem !== undefined) {
    throw new GitGuardError('forbidden', `refused git ${invocation.subcommand}: ${problem}`);
  }
}

export function invocationProblem({ subcommand, args, config = [] }: Invocation): string | undefined {
  if (!(ALLOWED_SUBCOMMANDS as readonly string[]).includes(subcommand)) return 'not on the allow-list';
  if (config.length > 0 && subcommand !== 'fetch' && subcommand !== 'push') return 'per-call config is only for the hand-off fetch and the push';
  const options = optionPart(args);
  const denied = options.find((arg) => DENIED_OPTION_PREFIXES.some((prefix) => arg === prefix || arg.startsWith(`${prefix}=`)));
  if (denied !== undefined) return `option ${denied} is not allowed`;
  // A %G placeholder makes log and show verify signatures, which runs gpg.program.
  const verifying = options.find((arg) => /^--(format|pretty)=.*%G/.test(arg));
  if (verifying !== undefined) return `option ${verifying} would run gpg.program`;
  switch (subcommand) {
    case 'config':
      return configProblem(args);
    case 'ls-remote':
      return lsRemoteProblem(args);
    case 'diff':
      return options.includes('--cached') || options.includes('--staged') ? undefined : 'only `diff --cached` (use diff-files for the work tree)';
    case 'fetch':
      return fetchShapeProblem(args, config);
    case 'push':
      return pushShapeProblem(args, config);
    default:
      return undefined;
  }
}

/** Arguments before the first `--` or `--end-of-options`: the ones git reads as options. */
function optionPart(args: readonly string[]): readonly string[] {
  const end = args.findIndex((arg) => arg === '--' || arg === '--end-of-options');
  return end === -1 ? args : args.slice(0, end);
}

function configProblem(args: readonly string[]): string | undefined {
  const unknown = args.find((arg) => !CONFIG_LIST_FLAGS.has(arg));
  if (unknown !== undefined) return `config ${unknown} is not allowed (only \`config --list --name-only\`)`;
  return args.includes('--name-only') && (args.includes('--list') || args.includes('-l')) ? undefined : 'only `config --list --name-only`';
}

/** `ls-remote --get-url <absolute path | remote name>`: expands insteadOf rules, never connects. */
function lsRemoteProblem(args: readonly string[]): string | undefined {
  if (args.length !== 2 || args[0] !== '--get-url') return 'only `ls-remote --get-url <path or remote name>`';
  const target = args[1] ?? '';
  return isAbsoluteLocalPath(target) || isRemoteName(target) ? undefined : 'ls-remote --get-url takes an absolute local path or a remote name';
}

/**
 * The hand-off: `fetch <flags> <absolute scratch path> refs/heads/candor/X:refs/heads/candor/X`
 * with gc and maintenance off, no hooks, no alternate-refs command and no
 * credential helper. No `+` (never forces), same name on both sides, nothing else.
 */
function fetchShapeProblem(args: readonly string[], config: readonly string[]): string | undefined {
  for (const required of ['gc.auto=0', 'maintenance.auto=false', 'core.alternateRefsCommand=', 'credential.helper=']) {
    if (!config.includes(required)) return `the hand-off fetch needs -c ${required}`;
  }
  const hooks = config.filter((pair) => pair.startsWith(HOOKS_PATH));
  if (hooks.length !== 1 || !isAbsoluteLocalPath(hooks[0]?.slice(HOOKS_PATH.length) ?? '')) {
    return 'the hand-off fetch needs -c core.hooksPath=<an absolute empty folder>';
  }
  const strayConfig = config.find((pair) => !(FETCH_CONFIG as readonly string[]).includes(pair) && !pair.startsWith(HOOKS_PATH));
  if (strayConfig !== undefined) return `config ${strayConfig} is not allowed on the fetch`;
  const flags = args.filter((arg) => arg.startsWith('-'));
  const stray = flags.find((flag) => !(FETCH_FLAGS as readonly string[]).includes(flag));
  if (stray !== undefined) return `fetch option ${stray} is not allowed`;
  if (!flags.includes('--no-tags')) return 'the hand-off fetch needs --no-tags';
  const positional = args.filter((arg) => !arg.startsWith('-'));
  if (positional.length !== 2) return 'the hand-off fetch takes one source and one refspec';
  const [source, refspec] = positional as [string, string];
  if (!isAbsoluteLocalPath(source)) return 'the hand-off source must be an absolute local path';
  return refspecProblem(refspec);
}

/**
 * The push: `-c push.followTags=false -c push.recurseSubmodules=no
 * -c core.hooksPath=<an absolute folder> push --no-follow-tags
 * --recurse-submodules=no <remote name> refs/heads/candor/X:refs/heads/candor/X`,
 * in that order, and nothing else: no force, no `+`, no tags, no other ref,
 * no credential override.
 */
function pushShapeProblem(args: readonly string[], config: readonly string[]): string | undefined {
  const hooks = config.filter((pair) => pair.startsWith(HOOKS_PATH));
  if (hooks.length !== 1 || !isAbsoluteLocalPath(hooks[0]?.slice(HOOKS_PATH.length) ?? '')) {
    return 'the push needs -c core.hooksPath=<an absolute empty folder>';
  }
  const expected = [...PUSH_CONFIG, hooks[0] ?? ''];
  if (config.length !== expected.length || expected.some((pair, i) => config[i] !== pair)) {
    return `the push takes exactly -c ${expected.join(' -c ')}`;
  }
  if (args.length !== 4 || PUSH_FLAGS.some((flag, i) => args[i] !== flag)) {
    return `the push takes exactly ${PUSH_FLAGS.join(' ')} <remote> <refspec>`;
  }
  const [remote, refspec] = args.slice(2) as [string, string];
  if (!isRemoteName(remote)) return `${JSON.stringify(remote)} is not a remote name`;
  return refspecProblem(refspec);
}

/** One evolution branch, the same name on both sides, never forced (no `+`). */
function refspecProblem(refspec: string): string | undefined {
  const match = /^refs\/heads\/([^:]+):refs\/heads\/([^:]+)$/.exec(refspec);
  if (match === null || match[1] !== match[2] || !isHandoffBranchName(match[1] ?? '')) {
    return `refspec ${refspec} is not refs/heads/candor/<name>:refs/heads/candor/<name>`;
  }
  return undefined;
}

function isAbsoluteLocalPath(value: string): boolean {
  if (value.includes('://') || value.includes('\n')) return false;
  return value.startsWith('/') || /^[A-Za-z]:[\\/]/.test(value);
}
