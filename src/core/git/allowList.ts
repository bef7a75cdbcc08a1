import { GitGuardError } from './errors';

/**
 * The only git subcommands the guard can start in a workspace repository.
 * Everything here reads, except `fetch`, which is allowed in exactly one
 * shape: the ref-only branch hand-off (see `fetchShapeProblem`).
 */
export const ALLOWED_SUBCOMMANDS = [
  'status',
  'diff-files',
  'diff',
  'log',
  'show',
  'rev-parse',
  'ls-files',
  'branch',
  'for-each-ref',
  'rev-list',
  'cat-file',
  'symbolic-ref',
  'config',
  'fetch',
] as const;

export type AllowedSubcommand = (typeof ALLOWED_SUBCOMMANDS)[number];

export interface Invocation {
  readonly subcommand: AllowedSubcommand;
  readonly args: readonly string[];
  /** Extra `-c key=value` pairs for this call only; only the fetch may carry them. */
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
];

const BRANCH_LISTING_FLAGS = new Set(['--list', '-l', '--show-current', '--no-color', '-a', '--all', '-r', '--remotes', '-v', '-vv', '--verbose']);
const BRANCH_LISTING_PREFIXES = ['--format=', '--sort=', '--contains=', '--merged=', '--no-merged=', '--points-at='];
const CONFIG_READ_FLAGS = new Set(['--get', '--null', '-z', '--local', '--global', '--system', '--worktree', '--bool', '--int', '--path']);
const SYMBOLIC_REF_FLAGS = new Set(['-q', '--quiet', '--short']);

export const FETCH_FLAGS = ['--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '--no-auto-maintenance', '--quiet'] as const;
export const FETCH_CONFIG = ['gc.auto=0', 'maintenance.auto=false', 'fetch.writeCommitGraph=false'] as const;

/** `candor/<word>`: lowercase letters, digits, `-`, `_` and single dots. */
const HANDOFF_BRANCH = /^candor\/[a-z0-9](?:[a-z0-9_-]|\.(?!\.))*$/;

export function isHandoffBranchName(name: string): boolean {
  return name.length <= 120 && HANDOFF_BRANCH.test(name) && !name.endsWith('.') && !name.endsWith('.lock');
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
  if (config.length > 0 && subcommand !== 'fetch') return 'per-call config is only for the hand-off fetch';
  const options = optionPart(args);
  const denied = options.find((arg) => DENIED_OPTION_PREFIXES.some((prefix) => arg === prefix || arg.startsWith(`${prefix}=`)));
  if (denied !== undefined) return `option ${denied} is not allowed`;
  switch (subcommand) {
    case 'branch':
      return branchProblem(args);
    case 'config':
      return configProblem(args);
    case 'symbolic-ref':
      return symbolicRefProblem(args);
    case 'diff':
      return options.includes('--cached') || options.includes('--staged') ? undefined : 'only `diff --cached` (use diff-files for the work tree)';
    case 'fetch':
      return fetchShapeProblem(args, config);
    default:
      return undefined;
  }
}

/** Arguments before the first `--` or `--end-of-options`: the ones git reads as options. */
function optionPart(args: readonly string[]): readonly string[] {
  const end = args.findIndex((arg) => arg === '--' || arg === '--end-of-options');
  return end === -1 ? args : args.slice(0, end);
}

function branchProblem(args: readonly string[]): string | undefined {
  const listing = args.includes('--list') || args.includes('-l');
  for (const arg of args) {
    if (BRANCH_LISTING_FLAGS.has(arg) || BRANCH_LISTING_PREFIXES.some((prefix) => arg.startsWith(prefix))) continue;
    // Without --list a bare name would create a branch; with it, names are patterns.
    if (listing && !arg.startsWith('-')) continue;
    return `\`branch ${arg}\` is not a listing form`;
  }
  return undefined;
}

function configProblem(args: readonly string[]): string | undefined {
  if (!args.includes('--get')) return 'only `config --get`';
  const positional = args.filter((arg) => !arg.startsWith('-'));
  const unknown = args.find((arg) => arg.startsWith('-') && !CONFIG_READ_FLAGS.has(arg));
  if (unknown !== undefined) return `config option ${unknown} is not allowed`;
  return positional.length === 1 ? undefined : 'config --get takes exactly one key';
}

function symbolicRefProblem(args: readonly string[]): string | undefined {
  const positional = args.filter((arg) => !arg.startsWith('-'));
  const unknown = args.find((arg) => arg.startsWith('-') && !SYMBOLIC_REF_FLAGS.has(arg));
  if (unknown !== undefined) return `symbolic-ref option ${unknown} is not allowed`;
  // Two operands would point HEAD somewhere else.
  return positional.length === 1 && positional[0] === 'HEAD' ? undefined : 'only reading HEAD';
}

/**
 * The hand-off: `fetch <flags> <absolute scratch path> refs/heads/candor/X:refs/heads/candor/X`
 * with gc and maintenance off. No `+` (never forces), same name on both
 * sides, nothing else.
 */
function fetchShapeProblem(args: readonly string[], config: readonly string[]): string | undefined {
  for (const required of ['gc.auto=0', 'maintenance.auto=false']) {
    if (!config.includes(required)) return `the hand-off fetch needs -c ${required}`;
  }
  const strayConfig = config.find((pair) => !(FETCH_CONFIG as readonly string[]).includes(pair));
  if (strayConfig !== undefined) return `config ${strayConfig} is not allowed on the fetch`;
  const flags = args.filter((arg) => arg.startsWith('-'));
  const stray = flags.find((flag) => !(FETCH_FLAGS as readonly string[]).includes(flag));
  if (stray !== undefined) return `fetch option ${stray} is not allowed`;
  if (!flags.includes('--no-tags')) return 'the hand-off fetch needs --no-tags';
  const positional = args.filter((arg) => !arg.startsWith('-'));
  if (positional.length !== 2) return 'the hand-off fetch takes one source and one refspec';
  const [source, refspec] = positional as [string, string];
  if (!isAbsoluteLocalPath(source)) return 'the hand-off source must be an absolute local path';
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
