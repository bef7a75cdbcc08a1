import * as assert from 'node:assert/strict';
import { ALLOWED_SUBCOMMANDS, checkInvocation, invocationProblem, isHandoffBranchName, type AllowedSubcommand, type Invocation } from '../../../src/core/git/allowList';
import { GitGuardError } from '../../../src/core/git/errors';

const FORBIDDEN = ['stash', 'reset', 'clean', 'checkout', 'switch', 'restore', 'rebase', 'merge', 'commit', 'push', 'pull', 'gc', 'update-index', 'add', 'rm', 'mv', 'apply', 'am', 'cherry-pick', 'revert', 'tag', 'update-ref', 'worktree', 'maintenance', 'repack', 'prune', 'init', 'clone'];

const HANDOFF: Invocation = {
  subcommand: 'fetch',
  config: ['gc.auto=0', 'maintenance.auto=false'],
  args: ['--no-tags', '/tmp/scratch', 'refs/heads/candor/rant-01h:refs/heads/candor/rant-01h'],
};

function refused(invocation: Invocation): boolean {
  return invocationProblem(invocation) !== undefined;
}

describe('git allow-list', () => {
  it('holds only read subcommands and the hand-off fetch', () => {
    assert.deepEqual([...ALLOWED_SUBCOMMANDS].sort(), ['branch', 'cat-file', 'config', 'diff', 'diff-files', 'fetch', 'for-each-ref', 'log', 'ls-files', 'rev-list', 'rev-parse', 'show', 'status', 'symbolic-ref']);
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

  it('allows branch only in listing forms', () => {
    assert.ok(!refused({ subcommand: 'branch', args: ['--list'] }));
    assert.ok(!refused({ subcommand: 'branch', args: ['--list', 'candor/*'] }));
    assert.ok(!refused({ subcommand: 'branch', args: ['--show-current'] }));
    assert.ok(!refused({ subcommand: 'branch', args: ['-a', '--format=%(refname)'] }));
    assert.ok(refused({ subcommand: 'branch', args: ['new-branch'] }), 'creating');
    assert.ok(refused({ subcommand: 'branch', args: ['-D', 'main'] }), 'deleting');
    assert.ok(refused({ subcommand: 'branch', args: ['-f', 'main', 'HEAD~1'] }), 'moving');
    assert.ok(refused({ subcommand: 'branch', args: ['-m', 'a', 'b'] }), 'renaming');
    assert.ok(refused({ subcommand: 'branch', args: ['--set-upstream-to=origin/main'] }));
  });

  it('allows config only as --get of one key', () => {
    assert.ok(!refused({ subcommand: 'config', args: ['--get', 'user.name'] }));
    assert.ok(refused({ subcommand: 'config', args: ['user.name', 'x'] }));
    assert.ok(refused({ subcommand: 'config', args: ['--get', '--unset', 'user.name'] }));
    assert.ok(refused({ subcommand: 'config', args: ['--add', 'core.hooksPath', '/x'] }));
  });

  it('allows symbolic-ref only to read HEAD', () => {
    assert.ok(!refused({ subcommand: 'symbolic-ref', args: ['-q', 'HEAD'] }));
    assert.ok(refused({ subcommand: 'symbolic-ref', args: ['HEAD', 'refs/heads/other'] }));
    assert.ok(refused({ subcommand: 'symbolic-ref', args: ['--delete', 'HEAD'] }));
  });

  it('allows diff only against the index (--cached), never --no-index', () => {
    assert.ok(!refused({ subcommand: 'diff', args: ['--cached'] }));
    assert.ok(refused({ subcommand: 'diff', args: [] }), 'a bare diff may refresh the index');
    assert.ok(refused({ subcommand: 'diff', args: ['--cached', '--no-index', '/etc/passwd', 'x'] }));
  });

  it('refuses options that write files or run programs, but not the same words as paths', () => {
    assert.ok(refused({ subcommand: 'log', args: ['--output=/tmp/x'] }));
    assert.ok(refused({ subcommand: 'show', args: ['--ext-diff'] }));
    assert.ok(refused({ subcommand: 'cat-file', args: ['--filters', 'HEAD:x'] }));
    assert.ok(!refused({ subcommand: 'log', args: ['HEAD', '--', '--output=file-named-so'] }));
    assert.ok(!refused({ subcommand: 'show', args: ['--end-of-options', 'HEAD'] }));
  });

  it('allows fetch only in the exact hand-off shape', () => {
    assert.ok(!refused(HANDOFF));
    assert.ok(!refused({ ...HANDOFF, args: ['--no-tags', '--no-write-fetch-head', '--no-recurse-submodules', ...HANDOFF.args.slice(1)] }));
    assert.ok(refused({ ...HANDOFF, config: [] }), 'without gc.auto=0');
    assert.ok(refused({ ...HANDOFF, config: ['gc.auto=0'] }), 'without maintenance.auto=false');
    assert.ok(refused({ ...HANDOFF, config: [...(HANDOFF.config ?? []), 'core.hooksPath=/x'] }));
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

  it('accepts only candor/<safe name> for the hand-off', () => {
    for (const good of ['candor/rant-01hx4k', 'candor/revert-abc1234', 'candor/a.b_c-d']) assert.ok(isHandoffBranchName(good), good);
    for (const bad of ['main', 'candor/', 'candor/../main', 'candor/a..b', 'candor/-x', 'candor/x y', 'candor/X', 'candor/a/b', 'candor/x.lock', 'candor/x.', 'refs/heads/candor/x', 'candor/x:y', 'candor/x\n']) {
      assert.ok(!isHandoffBranchName(bad), bad);
    }
  });
});
