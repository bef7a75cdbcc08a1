import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDotenv } from '../../../../src/core/mcp/dotenv';
import type { McpInput, McpServerDefinition, McpSource } from '../../../../src/core/mcp/types';
import { expandServer, type ExpandContext, type ExpandResult } from '../../../../src/core/mcp/variables';

const hex = (n: number): string => randomBytes(n).toString('hex');
const OPENAI = `sk-${hex(20)}`;
const GITHUB = `ghp_${hex(18)}`;
const AWS = `aws-${hex(16)}`;
const STORED_KEY = `stored-${hex(12)}`;

const USER: McpSource = { kind: 'user' };

function hostEnv(): NodeJS.ProcessEnv {
  return {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: '/home/dev',
    LANG: 'C.UTF-8',
    OPENAI_API_KEY: OPENAI,
    GITHUB_TOKEN: GITHUB,
    AWS_SECRET_ACCESS_KEY: AWS,
    MY_DB_URL: 'postgres://app:db-password-123@db/app',
    MYAPP_MODE: 'test',
    MYAPP_TOKEN: `myapp-${hex(8)}`,
    CANDOR_DATA_DIR: '/data',
    GIT_DIR: '/elsewhere/.git',
    COPIED: `x${STORED_KEY}x`,
  };
}

/** A context whose inputs answer from `answers`, recording every question. */
function context(o: Partial<ExpandContext> & { answers?: Record<string, string | undefined> } = {}): ExpandContext & { asked: string[] } {
  const asked: string[] = [];
  return {
    env: hostEnv(),
    allowedEnvNames: [],
    inputs: [],
    userHome: '/home/dev',
    withhold: [STORED_KEY],
    ...o,
    asked,
    input: (_input: McpInput | undefined, id: string) => {
      asked.push(id);
      return Promise.resolve(o.answers?.[id]);
    },
  };
}

function stdio(fields: Partial<Extract<McpServerDefinition, { type: 'stdio' }>>, source: McpSource = USER): McpServerDefinition {
  return { name: 'srv', source, type: 'stdio', command: 'node', args: [], env: {}, ...fields };
}

function remote(fields: Partial<Extract<McpServerDefinition, { type: 'http' | 'sse' | 'auto' }>>, source: McpSource = USER): McpServerDefinition {
  return { name: 'srv', source, type: 'http', url: 'https://mcp.example.com/mcp', headers: {}, ...fields };
}

function expectOk(result: ExpandResult): Extract<ExpandResult, { ok: true }> {
  assert.ok(result.ok, result.ok ? '' : result.reason);
  return result;
}

function expectRefused(result: ExpandResult, pattern: RegExp): void {
  assert.equal(result.ok, false, 'expected a refusal');
  assert.ok(!result.ok);
  assert.equal(result.kind, 'refused');
  assert.match(result.reason, pattern);
}

function stdioOf(result: ExpandResult): Extract<Extract<ExpandResult, { ok: true }>['server'], { type: 'stdio' }> {
  const server = expectOk(result).server;
  assert.ok(server.type === 'stdio');
  return server;
}

