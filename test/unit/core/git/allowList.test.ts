import * as assert from 'node:assert/strict';
import { ALLOWED_SUBCOMMANDS, checkInvocation, invocationProblem, isHandoffBranchName, type AllowedSubcommand, type Invocation } from '../../../../src/core/git/allowList';
import { GitGuardError } from '../../../../src/core/git/errors';
import { WRITING_VERBS } from '../../../helpers/gitSpy';

/** Every writing git verb but the three the guard runs in one shape each: the hand-off's fetch, the push and config's name listing. */
const FORBIDDEN = WRITING_VERBS.filter((verb) => verb !== 'fetch' && verb !== 'push' && verb !== 'config');

const HANDOFF: Invocation = {
  subcommand: 'fetch',
  config: ['gc.auto=0', 'maintenance.auto=false', 'core.alternateRefsCommand=', 'credential.helper=', 'core.hooksPath=/tmp/candor-no-hooks-x'],
  args: ['--no-tags', '/tmp/scratch', 'refs/heads/candor/rant-01h:refs/heads/candor/rant-01h'],
};

const REF = 'refs/heads/candor/rant-01h';
const HOOKS = 'core.hooksPath=/tmp/candor-no-hooks-x';
const PUSH_CONFIG = ['push.followTags=false', 'push.recurseSubmodules=no'];
/** The push exactly as the guard runs it. */
const PUSH: Invocation = { subcommand: 'push', config: [...PUSH_CONFIG, HOOKS], args: ['--no-follow-tags', '--recurse-submodules=no', 'origin', `${REF}:${REF}`] };

const without = (pair: string): Invocation => ({ ...HANDOFF, config: (HANDOFF.config ?? []).filter((p) => p !== pair) });

function refused(invocation: Invocation): boolean {
  return invocationProblem(invocation) !== undefined;
}

