import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { ALLOWED_SUBCOMMANDS } from '../../../../src/core/git/allowList';
import { READ_FORMS, SHAPED_WRITES, WRITING_VERBS, parseCall, writeProblem } from '../../../helpers/gitSpy';
import { GIT_COMMANDS } from './helpers/gitCommands';

/**
 * The git spy's one list of writing verbs, checked against the git on this
 * machine and against the guard: every command git has is classified (the
 * table in helpers/gitCommands.ts gives each one's reason), every writing
 * one is on the spy's list, and the guard may run no writing verb but in a
 * shape the spy checks.
 */
const MAIN_COMMANDS = execFileSync('git', ['--list-cmds=main'], { encoding: 'utf8' }).split('\n').filter((name) => name !== '');
const WRITING_IN_TABLE = Object.keys(GIT_COMMANDS).filter((name) => GIT_COMMANDS[name] === 'writes').sort();

/** The hand-off's fetch exactly as the guard runs it (as the spy logs it). */
const HANDOFF = [
  '-c', 'core.fsmonitor=false', '-c', 'core.quotePath=false', '-c', 'color.ui=false', '-c', 'log.showSignature=false', '--no-pager',
  '-c', 'gc.auto=0', '-c', 'maintenance.auto=false', '-c', 'fetch.writeCommitGraph=false', '-c', 'core.alternateRefsCommand=',
  '-c', 'credential.helper=', '-c', 'core.hooksPath=/tmp/candor-no-hooks-x',
  'fetch', '--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', '/tmp/scratch', 'refs/heads/candor/rant-01h:refs/heads/candor/rant-01h',
];
const REF = 'refs/heads/candor/rant-01h';
const HOOKS = 'core.hooksPath=/tmp/candor-no-hooks-x';
/** The push exactly as the guard runs it (as the spy logs it). */
const PUSH = [
  '-c', 'core.fsmonitor=false', '-c', 'core.quotePath=false', '-c', 'color.ui=false', '-c', 'log.showSignature=false', '--no-pager',
  '-c', 'push.followTags=false', '-c', 'push.recurseSubmodules=no', '-c', HOOKS,
  'push', '--no-follow-tags', '--recurse-submodules=no', 'origin', `${REF}:${REF}`,
];
const judged = (argv: readonly string[]): string | undefined => writeProblem(parseCall('/repo', argv));
const replaced = (from: string, to: string | readonly string[]): string[] =>
  HANDOFF.flatMap((word) => (word === from ? (typeof to === 'string' ? [to] : [...to]) : [word]));
const dropped = (...words: string[]): string[] => HANDOFF.filter((word, i) => !words.includes(word) && !(word === '-c' && words.includes(HANDOFF[i + 1] ?? '')));