describe('expandServer: the variables of a definition', () => {
  let folder: string;
  let workspace: McpSource;
  beforeEach(() => {
    folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-vars-')));
    workspace = { kind: 'workspace', folder, file: path.join(folder, '.vscode', 'mcp.json') };
  });
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }));

  it('expands ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome} and ${pathSeparator}', async () => {
    const server = stdioOf(await expandServer(stdio({ args: ['${workspaceFolder}', '${workspaceFolderBasename}', '${userHome}${pathSeparator}x', '${/}'] }, workspace), context()));
    assert.deepEqual(server.args, [folder, path.basename(folder), `/home/dev${path.sep}x`, path.sep]);
  });

  it('uses the context folder for a user definition, and refuses ${workspaceFolder} when none is open', async () => {
    const withFolder = stdioOf(await expandServer(stdio({ args: ['${workspaceFolder}/src'] }), context({ workspaceFolder: '/projects/a' })));
    assert.deepEqual(withFolder.args, ['/projects/a/src']);
    expectRefused(await expandServer(stdio({ args: ['${workspaceFolder}'] }), context()), /"args"\[0\] uses "\$\{workspaceFolder\}", but no workspace folder is open/);
  });

  it('refuses variables Candor does not expand: a typo, ${command:…}, ${config:…}', async () => {
    for (const variable of ['${foo}', '${command:extension.pickFile}', '${config:editor.fontSize}', '${workspaceFolder:other}', '${}']) {
      expectRefused(await expandServer(stdio({ args: [`--x=${variable}`] }), context()), /which Candor does not expand/);
    }
    assert.deepEqual(stdioOf(await expandServer(stdio({ args: ['$HOME', '${unclosed', '$'] }), context())).args, ['$HOME', '${unclosed', '$']);
  });

  it('reads any ${env:NAME} in a user definition, and counts a credential among the secrets', async () => {
    const result = expectOk(await expandServer(stdio({ args: ['${env:MYAPP_MODE}', '${env:NOT_SET}'], env: { GITHUB_TOKEN: '${env:GITHUB_TOKEN}' } }), context()));
    assert.ok(result.server.type === 'stdio');
    assert.deepEqual(result.server.args, ['test', '']);
    assert.equal(result.server.env.GITHUB_TOKEN, GITHUB);
    assert.ok(result.secrets.includes(GITHUB));
  });

  it('refuses a workspace mcp.json asking for ${env:OPENAI_API_KEY}, even when the setting lists it', async () => {
    const def = stdio({ env: { KEY: '${env:OPENAI_API_KEY}' } }, workspace);
    const ctx = context({ allowedEnvNames: ['OPENAI_API_KEY', '*'] });
    const result = await expandServer(def, ctx);
    expectRefused(result, /"env"\."KEY" reads "\$\{env:OPENAI_API_KEY\}", a credential/);
    assert.ok(!JSON.stringify(result).includes(OPENAI));
    for (const name of ['GITHUB_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'CANDOR_DATA_DIR', 'GIT_DIR', 'MYAPP_TOKEN']) {
      expectRefused(await expandServer(stdio({ args: [`\${env:${name}}`] }, workspace), context({ allowedEnvNames: [name, 'MYAPP_*'] })), /never reads it/);
    }
  });

  it('refuses a workspace ${env:HOME} that candor.mcp.environment does not list, and expands it once listed', async () => {
    const def = stdio({ args: ['${env:HOME}'] }, workspace);
    expectRefused(await expandServer(def, context()), /reads "\$\{env:HOME\}", which is not listed in candor.mcp.environment; add "HOME" there/);
    assert.deepEqual(stdioOf(await expandServer(def, context({ allowedEnvNames: ['home'] }))).args, ['/home/dev']);
    assert.deepEqual(stdioOf(await expandServer(stdio({ args: ['${env:MYAPP_MODE}'] }, workspace), context({ allowedEnvNames: ['MYAPP_*'] }))).args, ['test']);
  });

  it("refuses a listed workspace variable whose value holds Candor's stored key", async () => {
    expectRefused(await expandServer(stdio({ args: ['${env:COPIED}'] }, workspace), context({ allowedEnvNames: ['COPIED'] })), /holds Candor's API key/);
  });

  it('asks each input once, in order, and returns a password input among the secrets', async () => {
    const password = `pw-${hex(8)}`;
    const inputs: McpInput[] = [
      { id: 'token', description: 'Token', password: true },
      { id: 'user', description: 'User', password: false },
    ];
    const ctx = context({ inputs, answers: { token: password, user: 'alice' } });
    const result = expectOk(await expandServer(stdio({ args: ['--user=${input:user}', '--token=${input:token}', '--again=${input:token}'] }), ctx));
    assert.deepEqual(ctx.asked, ['user', 'token']);
    assert.ok(result.server.type === 'stdio');
    assert.deepEqual(result.server.args, ['--user=alice', `--token=${password}`, `--again=${password}`]);
    assert.ok(result.secrets.includes(password));
    assert.ok(!result.secrets.includes('alice'));
  });

  it('reports a cancelled input as cancelled, not as refused', async () => {
    const result = await expandServer(stdio({ args: ['${input:gone}'] }), context());
    assert.equal(result.ok, false);
    assert.ok(!result.ok && result.kind === 'cancelled');
    assert.match(result.ok ? '' : result.reason, /"gone" was not given/);
  });

  it('asks for no input when the server is refused anyway', async () => {
    const ctx = context({ answers: { a: 'x' } });
    expectRefused(await expandServer(stdio({ args: ['${input:a}', '${env:SECRET_THING}'] }, workspace), ctx), /SECRET_THING/);
    const bad = stdio({ args: ['${input:a}'], envFile: '../outside.env' }, workspace);
    expectRefused(await expandServer(bad, ctx), /has a ".."/);
    assert.deepEqual(ctx.asked, []);
  });

  it('expands in one pass: a value holding ${…} stays as it is (tried: an input answer asking for the key)', async () => {
    const ctx = context({ answers: { a: '${env:OPENAI_API_KEY}' }, env: { ...hostEnv(), INNER: '${input:a}' } });
    const server = stdioOf(await expandServer(stdio({ args: ['${input:a}', '${env:INNER}'] }), ctx));
    assert.deepEqual(server.args, ['${env:OPENAI_API_KEY}', '${input:a}']);
    assert.ok(!JSON.stringify(server).includes(OPENAI));
  });

  it('refuses a command that becomes empty or gains a newline once expanded', async () => {
    expectRefused(await expandServer(stdio({ command: '${input:c}' }), context({ answers: { c: 'node\nrm -rf /' } })), /"command" is empty or holds a control/);
    expectRefused(await expandServer(stdio({ command: '${env:NOT_SET}' }), context()), /"command" is empty/);
  });

  it('resolves a relative cwd against the folder', async () => {
    assert.equal(stdioOf(await expandServer(stdio({ cwd: 'tools' }, workspace), context())).cwd, path.join(folder, 'tools'));
    assert.equal(stdioOf(await expandServer(stdio({ cwd: '${userHome}' }), context())).cwd, '/home/dev');
    expectRefused(await expandServer(stdio({ cwd: 'tools' }), context()), /"cwd" "tools" is relative/);
  });

  it('gives the server the allow-list and its own variables, never the host credentials', async () => {
    const server = stdioOf(await expandServer(stdio({ env: { DEBUG: '1' } }), context()));
    assert.deepEqual(server.env, { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: '/home/dev', LANG: 'C.UTF-8', DEBUG: '1' });
    assert.deepEqual(server.definedEnv, ['DEBUG']);
  });

  it('marks credential headers, the token of a Bearer header, and URL passwords as secrets', async () => {
    const token = `tok-${hex(10)}`;
    const def = remote({
      url: 'https://me:url-password-1@mcp.example.com/mcp?access_token=${input:t}&page=2',
      headers: { Authorization: 'Bearer ${input:t}', 'X-Api-Key': 'literal-key-123', Cookie: 'sid=abcdef123', Accept: 'application/json' },
    });
    const result = expectOk(await expandServer(def, context({ answers: { t: token } })));
    assert.ok(result.server.type === 'http');
    assert.equal(result.server.headers.Authorization, `Bearer ${token}`);
    for (const secret of [`Bearer ${token}`, token, 'literal-key-123', 'sid=abcdef123', 'url-password-1']) assert.ok(result.secrets.includes(secret), secret);
    assert.ok(!result.secrets.includes('application/json'));
    assert.ok(!result.secrets.includes('2'));
  });

  it('refuses a URL that is not http(s) or not a URL, and a header that gains a line break', async () => {
    expectRefused(await expandServer(remote({ url: 'file:///etc/passwd' }), context()), /only http: and https:/);
    expectRefused(await expandServer(remote({ url: '${env:NOT_SET}' }), context()), /not a URL/);
    expectRefused(await expandServer(remote({ headers: { 'X-A': '${input:h}' } }), context({ answers: { h: 'a\r\nX-Evil: 1' } })), /line break/);
  });

  describe('envFile', () => {
    it('reads the dotenv file; the definition env wins over it', async () => {
      fs.writeFileSync(path.join(folder, '.env'), '# settings\nexport A=from-file\nB="two words"\nC=kept # note\nAPI_TOKEN=file-token-123\n');
      const server = stdioOf(await expandServer(stdio({ envFile: '${workspaceFolder}/.env', env: { A: 'from-definition' } }, workspace), context()));
      assert.equal(server.env.A, 'from-definition');
      assert.equal(server.env.B, 'two words');
      assert.equal(server.env.C, 'kept');
      assert.deepEqual([...(server.definedEnv ?? [])].sort(), ['A', 'API_TOKEN', 'B', 'C']);
      const result = expectOk(await expandServer(stdio({ envFile: '.env' }, workspace), context()));
      assert.ok(result.secrets.includes('file-token-123'));
    });

    it('refuses a workspace envFile ../../etc/shadow, and an absolute one outside the folder', async () => {
      const result = await expandServer(stdio({ envFile: '../../etc/shadow' }, workspace), context());
      expectRefused(result, /"envFile" "..\/..\/etc\/shadow" has a ".."/);
      expectRefused(await expandServer(stdio({ envFile: '${workspaceFolder}/sub/../../x.env' }, workspace), context()), /has a "\.\."/);
      expectRefused(await expandServer(stdio({ envFile: '/etc/passwd' }, workspace), context()), /leads out of the workspace folder/);
    });

    it('refuses a workspace envFile that is a symlink out of the folder, or inside a symlinked folder', async () => {
      const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-outside-'));
      try {
        fs.writeFileSync(path.join(outside, 'secret.env'), `STOLEN=${hex(8)}\n`);
        fs.symlinkSync(path.join(outside, 'secret.env'), path.join(folder, '.env'));
        fs.symlinkSync(outside, path.join(folder, 'linked'));
        expectRefused(await expandServer(stdio({ envFile: '.env' }, workspace), context()), /leads out of the workspace folder/);
        expectRefused(await expandServer(stdio({ envFile: 'linked/secret.env' }, workspace), context()), /leads out of the workspace folder/);
        // The same file is the user's to name in a user definition.
        const server = stdioOf(await expandServer(stdio({ envFile: path.join(folder, '.env') }), context()));
        assert.ok(server.env.STOLEN !== undefined);
      } finally {
        fs.rmSync(outside, { recursive: true, force: true });
      }
    });

    it('follows a symlink that stays inside the folder', async () => {
      fs.mkdirSync(path.join(folder, 'config'));
      fs.writeFileSync(path.join(folder, 'config', 'real.env'), 'INSIDE=yes\n');
      fs.symlinkSync(path.join(folder, 'config', 'real.env'), path.join(folder, '.env'));
      assert.equal(stdioOf(await expandServer(stdio({ envFile: '.env' }, workspace), context())).env.INSIDE, 'yes');
    });

    it('refuses a missing envFile, a folder, and a FIFO (which would hang a plain read)', async () => {
      expectRefused(await expandServer(stdio({ envFile: 'missing.env' }, workspace), context()), /cannot be read: there is no such file/);
      fs.mkdirSync(path.join(folder, 'dir.env'));
      expectRefused(await expandServer(stdio({ envFile: 'dir.env' }, workspace), context()), /cannot be read/);
      execFileSync('mkfifo', [path.join(folder, 'fifo.env')]);
      expectRefused(await expandServer(stdio({ envFile: 'fifo.env' }, workspace), context()), /cannot be read: .*FIFO/);
    });

    it('uses the reader the host gives, with the resolved path', async () => {
      fs.writeFileSync(path.join(folder, '.env'), 'X=1\n');
      const read: string[] = [];
      const ctx = context({
        readEnvFile: (file) => {
          read.push(file);
          return Promise.resolve('FROM_READER=1\n');
        },
      });
      assert.equal(stdioOf(await expandServer(stdio({ envFile: './.env' }, workspace), ctx)).env.FROM_READER, '1');
      assert.deepEqual(read, [path.join(folder, '.env')]);
    });
  });
});

