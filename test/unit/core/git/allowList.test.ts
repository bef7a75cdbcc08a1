import * as assert from 'node:assert/strict';
import { ALLOWED_SUBCOMMANDS, checkInvocation, invocationProblem, isHandoffBranchName, type AllowedSubcommand, type Invocation } from '../../../../src/core/git/allowList';
import { GitGuardError } from '../../../../src/core/git/errors';
import { WRITING_VERBS } from '../../../helpers/gitSpy';

/** Every writing git verb but the two the guard runs in one shape each: the hand-off's fetch and config's name listing. */
const FORBIDDEN = WRITING_VERBS.filter((verb) => verb !== 'fetch' && verb !== 'config');

const HANDOFF: Invocation = {
  subcommand: 'fetch',
  config: ['gc.auto=0', 'maintenance.auto=false', 'core.alternateRefsCommand=', 'credential.helper=', 'core.hooksPath=/tmp/candor-no-hooks-x'],
  args: ['--no-tags', '/tmp/scratch', 'refs/heads/candor/rant-01h:refs/heads/candor/rant-01h'],
};

const without = (pair: string): Invocation => ({ ...HANDOFF, config: (HANDOFF.config ?? []).filter((p) => p !== pair) });

function refused(invocation: Invocation): boolean {
  return invocationProblem(invocation) !== undefined;
}

describe('git allow-list', () => {
  it('holds only read subcommands and the hand-off fetch', () => {
    assert.deepEqual([...ALLOWED_SUBCOMMANDS].sort(), ['config', 'diff', 'diff-files', 'fetch', 'log', 'ls-files', 'ls-remote', 'rev-parse', 'show', 'status']);
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

  it('allows ls-remote only as --get-url of an absolute local path (it never connects)', () => {
    assert.ok(!refused({ subcommand: 'ls-remote', args: ['--get-url', '/tmp/scratch'] }));
    assert.ok(refused({ subcommand: 'ls-remote', args: ['/tmp/scratch'] }), 'a listing connects');
    assert.ok(refused({ subcommand: 'ls-remote', args: ['--get-url', 'origin'] }));
    assert.ok(refused({ subcommand: 'ls-remote', args: ['--get-url', 'ssh://host/repo'] }));
    assert.ok(refused({ subcommand: 'ls-remote', args: ['--get-url', '--upload-pack=touch /tmp/x', '/tmp/scratch'] }));
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

  it('accepts only candor/<safe name> for the hand-off: the names evolution ships, and no "." or "_"', () => {
    for (const good of ['candor/rant-01hx4k', 'candor/revert-abc1234', 'candor/a-b-c', `candor/${'a'.repeat(80)}`]) assert.ok(isHandoffBranchName(good), good);
    for (const bad of ['main', 'candor/', 'candor/../main', 'candor/a..b', 'candor/-x', 'candor/x y', 'candor/X', 'candor/a/b', 'candor/x.lock', 'candor/x.', 'refs/heads/candor/x', 'candor/x:y', 'candor/x\n', 'candor/a.b', 'candor/a_b', `candor/${'a'.repeat(81)}`]) {
      assert.ok(!isHandoffBranchName(bad), bad);
    }
  });
});
