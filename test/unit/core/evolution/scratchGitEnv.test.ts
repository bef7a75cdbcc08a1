// Git in the scratch clone gets an allow-listed environment: what the
// model's code could make git run (an alias here stands in for a filter or
// a hook) sees no credential of the host, whether or not the caller named it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { scratchGit } from '../../../../src/core/evolution/scratchGit';
import { git, removeTempDirs, tempDir } from './helpers';

describe('git in the scratch clone: an allow-listed environment', () => {
  afterEach(() => removeTempDirs());

  it('passes PATH, not HOME, no inherited GIT_* variable and no variable the allow-list does not name, even one holding a secret under a harmless name; no user or system config', async () => {
    const dataDir = tempDir('candor-data-');
    const dir = path.join(dataDir, 'scratch', 'repo');
    fs.mkdirSync(dir, { recursive: true });
    git(dir, 'init', '-q');
    const planted = { DEPLOY_NOTE: 'ghp_ThisLooksHarmless0123456789abcdefghij', AWS_SECRET_ACCESS_KEY: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY', GIT_PLANTED_BY_HOST: 'x', GIT_CONFIG_GLOBAL: path.join(dataDir, 'user.gitconfig') };
    Object.assign(process.env, planted);
    try {
      // The trap: the deny-list alone (a credential-looking name) lets the harmless-named one through.
      const seen = await scratchGit({ dataDir, dir }, ['-c', 'alias.printenv=!env', 'printenv']);
      assert.match(seen, /^PATH=/m);
      // No home: the user's ~/.gitconfig (its filter drivers) is never read for the clone.
      assert.doesNotMatch(seen, /^(HOME|XDG_CONFIG_HOME)=/m);
      assert.match(seen, /^GIT_CONFIG_GLOBAL=\/dev\/null$/m);
      assert.match(seen, /^GIT_CONFIG_NOSYSTEM=1$/m);
      assert.doesNotMatch(seen, /^GIT_PLANTED_BY_HOST=/m, 'no GIT_* variable of the host');
      assert.equal(seen.includes(planted.DEPLOY_NOTE), false, 'the harmless-named secret stays out');
      assert.equal(seen.includes(planted.AWS_SECRET_ACCESS_KEY), false);
      assert.doesNotMatch(seen, /^(DEPLOY_NOTE|AWS_SECRET_ACCESS_KEY|OPENAI_API_KEY)=/m);
    } finally {
      for (const name of Object.keys(planted)) delete process.env[name];
    }
  });
});