describe('parseDotenv: the envFile format', () => {
  it('reads KEY=VALUE lines with comments, export, and both quotes', () => {
    const text = [
      '# comment',
      '',
      'PLAIN=value',
      'export EXPORTED=yes',
      '  SPACED = around  ',
      'DOUBLE="a \\"quoted\\" line\\nand more"',
      "SINGLE='literal \\n $X'",
      'INLINE=value # comment',
      'HASH="a # inside"',
      'EMPTY=',
      'URL=postgres://u:p@h/db?x=1',
      'not a line',
      'UNCLOSED="never ends',
      '1BAD=x',
      'PLAIN=later wins',
    ].join('\r\n');
    assert.deepEqual(parseDotenv(text), {
      PLAIN: 'later wins',
      EXPORTED: 'yes',
      SPACED: 'around',
      DOUBLE: 'a "quoted" line\nand more',
      SINGLE: 'literal \\n $X',
      INLINE: 'value',
      HASH: 'a # inside',
      EMPTY: '',
      URL: 'postgres://u:p@h/db?x=1',
    });
  });

  it('keeps __proto__ a key and drops a value with a NUL', () => {
    const env = parseDotenv('__proto__=x\nNUL="a\0b"\n');
    assert.deepEqual(Object.keys(env), ['__proto__']);
    assert.equal(Object.getPrototypeOf(env), Object.prototype);
  });
});