describe('git allow-list', () => {
  it('holds only read subcommands, the hand-off fetch and the push', () => {
    assert.deepEqual([...ALLOWED_SUBCOMMANDS].sort(), ['config', 'diff', 'diff-files', 'fetch', 'log', 'ls-files', 'ls-remote', 'push', 'rev-parse', 'show', 'status']);
    for (const word of FORBIDDEN) assert.ok(!(ALLOWED_SUBCOMMANDS as readonly string[]).includes(word), word);
  });

  it('refuses a forbidden subcommand even when a cast smuggles it past the type', () => {
    for (const word of FORBIDDEN) {
      assert.throws(
        () => checkInvocation({ subcommand: word as AllowedSubcommand, args: [] }),
        (err: unknown) => err instanceof GitGuardError && err.kind === 'forbidden',
        word,
      );
    }
  });

  it('allows config only to list names, never a value or a write', () => {
    assert.ok(!refused({ subcommand: 'config', args: ['-z', '--name-only', '--list'] }));
    assert.ok(refused({ subcommand: 'config', args: ['--list'] }), 'values may hold credentials');
    assert.ok(refused({ subcommand: 'config', args: ['--get', 'user.name'] }));
    assert.ok(refused({ subcommand: 'config', args: ['user.name', 'x'] }));
    assert.ok(refused({ subcommand: 'config', args: ['--name-only', '--list', '--unset', 'user.name'] }));
    assert.ok(refused({ subcommand: 'config', args: ['--add', 'core.hooksPath', '/x'] }));
  });

  it('allows ls-remote only as --get-url of an absolute local path or a remote name (it never connects)', () => {
    assert.ok(!refused({ subcommand: 'ls-remote', args: ['--get-url', '/tmp/scratch'] }));
    for (const name of ['origin', 'upstream', 'my-fork', 'Fork_2.old']) assert.ok(!refused({ subcommand: 'ls-remote', args: ['--get-url', name] }), name);
    assert.ok(refused({ subcommand: 'ls-remote', args: ['/tmp/scratch'] }), 'a listing connects');
    assert.ok(refused({ subcommand: 'ls-remote', args: ['origin'] }), 'a listing of a remote connects');
    for (const target of ['ssh://host/repo', 'git@host:o/r', 'relative/path', '../up', '-x', '.hidden', '', 'a b', `a${'b'.repeat(63)}`, 'origin\n']) {
      assert.ok(refused({ subcommand: 'ls-remote', args: ['--get-url', target] }), JSON.stringify(target));
    }
    assert.ok(refused({ subcommand: 'ls-remote', args: ['--get-url', '--upload-pack=touch /tmp/x', '/tmp/scratch'] }));
    assert.ok(refused({ subcommand: 'ls-remote', args: ['--get-url', 'origin', 'other'] }));
  });

  it('allows diff only against the index (--cached), never --no-index', () => {
    assert.ok(!refused({ subcommand: 'diff', args: ['--cached'] }));
    assert.ok(refused({ subcommand: 'diff', args: [] }), 'a bare diff may refresh the index');
    assert.ok(refused({ subcommand: 'diff', args: ['--cached', '--no-index', '/etc/passwd', 'x'] }));
  });

  it('refuses options that write files or run programs, but not the same words as paths', () => {
    assert.ok(refused({ subcommand: 'log', args: ['--output=/tmp/x'] }));
    assert.ok(refused({ subcommand: 'show', args: ['--ext-diff'] }));
    assert.ok(refused({ subcommand: 'show', args: ['--textconv', 'HEAD'] }));
    assert.ok(refused({ subcommand: 'log', args: ['--show-signature'] }));
    assert.ok(refused({ subcommand: 'log', args: ['--format=%H %G?'] }), '%G verifies signatures');
    assert.ok(!refused({ subcommand: 'log', args: ['--format=%H %s'] }));
    assert.ok(!refused({ subcommand: 'log', args: ['HEAD', '--', '--output=file-named-so'] }));
    assert.ok(!refused({ subcommand: 'show', args: ['--end-of-options', 'HEAD'] }));
  });

  it('allows fetch only in the exact hand-off shape', () => {
    assert.ok(!refused(HANDOFF));
    assert.ok(!refused({ ...HANDOFF, args: ['--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', ...HANDOFF.args.slice(1)] }));
    assert.ok(refused({ ...HANDOFF, config: [] }), 'without config');
    for (const pair of HANDOFF.config ?? []) assert.ok(refused(without(pair)), `without ${pair}`);
    assert.ok(refused({ ...HANDOFF, config: [...(HANDOFF.config ?? []), 'core.hooksPath=/x'] }), 'two hooks folders');
    const noHooks = without('core.hooksPath=/tmp/candor-no-hooks-x').config ?? [];
    assert.ok(refused({ ...HANDOFF, config: [...noHooks, 'core.hooksPath=hooks'] }), 'a relative hooks folder');
    assert.ok(refused({ ...HANDOFF, config: [...(HANDOFF.config ?? []), 'protocol.allow=always'] }));
    assert.ok(refused({ ...HANDOFF, args: ['--no-tags', '--update-head-ok', ...HANDOFF.args.slice(1)] }));
    assert.ok(refused({ ...HANDOFF, args: ['--no-tags', '--upload-pack=touch /tmp/x', ...HANDOFF.args.slice(1)] }));
    assert.ok(refused({ ...HANDOFF, args: ['/tmp/scratch', HANDOFF.args[2] ?? ''] }), 'without --no-tags');
    assert.ok(refused({ ...HANDOFF, args: ['--no-tags', '/tmp/scratch', '+refs/heads/candor/x:refs/heads/candor/x'] }), 'forced');
    assert.ok(refused({ ...HANDOFF, args: ['--no-tags', '/tmp/scratch', 'refs/heads/candor/x:refs/heads/main'] }), 'into another branch');
    assert.ok(refused({ ...HANDOFF, args: ['--no-tags', '/tmp/scratch', 'refs/heads/main:refs/heads/main'] }), 'outside candor/');
    assert.ok(refused({ ...HANDOFF, args: ['--no-tags', 'ssh://host/repo', HANDOFF.args[2] ?? ''] }), 'remote URL');
    assert.ok(refused({ ...HANDOFF, args: ['--no-tags', 'relative/path', HANDOFF.args[2] ?? ''] }), 'relative path');
    assert.ok(refused({ ...HANDOFF, args: [...HANDOFF.args, 'refs/heads/candor/y:refs/heads/candor/y'] }), 'two refspecs');
    assert.ok(refused({ subcommand: 'log', config: ['gc.auto=0'], args: [] }), 'per-call config outside the fetch');
  });

  it('allows push only in the exact shape: one evolution branch, same name, no tags, no submodules, no hooks, no force', () => {
    assert.ok(!refused(PUSH), invocationProblem(PUSH));
    const args = (...replace: ReadonlyArray<readonly [number, string | null]>): Invocation => {
      const next = [...PUSH.args];
      for (const [at, word] of replace) next[at] = word ?? '';
      return { ...PUSH, args: next.filter((arg) => arg !== '') };
    };
    const config = (pairs: readonly string[]): Invocation => ({ ...PUSH, config: pairs });
    const single: Record<string, Invocation> = {
      '--force': { ...PUSH, args: ['--force', ...PUSH.args] },
      '-f': { ...PUSH, args: [...PUSH.args.slice(0, 2), '-f', ...PUSH.args.slice(2)] },
      '--force-with-lease': { ...PUSH, args: [...PUSH.args.slice(0, 2), '--force-with-lease', ...PUSH.args.slice(2)] },
      'a + refspec': args([3, `+${REF}:${REF}`]),
      'a tag ref': args([3, 'refs/tags/v1:refs/tags/v1']),
      'a tag of a candor name': args([3, 'refs/tags/candor/rant-01h:refs/tags/candor/rant-01h']),
      'two refspecs': { ...PUSH, args: [...PUSH.args, 'refs/heads/candor/other:refs/heads/candor/other'] },
      'a non-candor branch': args([3, 'refs/heads/main:refs/heads/main']),
      'a different src:dst': args([3, `${REF}:refs/heads/candor/other`]),
      'a short refspec': args([3, 'candor/rant-01h']),
      'a delete refspec': args([3, `:${REF}`]),
      '--mirror': { ...PUSH, args: ['--mirror', ...PUSH.args] },
      '--all': { ...PUSH, args: [...PUSH.args.slice(0, 2), '--all', PUSH.args[2] ?? ''] },
      '--delete': { ...PUSH, args: [...PUSH.args.slice(0, 2), '--delete', ...PUSH.args.slice(2)] },
      '--tags': { ...PUSH, args: [...PUSH.args.slice(0, 2), '--tags', ...PUSH.args.slice(2)] },
      '--follow-tags instead of --no-follow-tags': args([0, '--follow-tags']),
      'without --no-follow-tags': args([0, null]),
      'submodules pushed': args([1, '--recurse-submodules=on-demand']),
      'without --recurse-submodules=no': args([1, null]),
      '--receive-pack': { ...PUSH, args: [...PUSH.args.slice(0, 2), '--receive-pack=touch /tmp/x', ...PUSH.args.slice(2)] },
      'a push option': { ...PUSH, args: [...PUSH.args.slice(0, 2), '-o', 'ci.skip', ...PUSH.args.slice(2)] },
      'a URL for a remote': args([2, 'https://github.com/o/r.git']),
      'a path for a remote': args([2, '/tmp/remote.git']),
      'an option for a remote': args([2, '--repo=x']),
      'no remote': args([2, null]),
      'missing hooksPath': config(PUSH_CONFIG),
      'a relative hooksPath': config([...PUSH_CONFIG, 'core.hooksPath=hooks']),
      'push.followTags=true': config(['push.followTags=true', 'push.recurseSubmodules=no', HOOKS]),
      'push.recurseSubmodules=check': config(['push.followTags=false', 'push.recurseSubmodules=check', HOOKS]),
      'an extra -c': config([...PUSH.config ?? [], 'protocol.allow=always']),
      'a credential.helper override': config([...PUSH.config ?? [], 'credential.helper=']),
      'no config': config([]),
    };
    for (const [what, invocation] of Object.entries(single)) {
      assert.ok(refused(invocation), `${what}: -c ${(invocation.config ?? []).join(' -c ')} push ${invocation.args.join(' ')}`);
    }
  });

  it('accepts only candor/<safe name> for the hand-off: the names evolution ships, and no "." or "_"', () => {
    for (const good of ['candor/rant-01hx4k', 'candor/revert-abc1234', 'candor/a-b-c', `candor/${'a'.repeat(80)}`]) assert.ok(isHandoffBranchName(good), good);
    for (const bad of ['main', 'candor/', 'candor/../main', 'candor/a..b', 'candor/-x', 'candor/x y', 'candor/X', 'candor/a/b', 'candor/x.lock', 'candor/x.', 'refs/heads/candor/x', 'candor/x:y', 'candor/x\n', 'candor/a.b', 'candor/a_b', `candor/${'a'.repeat(81)}`]) {
      assert.ok(!isHandoffBranchName(bad), bad);
    }
  });
});