describe("git spy: the list of writing verbs", () => {
  it('classifies every command of `git --list-cmds=main` as reading or writing (a command a newer git adds fails here)', () => {
    assert.ok(MAIN_COMMANDS.length >= 100, `git listed ${MAIN_COMMANDS.length} commands`);
    for (const known of ['status', 'commit', 'stash']) assert.ok(MAIN_COMMANDS.includes(known), `git lists ${known}`);
    assert.deepEqual(MAIN_COMMANDS.filter((name) => GIT_COMMANDS[name] === undefined), [], 'unclassified commands');
  });

  it('holds every writing command of the table and no reading one, once each, sorted', () => {
    assert.deepEqual([...WRITING_VERBS], WRITING_IN_TABLE);
    assert.equal(new Set(WRITING_VERBS).size, WRITING_VERBS.length);
    for (const verb of MAIN_COMMANDS.filter((name) => GIT_COMMANDS[name] === 'writes')) assert.ok(WRITING_VERBS.includes(verb), verb);
  });

  it('a writing verb fails the spy in its plain form, wherever global options put it', () => {
    for (const verb of WRITING_VERBS.filter((name) => READ_FORMS[name] === undefined)) {
      assert.ok(judged([verb, 'x']) !== undefined, verb);
      assert.ok(judged(['-c', 'x.y=a b', '-C', '/elsewhere', '--no-pager', verb, 'x']) !== undefined, `${verb} behind global options`);
    }
    for (const argv of [
      ['config', 'user.name', 'x'], ['config', '--local', '--add', 'core.hooksPath', '/x'], ['config', '--unset', 'user.name'], ['config', 'edit'], ['config', 'set', 'user.name', 'x'],
      ['branch', '-q', 'feature'], ['branch', '-D', 'old'], ['stash'], ['stash', 'push', '-m', 'wip'], ['stash', 'drop'],
      ['reflog', 'expire', '--all'], ['remote', 'add', 'o', '/x'], ['remote', 'prune', 'origin'],
      ['symbolic-ref', 'HEAD', 'refs/heads/x'], ['symbolic-ref', '-d', 'HEAD'], ['worktree', 'add', '../w'],
      ['hash-object', '--stdin', '-w', '--path', 'a.txt'],
    ]) assert.ok(judged(argv) !== undefined, argv.join(' '));
  });

  it("shares with the guard's allowed subcommands only verbs whose shape the spy checks: the hand-off fetch, the push, and config's reads", () => {
    const shared = ALLOWED_SUBCOMMANDS.filter((verb) => WRITING_VERBS.includes(verb)).sort();
    assert.deepEqual(shared, ['config', 'fetch', 'push']);
    assert.deepEqual(Object.keys(SHAPED_WRITES).sort(), ['fetch', 'push'], 'fetch and push are the shaped writes');
    assert.equal(judged(['--no-pager', 'config', '-z', '--name-only', '--list']), undefined, "the guard's config call lists names: a read");
    for (const verb of ALLOWED_SUBCOMMANDS.filter((name) => !WRITING_VERBS.includes(name))) assert.equal(GIT_COMMANDS[verb], 'reads', verb);
  });

  it('passes a fetch of exactly the hand-off shape, and fails every other fetch', () => {
    assert.equal(judged(HANDOFF), undefined);
    assert.equal(judged(replaced('--no-recurse-submodules', ['--no-recurse-submodules', '--no-auto-maintenance', '--quiet'])), undefined);
    const others: Record<string, string[]> = {
      'a plain fetch': ['fetch'],
      'from a remote name': ['fetch', 'origin'],
      'without gc off': dropped('gc.auto=0'),
      'without maintenance off': dropped('maintenance.auto=false'),
      'with an alternate-refs program': dropped('core.alternateRefsCommand='),
      'with a credential helper': dropped('credential.helper='),
      'with the repository\'s hooks': dropped('core.hooksPath=/tmp/candor-no-hooks-x'),
      'with a relative hooks folder': replaced('core.hooksPath=/tmp/candor-no-hooks-x', 'core.hooksPath=hooks'),
      'with two hooks folders': replaced('core.hooksPath=/tmp/candor-no-hooks-x', ['core.hooksPath=/a', '-c', 'core.hooksPath=/b']),
      'with another config pair': replaced('--no-pager', ['--no-pager', '-c', 'protocol.allow=always']),
      'with tags': dropped('--no-tags'),
      'with --update-head-ok': replaced('--no-tags', ['--no-tags', '--update-head-ok']),
      'with --upload-pack': replaced('--no-tags', ['--no-tags', '--upload-pack=touch /tmp/x']),
      'from a URL': replaced('/tmp/scratch', 'ssh://host/repo'),
      'from a relative path': replaced('/tmp/scratch', 'relative/path'),
      'forced': replaced('refs/heads/candor/rant-01h:refs/heads/candor/rant-01h', '+refs/heads/candor/rant-01h:refs/heads/candor/rant-01h'),
      'into another branch': replaced('refs/heads/candor/rant-01h:refs/heads/candor/rant-01h', 'refs/heads/candor/rant-01h:refs/heads/main'),
      'outside candor/': replaced('refs/heads/candor/rant-01h:refs/heads/candor/rant-01h', 'refs/heads/main:refs/heads/main'),
      'two refspecs': [...HANDOFF, 'refs/heads/candor/y:refs/heads/candor/y'],
      'no refspec': HANDOFF.slice(0, -1),
    };
    for (const [what, argv] of Object.entries(others)) assert.ok(judged(argv) !== undefined, `${what}: ${argv.join(' ')}`);
  });

  it('passes a push of exactly the guard\'s shape, and fails every other push', () => {
    assert.equal(judged(PUSH), undefined);
    const push = (edit: (words: string[]) => string[]): string[] => edit([...PUSH]);
    const at = (word: string): number => PUSH.indexOf(word);
    const others: Record<string, string[]> = {
      'a plain push': ['push'],
      'a push of the current branch': ['push', 'origin'],
      '--force': push((w) => [...w.slice(0, at('push') + 1), '--force', ...w.slice(at('push') + 1)]),
      '-f': push((w) => [...w, '-f']),
      '--force-with-lease': push((w) => [...w.slice(0, at('origin')), '--force-with-lease', ...w.slice(at('origin'))]),
      '+refspec': push((w) => [...w.slice(0, -1), `+${REF}:${REF}`]),
      'a tag ref': push((w) => [...w.slice(0, -1), 'refs/tags/v1:refs/tags/v1']),
      'two refspecs': push((w) => [...w, 'refs/heads/candor/y:refs/heads/candor/y']),
      'a non-candor branch': push((w) => [...w.slice(0, -1), 'refs/heads/main:refs/heads/main']),
      'a different src:dst': push((w) => [...w.slice(0, -1), `${REF}:refs/heads/candor/other`]),
      '--mirror': push((w) => [...w.slice(0, at('push') + 1), '--mirror', ...w.slice(at('push') + 1)]),
      '--all': push((w) => [...w.slice(0, -1), '--all']),
      '--delete': push((w) => [...w.slice(0, at('origin')), '--delete', ...w.slice(at('origin'))]),
      '--tags': push((w) => [...w.slice(0, at('origin')), '--tags', ...w.slice(at('origin'))]),
      'without --no-follow-tags': push((w) => w.filter((x) => x !== '--no-follow-tags')),
      'with submodules': push((w) => w.map((x) => (x === '--recurse-submodules=no' ? '--recurse-submodules=on-demand' : x))),
      'missing hooksPath': push((w) => w.filter((x, i) => x !== HOOKS && w[i + 1] !== HOOKS)),
      'two hooks folders': push((w) => [...w.slice(0, at('push')), '-c', 'core.hooksPath=/b', ...w.slice(at('push'))]),
      'push.followTags=true': push((w) => w.map((x) => (x === 'push.followTags=false' ? 'push.followTags=true' : x))),
      'without push.recurseSubmodules=no': push((w) => w.filter((x, i) => x !== 'push.recurseSubmodules=no' && w[i + 1] !== 'push.recurseSubmodules=no')),
      'an extra -c': push((w) => [...w.slice(0, at('push')), '-c', 'protocol.allow=always', ...w.slice(at('push'))]),
      'a credential.helper override': push((w) => [...w.slice(0, at('push')), '-c', 'credential.helper=', ...w.slice(at('push'))]),
      'to a URL': push((w) => w.map((x) => (x === 'origin' ? 'https://github.com/o/r.git' : x))),
      'to a path': push((w) => w.map((x) => (x === 'origin' ? '/tmp/remote.git' : x))),
      'with --receive-pack': push((w) => [...w.slice(0, at('origin')), '--receive-pack=touch /tmp/x', ...w.slice(at('origin'))]),
    };
    for (const [what, argv] of Object.entries(others)) assert.ok(judged(argv) !== undefined, `${what}: ${argv.join(' ')}`);
  });

  it("passes the reads VS Code's git extension runs, dual-use verbs included", () => {
    for (const argv of [
      ['rev-parse', '--show-toplevel'], ['rev-parse', '--git-dir', '--git-common-dir'], ['config', '--get', 'commit.template'],
      ['config', '--get-all', 'user.name'], ['config', '--local', '-l'], ['config', '--local', 'branch.main.remote'],
      ['for-each-ref', '--format', '%(refname:short)%00%(upstream:short)', 'refs/heads'], ['status', '-z', '-uall'],
      ['symbolic-ref', '--short', 'HEAD'], ['remote', '--verbose'], ['check-ignore', '-v', '-z', '--stdin'], ['cat-file', '-s', 'abc123'],
      ['show', '--textconv', 'HEAD:a.txt'], ['log', '--format=%H%n%aN', '-z', '-n1'], ['ls-files', '--stage', '--', 'a.txt'],
      ['stash', 'list', '--format=%H%n%P%n%gd%n%gs', '-z'], ['stash', 'show', 'stash@{0}', '--name-status', '-z', '-u'],
      ['reflog', 'refs/heads/main', '--grep-reflog=branch: Created from *.'], ['rev-list', '--left-right', '--count', 'main...origin/main'],
      ['merge-base', 'main', 'origin/main'], ['branch'], ['branch', '--contains', 'abc123'], ['blame', '--root', '--incremental', '--', 'a.txt'],
      ['diff', '--cached'], ['ls-tree', '-l', 'HEAD', '--', 'a.txt'], ['hash-object', '-t', 'tree', '/dev/null'], ['worktree', 'list', '--porcelain'],
    ]) {
      assert.equal(judged(['-c', 'core.quotepath=false', '-c', 'color.ui=false', ...argv]), undefined, argv.join(' '));
    }
  });
});
