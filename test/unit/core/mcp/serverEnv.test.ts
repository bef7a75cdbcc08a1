import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mcpServerEnvironment } from '../../../../src/core/mcp/serverEnv';
import type { McpServerDefinition } from '../../../../src/core/mcp/types';
import { expandServer } from '../../../../src/core/mcp/variables';

const hex = (n: number): string => randomBytes(n).toString('hex');
const OPENAI = `sk-${hex(20)}`;
const AWS = `aws-${hex(16)}`;
const GITHUB = `ghp_${hex(18)}`;
const DB_PASSWORD = `db-${hex(8)}`;
const STORED_KEY = `stored-${hex(12)}`;

/** A developer's shell, credentials and all. */
function hostEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: '/root',
    USER: 'root',
    LOGNAME: 'root',
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'xterm-256color',
    SHELL: '/bin/bash',
    XDG_RUNTIME_DIR: '/run/user/0',
    SSH_AUTH_SOCK: '/tmp/ssh-1/agent.1',
    OPENAI_API_KEY: OPENAI,
    AWS_SECRET_ACCESS_KEY: AWS,
    GITHUB_TOKEN: GITHUB,
    MY_DB_URL: `postgres://app:${DB_PASSWORD}@db/app`,
    HTTPS_PROXY: 'http://me:proxy-pass-1@proxy:3128',
    CANDOR_DATA_DIR: '/data',
    GIT_DIR: '/elsewhere/.git',
    COPIED: `prefix-${STORED_KEY}`,
    NODE_OPTIONS: '--require /tmp/evil.js',
  };
}

/** What a real child process sees in its environment. */
function seenByChild(env: NodeJS.ProcessEnv): Record<string, string> {
  const run = spawnSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(process.env))'], { env, encoding: 'utf8', timeout: 20_000 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as Record<string, string>;
}

describe('mcpServerEnvironment: what a local MCP server inherits', () => {
  it('passes the short allow-list and none of the host credentials', () => {
    const { env } = mcpServerEnvironment({ definitionEnv: {}, withhold: [STORED_KEY], base: hostEnv() });
    const seen = seenByChild(env);
    for (const name of ['OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'MY_DB_URL', 'HTTPS_PROXY', 'SSH_AUTH_SOCK', 'CANDOR_DATA_DIR', 'GIT_DIR', 'NODE_OPTIONS', 'SHELL', 'XDG_RUNTIME_DIR', 'COPIED']) {
      assert.equal(seen[name], undefined, `${name} reached the server`);
    }
    const text = JSON.stringify(seen);
    for (const secret of [OPENAI, AWS, GITHUB, DB_PASSWORD, STORED_KEY]) assert.ok(!text.includes(secret));
    for (const name of ['PATH', 'HOME', 'USER', 'LOGNAME', 'TMPDIR', 'LANG', 'LC_ALL', 'TERM']) assert.equal(seen[name], hostEnv()[name], name);
  });

  it("sets the definition's own variables verbatim, over an inherited one of the same name", () => {
    const own = `own-${hex(8)}`;
    const { env } = mcpServerEnvironment({ definitionEnv: { GITHUB_TOKEN: own, HOME: '/srv/home', 'WEIRD.NAME': 'a b' }, withhold: [STORED_KEY], base: hostEnv() });
    const seen = seenByChild(env);
    assert.equal(seen.GITHUB_TOKEN, own);
    assert.equal(seen.HOME, '/srv/home');
    assert.equal(seen['WEIRD.NAME'], 'a b');
    assert.ok(!JSON.stringify(seen).includes(GITHUB));
  });

  it('passes "env": {"GITHUB_TOKEN": "${input:gh}"} as typed, and nothing else of the host', async () => {
    const typed = `ghp_typed_${hex(10)}`;
    const def: McpServerDefinition = {
      name: 'github',
      source: { kind: 'workspace', folder: '/w', file: '/w/.vscode/mcp.json' },
      type: 'stdio',
      command: process.execPath,
      args: [],
      env: { GITHUB_TOKEN: '${input:gh}' },
    };
    const result = await expandServer(def, {
      env: hostEnv(),
      allowedEnvNames: [],
      inputs: [{ id: 'gh', description: 'GitHub token', password: true }],
      input: () => Promise.resolve(typed),
      withhold: [STORED_KEY],
    });
    assert.ok(result.ok && result.server.type === 'stdio', result.ok ? '' : result.reason);
    const seen = seenByChild(result.server.env);
    assert.equal(seen.GITHUB_TOKEN, typed);
    assert.ok(result.secrets.includes(typed));
    for (const secret of [OPENAI, AWS, GITHUB, DB_PASSWORD, STORED_KEY]) assert.ok(!JSON.stringify(seen).includes(secret));
  });
});
