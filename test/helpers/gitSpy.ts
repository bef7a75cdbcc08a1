// The git spy, shared by every test that runs it (unit and e2e): the
// `git` of test/fixtures/git-spy logs each call with the folder it ran in;
// this module reads that log and judges each call against one list of the
// git commands that write. The list is checked against
// `git --list-cmds=main` by test/unit/core/git/writingVerbs.test.ts, whose table
// says, command by command, why each one reads or writes.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/** The folder to put first on PATH: its `git` logs every call, then runs the real git. */
export const GIT_SPY_DIR = path.resolve(__dirname, '..', 'fixtures', 'git-spy');
/** The spy itself (a `gitBinary` for the guard). */
export const GIT_SPY = path.join(GIT_SPY_DIR, 'git');

/**
 * Every git command that can write the repository (objects, packs, files
 * under .git), the index, the work tree, the refs or the config, in one form
 * or another. Two kinds of writing are left out, as git leaves them out of
 * "writing": a reader's option that sends its output to a file the caller
 * names (`log --output`; the guard refuses those options), and the refresh of
 * the index's cached stat data that `status` and `diff` make on the side
 * (never the index's content; `GIT_OPTIONAL_LOCKS=0` turns it off).
 */
export const WRITING_VERBS: readonly string[] = [
  'add', 'add--interactive', 'am', 'apply', 'backfill', 'bisect', 'bisect--helper', 'branch', 'bugreport', 'bundle',
  'checkout', 'checkout--worker', 'checkout-index', 'cherry-pick', 'clean', 'clone', 'commit', 'commit-graph', 'commit-tree',
  'config', 'credential', 'credential-cache', 'credential-cache--daemon', 'credential-store', 'daemon', 'diagnose', 'difftool',
  'difftool--helper', 'fast-import', 'fetch', 'fetch-pack', 'filter-branch', 'for-each-repo', 'format-patch', 'fsck',
  'fsck-objects', 'fsmonitor--daemon', 'gc', 'hash-object', 'hook', 'http-backend', 'http-fetch', 'http-push', 'index-pack',
  'init', 'init-db', 'instaweb', 'interpret-trailers', 'mailinfo', 'mailsplit', 'maintenance', 'merge', 'merge-file',
  'merge-index', 'merge-octopus', 'merge-one-file', 'merge-ours', 'merge-recursive', 'merge-recursive-ours',
  'merge-recursive-theirs', 'merge-resolve', 'merge-subtree', 'merge-tree', 'mergetool', 'mktag', 'mktree',
  'multi-pack-index', 'mv', 'notes', 'pack-objects', 'pack-refs', 'prune', 'prune-packed', 'pull', 'push', 'quiltimport',
  'read-tree', 'rebase', 'receive-pack', 'reflog', 'refs', 'remote', 'remote-ext', 'remote-fd', 'remote-ftp', 'remote-ftps',
  'remote-http', 'remote-https', 'repack', 'replace', 'replay', 'rerere', 'reset', 'restore', 'revert', 'rm', 'send-pack',
  'shell', 'sparse-checkout', 'stage', 'stash', 'submodule', 'submodule--helper', 'subtree', 'switch', 'symbolic-ref', 'tag',
  'unpack-file', 'unpack-objects', 'update-index', 'update-ref', 'update-server-info', 'worktree', 'write-tree',
];

/** What a code-server needs to run with the spy as its git: the spy first on PATH, the real git, and a fresh log file. */
export function spiedGit(realGit = '/usr/bin/git'): { readonly log: string; readonly pathPrefix: string[]; readonly env: Record<string, string> } {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-spy-')), 'git-calls.log');
  return { log, pathPrefix: [GIT_SPY_DIR], env: { SPY_GIT_LOG: log, SPY_REAL_GIT: realGit } };
}

