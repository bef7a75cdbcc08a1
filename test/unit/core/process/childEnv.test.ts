import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childEnv } from '../../../../src/core/process/childEnv';

const GITHUB = `ghp_${randomBytes(18).toString('hex')}`;
const STORED_KEY = `stored-${randomBytes(10).toString('hex')}`;

/**
 * What a program git starts sees (a filter driver of a trusted repository
 * runs the same way): a shell alias that prints its environment.
 */
function envSeenThroughGit(env: NodeJS.ProcessEnv, cwd: string): string {
  const run = spawnSync('git', ['-c', 'alias.showenv=!env', 'showenv'], { env, cwd, encoding: 'utf8', timeout: 10_000 });
  assert.equal(run.status, 0, run.stderr);
  return run.stdout;
}

describe('childEnv: the environment of git', () => {
  let home: string;
  let host: NodeJS.ProcessEnv;
  beforeEach(() => {
    home = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-childenv-'));
    fs.writeFileSync(path.join(home, '.gitconfig'), '[user]\n\tname = From The Home\n');
    host = {
      PATH: process.env.PATH,
      HOME: home,
      LANG: 'C.UTF-8',
      GITHUB_TOKEN: GITHUB,
      DEPLOY_PASSWORD: 'deploy-password-1',
      OPENAI_API_KEY: 'sk-env-key-0123456789',
      CANDOR_DATA_DIR: '/data',
      GIT_CONFIG_GLOBAL: path.join(home, 'elsewhere'),
      HOLDER: `x${STORED_KEY}x`,
      EDITOR: 'vi',
    };
  });
  afterEach(() => fs.rmSync(home, { recursive: true, force: true }));

  it('the trap: with the host\'s environment, a program git starts sees the token', () => {
    assert.ok(envSeenThroughGit(host, home).includes(GITHUB));
  });

  it('drops credential-looking names, Candor\'s and git\'s variables and values holding a secret; keeps what git needs', () => {
    const env = childEnv([STORED_KEY], host);
    assert.deepEqual(Object.keys(env).sort(), ['EDITOR', 'HOME', 'LANG', 'PATH']);
    const seen = envSeenThroughGit(env, home);
    for (const secret of [GITHUB, 'deploy-password-1', 'sk-env-key-0123456789', STORED_KEY]) assert.ok(!seen.includes(secret), secret);
    // git still finds its own config through HOME.
    const run = spawnSync('git', ['config', '--get', 'user.name'], { env, cwd: home, encoding: 'utf8', timeout: 10_000 });
    assert.equal(run.stdout.trim(), 'From The Home');
  });
});
