import * as assert from 'node:assert/strict';
import { ALLOWED_SUBCOMMANDS } from '../../../../src/core/git/allowList';
import { CALL_CONFIG, GLOBAL_OPTIONS, GUARD_GIT_ENV, gitEnvironment, transportFor } from '../../../../src/core/git/hostileConfig';

const HOST: NodeJS.ProcessEnv = {
  PATH: '/usr/bin',
  HOME: '/home/u',
  OPENAI_API_KEY: 'sk-env-key-0123456789abcdef',
  CANDOR_DATA_DIR: '/data',
  STORED: 'stored-key-from-secret-storage-42',
  HEADER: 'Authorization: Bearer stored-key-from-secret-storage-42',
  GIT_DIR: '/elsewhere/.git',
  GIT_SSH_COMMAND: 'touch /tmp/x',
  GIT_ASKPASS: '/usr/bin/evil-askpass',
  EDITOR: 'vi',
  SSH_ASKPASS: '/usr/bin/evil-askpass',
};

describe('the environment of a guarded git', () => {
  it("holds none of Candor's secrets, no inherited GIT_*, no editor or askpass program", () => {
    const env = gitEnvironment({ secrets: ['stored-key-from-secret-storage-42'], base: HOST });
    for (const gone of ['OPENAI_API_KEY', 'CANDOR_DATA_DIR', 'STORED', 'HEADER', 'GIT_DIR', 'GIT_SSH_COMMAND', 'EDITOR', 'SSH_ASKPASS']) {
      assert.equal(env[gone], undefined, gone);
    }
    assert.equal(env.GIT_ASKPASS, '', 'set and empty: no askpass program');
    assert.equal(env.PATH, '/usr/bin');
    assert.equal(env.HOME, '/home/u');
  });

  it('lets reads reach no transport at all, the hand-off only file, and the push no command or remote helper', () => {
    assert.equal(gitEnvironment({ base: HOST }).GIT_ALLOW_PROTOCOL, '');
    assert.equal(gitEnvironment({ base: HOST, transport: 'file' }).GIT_ALLOW_PROTOCOL, 'file');
    assert.equal(gitEnvironment({ base: HOST, transport: 'push' }).GIT_ALLOW_PROTOCOL, 'file:http:https:ssh', 'no ext::, fd:: or remote helper');
    assert.equal(transportFor('fetch'), 'file');
    assert.equal(transportFor('push'), 'push');
    for (const read of ALLOWED_SUBCOMMANDS.filter((name) => name !== 'fetch' && name !== 'push')) assert.equal(transportFor(read), 'none', read);
    assert.equal(gitEnvironment({ base: HOST }).GIT_NO_LAZY_FETCH, '1');
    assert.equal(gitEnvironment({ base: HOST }).GIT_TERMINAL_PROMPT, '0');
    assert.equal(gitEnvironment({ base: HOST }).GIT_OPTIONAL_LOCKS, '0');
  });

  it('sets the ceiling only when given one', () => {
    assert.equal(gitEnvironment({ base: HOST }).GIT_CEILING_DIRECTORIES, undefined);
    assert.equal(gitEnvironment({ base: HOST, ceiling: '/home/u' }).GIT_CEILING_DIRECTORIES, '/home/u');
  });

  it('every GIT_* it sets is one simple-git is told to let through', () => {
    const env = gitEnvironment({ base: HOST, ceiling: '/x', transport: 'push' });
    const own = Object.keys(env).filter((key) => key.startsWith('GIT_'));
    assert.deepEqual(own.sort(), [...GUARD_GIT_ENV].sort());
  });

  it('every call turns off fsmonitor, signatures and the pager', () => {
    assert.ok(CALL_CONFIG.includes('core.fsmonitor=false'));
    assert.ok(CALL_CONFIG.includes('log.showSignature=false'));
    assert.deepEqual([...GLOBAL_OPTIONS], ['--no-pager']);
  });
});