/** One git call as the spy logged it. */
export interface SpiedCall {
  /** The folder git was started in. */
  readonly cwd: string;
  /** The folder git works in: `cwd`, changed by every `-C <dir>`. */
  readonly dir: string;
  /** Every argument, as given. */
  readonly argv: readonly string[];
  /** The `-c key=value` pairs before the subcommand. */
  readonly config: readonly string[];
  /** The subcommand: the first argument that is not a global option or its value ('' for `git --version`). */
  readonly verb: string;
  /** The arguments after the subcommand. */
  readonly args: readonly string[];
}

/** Global options that take their value as the next argument. */
const GLOBAL_OPTIONS_WITH_VALUE = new Set(['-c', '-C', '--git-dir', '--work-tree', '--namespace', '--config-env', '--super-prefix']);

export function parseCall(cwd: string, argv: readonly string[]): SpiedCall {
  const config: string[] = [];
  let dir = cwd;
  for (let i = 0; i < argv.length; i++) {
    const word = argv[i] ?? '';
    if (GLOBAL_OPTIONS_WITH_VALUE.has(word)) {
      const value = argv[++i] ?? '';
      if (word === '-c') config.push(value);
      if (word === '-C') dir = path.resolve(dir, value);
      continue;
    }
    if (word.startsWith('-')) continue;
    return { cwd, dir, argv, config, verb: word, args: argv.slice(i + 1) };
  }
  return { cwd, dir, argv, config, verb: '', args: [] };
}

const FIELD = '\x1f';
const RECORD = '\x1e\n';

/** Every call in the spy's log, in order (the record format: test/fixtures/git-spy/git). */
export function readSpyLog(file: string): SpiedCall[] {
  return fs
    .readFileSync(file, 'utf8')
    .split(RECORD)
    .filter((record) => record !== '')
    .map((record) => {
      const [cwd = '', ...argv] = record.split(FIELD);
      return parseCall(cwd, argv);
    });
}

/** The calls that worked in `root` or a folder beneath it. */
export function callsIn(calls: readonly SpiedCall[], root: string): SpiedCall[] {
  return calls.filter((call) => call.dir === root || call.dir.startsWith(`${root}${path.sep}`));
}

/** A call as a person reads it in a failure message. */
export function shown(call: SpiedCall): string {
  return `git ${call.argv.join(' ')} (in ${call.dir})`;
}

type Form = (args: readonly string[]) => boolean;

const positionals = (args: readonly string[]): string[] => args.filter((arg) => !arg.startsWith('-'));
const hasAny = (args: readonly string[], flags: readonly string[]): boolean =>
  args.some((arg) => flags.some((flag) => arg === flag || arg.startsWith(`${flag}=`)));

const CONFIG_READ_MODES = ['--get', '--get-all', '--get-regexp', '--get-urlmatch', '--get-color', '--get-colorbool', '-l', '--list'];
const CONFIG_READ_FLAGS = new Set([
  ...CONFIG_READ_MODES, '--name-only', '-z', '--null', '--show-origin', '--show-scope', '--show-names', '--includes',
  '--no-includes', '--local', '--global', '--system', '--worktree', '--bool', '--int', '--bool-or-int', '--path',
  '--expiry-date', '--fixed-value', '--all', '--regexp',
]);
const CONFIG_VALUE_OPTIONS = ['--type', '--default', '-f', '--file', '--blob', '--url'];

/**
 * `config --get k`, `config --list`, `config section.key` (the old --get),
 * `config get k` and `config list` (git 2.46+); not `config edit`, `set`,
 * `unset`, nor any flag that writes.
 */
function configReads(args: readonly string[]): boolean {
  const keys: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    if (CONFIG_VALUE_OPTIONS.includes(arg)) i++;
    else if (CONFIG_VALUE_OPTIONS.some((option) => arg.startsWith(`${option}=`))) continue;
    else if (arg.startsWith('-')) {
      if (!CONFIG_READ_FLAGS.has(arg)) return false;
    } else keys.push(arg);
  }
  if (hasAny(args, CONFIG_READ_MODES)) return true;
  if (keys[0] === 'get' || keys[0] === 'list') return true;
  return keys.length === 1 && (keys[0] ?? '').includes('.');
}

/** Options of `branch` that git documents as implying `--list`. */
const BRANCH_LIST_MODES = ['-l', '--list', '--show-current', '--contains', '--no-contains', '--merged', '--no-merged', '--points-at'];
const BRANCH_WRITES = ['-d', '-D', '--delete', '-m', '-M', '--move', '-c', '-C', '--copy', '-f', '--force', '-u', '--set-upstream-to', '--unset-upstream', '--edit-description', '-t', '--track', '--no-track', '--create-reflog', '--recurse-submodules'];

/**
 * The forms of a writing command that only read: VS Code's git extension
 * runs every one of these (its branch list, its stash list, its remotes…).
 * A command without an entry has no form that passes the spy; a read form
 * for another (`tag -l`, `submodule status`) is one entry more.
 */
export const READ_FORMS: Readonly<Record<string, Form>> = {
  config: configReads,
  branch: (args) => !hasAny(args, BRANCH_WRITES) && (positionals(args).length === 0 || hasAny(args, BRANCH_LIST_MODES)),
  'hash-object': (args) => !args.includes('-w'),
  reflog: (args) => !['expire', 'delete', 'drop'].includes(positionals(args)[0] ?? ''),
  remote: (args) => {
    const first = positionals(args)[0];
    return first === undefined ? args.every((arg) => arg === '-v' || arg === '--verbose') : first === 'get-url' || first === 'show';
  },
  stash: (args) => ['list', 'show'].includes(positionals(args)[0] ?? ''),
  'symbolic-ref': (args) => !hasAny(args, ['-d', '--delete', '-m']) && positionals(args).length === 1,
  worktree: (args) => positionals(args)[0] === 'list',
};

/** `refs/heads/candor/<name>:refs/heads/candor/<name>`: one evolution branch, same name both sides, never forced. */
export function candorRefspecProblem(refspec: string): string | undefined {
  const match = /^refs\/heads\/(candor\/[a-z0-9][a-z0-9-]*):refs\/heads\/(candor\/[a-z0-9][a-z0-9-]*)$/.exec(refspec);
  if (match === null) return `refspec ${refspec} is not refs/heads/candor/<name>:refs/heads/candor/<name>`;
  return match[1] === match[2] ? undefined : `refspec ${refspec} writes another branch than it reads`;
}

function isAbsoluteLocalPath(value: string): boolean {
  return !value.includes('://') && path.isAbsolute(value);
}

/** What the hand-off's fetch must carry: no gc, no maintenance, no alternate-refs program, no credential helper. */
const HANDOFF_CONFIG = ['gc.auto=0', 'maintenance.auto=false', 'core.alternateRefsCommand=', 'credential.helper='];
/** Other pairs it may carry: each only turns something off. */
const HANDOFF_QUIET_CONFIG = ['fetch.writeCommitGraph=false', 'core.fsmonitor=false', 'core.quotePath=false', 'color.ui=false', 'log.showSignature=false'];
const HANDOFF_FLAGS = ['--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '--no-auto-maintenance', '--quiet'];
const HOOKS_PATH = 'core.hooksPath=';

/**
 * The hand-off: `fetch --no-tags [quiet flags] <absolute local path>
 * refs/heads/candor/X:refs/heads/candor/X`, hooks in one absolute folder,
 * gc, maintenance, alternate refs and credentials off.
 */
function handOffFetchProblem(call: SpiedCall): string | undefined {
  const missing = HANDOFF_CONFIG.find((pair) => !call.config.includes(pair));
  if (missing !== undefined) return `without -c ${missing}`;
  const hooks = call.config.filter((pair) => pair.startsWith(HOOKS_PATH));
  if (hooks.length !== 1 || !isAbsoluteLocalPath(hooks[0]?.slice(HOOKS_PATH.length) ?? '')) return 'without one absolute core.hooksPath';
  const stray = call.config.find((pair) => !pair.startsWith(HOOKS_PATH) && ![...HANDOFF_CONFIG, ...HANDOFF_QUIET_CONFIG].includes(pair));
  if (stray !== undefined) return `with -c ${stray}`;
  const flags = call.args.filter((arg) => arg.startsWith('-'));
  const strayFlag = flags.find((flag) => !HANDOFF_FLAGS.includes(flag));
  if (strayFlag !== undefined) return `with ${strayFlag}`;
  if (!flags.includes('--no-tags')) return 'without --no-tags';
  const [source = '', refspec = '', ...more] = positionals(call.args);
  if (more.length > 0 || refspec === '') return 'not one source and one refspec';
  if (!isAbsoluteLocalPath(source)) return `from ${source}, not an absolute local path`;
  return candorRefspecProblem(refspec);
}

/** What every push must carry: no tags followed, no submodule pushed. Never a credential override: the user's own helper signs in. */
const PUSH_CONFIG = ['push.followTags=false', 'push.recurseSubmodules=no'];
/** Pairs the guard puts on every call: each only turns something off. */
const CALL_QUIET_CONFIG = ['core.fsmonitor=false', 'core.quotePath=false', 'color.ui=false', 'log.showSignature=false'];
const PUSH_FLAGS = ['--no-follow-tags', '--recurse-submodules=no'];
/** A remote's name: never a path, a URL or an option. */
const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;

/**
 * The push: `push --no-follow-tags --recurse-submodules=no <remote name>
 * refs/heads/candor/X:refs/heads/candor/X`, hooks in one absolute folder, tags
 * and submodules off in the config too, and nothing else: no force, no `+`,
 * no other ref, no credential override.
 */
function pushProblem(call: SpiedCall): string | undefined {
  const missing = PUSH_CONFIG.find((pair) => !call.config.includes(pair));
  if (missing !== undefined) return `without -c ${missing}`;
  const hooks = call.config.filter((pair) => pair.startsWith(HOOKS_PATH));
  if (hooks.length !== 1 || !isAbsoluteLocalPath(hooks[0]?.slice(HOOKS_PATH.length) ?? '')) return 'without one absolute core.hooksPath';
  const stray = call.config.find((pair) => !pair.startsWith(HOOKS_PATH) && ![...PUSH_CONFIG, ...CALL_QUIET_CONFIG].includes(pair));
  if (stray !== undefined) return `with -c ${stray}`;
  const [first = '', second = '', remote = '', refspec = '', ...more] = call.args;
  if (first !== PUSH_FLAGS[0] || second !== PUSH_FLAGS[1]) return `not ${PUSH_FLAGS.join(' ')} first: ${call.args.join(' ')}`;
  if (more.length > 0 || refspec === '') return 'not one remote and one refspec';
  if (!REMOTE_NAME.test(remote)) return `to ${remote}, not a remote's name`;
  return candorRefspecProblem(refspec);
}

/**
 * The writes the spy lets through, each in exactly one shape: the hand-off
 * fetch, and the push of one evolution branch.
 */
export const SHAPED_WRITES: Readonly<Record<string, (call: SpiedCall) => string | undefined>> = {
  fetch: handOffFetchProblem,
  push: pushProblem,
};

/** Why the spy refuses a call, or undefined: it only reads, or it is a shaped write in its shape. */
export function writeProblem(call: SpiedCall): string | undefined {
  if (!WRITING_VERBS.includes(call.verb)) return undefined;
  if (READ_FORMS[call.verb]?.(call.args) === true) return undefined;
  const shaped = SHAPED_WRITES[call.verb];
  if (shaped === undefined) return `git ${call.verb} writes`;
  const problem = shaped(call);
  return problem === undefined ? undefined : `git ${call.verb} outside its one shape: ${problem}`;
}

/** Every call that writes, with why, as a person reads it (`[]` when none does). */
export function writingCalls(calls: readonly SpiedCall[]): string[] {
  return calls.flatMap((call) => {
    const problem = writeProblem(call);
    return problem === undefined ? [] : [`${shown(call)}: ${problem}`];
  });
}
