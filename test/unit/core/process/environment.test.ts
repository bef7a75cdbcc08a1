import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { childEnvironment, commandEnvironment, gateEnvironment, isEnvironmentEntry, type GateEnvironmentOptions } from '../../../../src/core/process/environment';
import { environmentSecrets, REDACTED, SecretSet } from '../../../../src/core/redact';

const hex = (n: number): string => randomBytes(n).toString('hex');
const AWS_SECRET = `aws-${hex(16)}`;
const GITHUB = `ghp_${hex(18)}`;
const NPM = `npm_${hex(18)}`;
const DB_PASSWORD = `db-${hex(8)}`;
const PROXY_PASSWORD = `proxy-${hex(8)}`;
const OPENAI = `sk-${hex(20)}`;
const STORED_KEY = `stored-${hex(10)}`;
const MYAPP_TOKEN = `myapp-${hex(10)}`;

/** A root shell's environment in a dev container, credentials and all. */
function hostEnv(): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    LC_MESSAGES: 'C',
    TERM: 'xterm-256color',
    TZ: 'UTC',
    HOME: '/root',
    USER: 'root',
    LOGNAME: 'root',
    TMPDIR: '/tmp',
    AWS_SECRET_ACCESS_KEY: AWS_SECRET,
    AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE0000',
    GITHUB_TOKEN: GITHUB,
    NPM_TOKEN: NPM,
    DATABASE_URL: `postgres://u:${DB_PASSWORD}@h/db`,
    SSH_AUTH_SOCK: '/tmp/ssh-XXXX/agent.42',
    DBUS_SESSION_BUS_ADDRESS: 'unix:path=/run/user/0/bus',
    KRB5CCNAME: 'KEYRING:persistent:0',
    XDG_CONFIG_HOME: '/root/.config',
    NODE_OPTIONS: '--no-deprecation',
    FOO: '1',
    OPENAI_API_KEY: OPENAI,
    CANDOR_DATA_DIR: '/root/.candor',
    GIT_DIR: '/root/work/.git',
    MYAPP_MODE: 'test',
    MYAPP_TOKEN,
    COPIED_KEY_VAR: `prefix ${STORED_KEY}`,
    HTTPS_PROXY: `http://me:${PROXY_PASSWORD}@proxy.corp:3128`,
    http_proxy: `http://me:${PROXY_PASSWORD}@proxy.corp:3128`,
    no_proxy: 'localhost,127.0.0.1',
    NODE_EXTRA_CA_CERTS: '/etc/ssl/corp.pem',
    CARGO_HOME: '/opt/cargo',
    RUSTUP_HOME: '/root/.rustup',
    JAVA_HOME: '/usr/lib/jvm/java-17/../java-17',
    GOROOT: 'relative/go',
  };
}

/** Bound read-only in the sandbox: the system and /opt, never the real home. */
const visible = (dir: string): boolean => ['/usr/', '/opt/'].some((root) => dir.startsWith(root));

function gate(extra: Partial<GateEnvironmentOptions> = {}): ReturnType<typeof gateEnvironment> {
  return gateEnvironment({ home: '/run/candor/home', tmp: '/run/candor/tmp', user: 'candor-gate', network: false, extraNames: [], isVisible: visible, base: hostEnv(), withhold: [STORED_KEY], ...extra });
}

/** What a real child process started with `env` sees of it. */
function seenByChild(env: NodeJS.ProcessEnv): Record<string, string> {
  const run = spawnSync(process.execPath, ['-e', 'process.stdout.write(JSON.stringify(process.env))'], { env, encoding: 'utf8', timeout: 10_000 });
  assert.equal(run.status, 0, run.stderr);
  return JSON.parse(run.stdout) as Record<string, string>;
}

const SECRETS = [AWS_SECRET, GITHUB, NPM, DB_PASSWORD, PROXY_PASSWORD, OPENAI, STORED_KEY, MYAPP_TOKEN];

describe('the gate\'s environment: an allow-list', () => {
  it('the trap: a child started with the host\'s environment sees every credential of it', () => {
    const seen = JSON.stringify(seenByChild(hostEnv()));
    for (const secret of SECRETS) assert.ok(seen.includes(secret), secret);
  });

  it('none of the host\'s credentials, sockets or other variables reach a gate command', () => {
    const { env, secrets } = gate();
    const seen = seenByChild(env);
    const text = JSON.stringify(seen);
    for (const secret of SECRETS) assert.ok(!text.includes(secret), secret);
    // Node adds nothing of its own, so the child sees exactly the list.
    assert.deepEqual(Object.keys(seen).sort(), ['CANDOR_EVOLUTION_GATE', 'CARGO_HOME', 'CI', 'HOME', 'JAVA_HOME', 'LANG', 'LC_ALL', 'LC_MESSAGES', 'LOGNAME', 'PATH', 'TEMP', 'TERM', 'TMP', 'TMPDIR', 'TZ', 'USER']);
    assert.equal(seen.HOME, '/run/candor/home');
    assert.equal(seen.USER, 'candor-gate');
    assert.equal(seen.LOGNAME, 'candor-gate');
    assert.equal(seen.TMPDIR, '/run/candor/tmp');
    assert.equal(seen.CI, '1');
    assert.equal(seen.CANDOR_EVOLUTION_GATE, '1');
    assert.deepEqual(secrets, []);
  });

  it('toolchain locations pass only when they point into a visible folder, as absolute paths', () => {
    const { env } = gate();
    assert.equal(env.CARGO_HOME, '/opt/cargo');
    assert.equal(env.JAVA_HOME, '/usr/lib/jvm/java-17', 'normalised before the check');
    assert.equal(env.RUSTUP_HOME, undefined, 'under the hidden home');
    assert.equal(env.GOROOT, undefined, 'relative: it would resolve against the gate\'s folder');
    const hidden = gate({ isVisible: () => false }).env;
    assert.equal(hidden.CARGO_HOME, undefined);
  });

  it('names the user listed pass; a prefix never passes a credential, an exact name does', () => {
    const { env, secrets } = gate({ extraNames: ['MYAPP_*', 'NPM_TOKEN', 'FOO', ' XDG_CONFIG_HOME '] });
    assert.equal(env.MYAPP_MODE, 'test');
    assert.equal(env.MYAPP_TOKEN, undefined, 'MYAPP_* does not carry MYAPP_TOKEN');
    assert.equal(env.NPM_TOKEN, NPM, 'listed by its exact name');
    assert.equal(env.FOO, '1');
    assert.equal(env.XDG_CONFIG_HOME, '/root/.config');
    assert.deepEqual(secrets, [NPM], 'a credential passed on purpose joins the redaction set');
    assert.equal(env.GITHUB_TOKEN, undefined);
  });

  it('never the provider key, a Candor or git variable, or a value holding the stored key, even when listed', () => {
    const { env } = gate({ extraNames: ['OPENAI_API_KEY', 'openai_api_key', 'CANDOR_*', 'CANDOR_DATA_DIR', 'GIT_DIR', 'COPIED_KEY_VAR', '*', 'BAD NAME', 'A=B', ''] });
    for (const name of ['OPENAI_API_KEY', 'CANDOR_DATA_DIR', 'GIT_DIR', 'COPIED_KEY_VAR', 'FOO', 'AWS_SECRET_ACCESS_KEY']) assert.equal(env[name], undefined, name);
    assert.equal(env.CANDOR_EVOLUTION_GATE, '1', 'the marker is set, not inherited');
    for (const entry of ['*', 'BAD NAME', 'A=B', '', '1ABC', 'A*B']) assert.equal(isEnvironmentEntry(entry), false, entry);
    for (const entry of ['FOO', 'LC_*', 'my_var', '_X']) assert.equal(isEnvironmentEntry(entry), true, entry);
  });

  it('the throwaway home and user win over inherited ones in any case', () => {
    const { env } = childEnvironment({ use: 'a test', names: ['Home', 'user'], extraNames: [], set: { HOME: '/h', USER: 'u' }, base: { home: '/root', User: 'root', PATH: '/bin' } });
    assert.deepEqual(env, { PATH: '/bin', HOME: '/h', USER: 'u' });
  });

  it('the proxies pass only to setup with the network, in either case; their password joins the redaction set', () => {
    const offline = gate().env;
    for (const name of ['HTTPS_PROXY', 'http_proxy', 'no_proxy', 'NODE_EXTRA_CA_CERTS']) assert.equal(offline[name], undefined, name);

    const online = gate({ network: true });
    assert.equal(online.env.HTTPS_PROXY, `http://me:${PROXY_PASSWORD}@proxy.corp:3128`);
    assert.equal(online.env.http_proxy, `http://me:${PROXY_PASSWORD}@proxy.corp:3128`);
    assert.equal(online.env.no_proxy, 'localhost,127.0.0.1');
    assert.equal(online.env.NODE_EXTRA_CA_CERTS, '/etc/ssl/corp.pem');
    assert.deepEqual(online.secrets, [PROXY_PASSWORD]);
    assert.equal(online.env.DATABASE_URL, undefined, 'the network brings the proxies, nothing else');

    // What setup prints about its proxy (npm does), redacted with the set the run holds.
    const set = new SecretSet();
    for (const secret of online.secrets) set.add(secret, 'a proxy password');
    const printed = `npm http fetch via proxy.corp (auth ${PROXY_PASSWORD})`;
    assert.equal(set.redact(printed), `npm http fetch via proxy.corp (auth ${REDACTED})`);
    assert.ok(environmentSecrets(hostEnv()).values().includes(PROXY_PASSWORD), 'the host set already knows it from the variable');
  });

  it('a real shell in a temp folder runs with the gate environment (PATH and locale are enough)', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-env-'));
    try {
      const { env } = gateEnvironment({ home: dir, tmp: dir, user: 'candor-gate', network: false, extraNames: [], isVisible: visible, base: hostEnv() });
      const run = spawnSync('/bin/sh', ['-c', 'printf "%s %s %s" "$HOME" "$USER" "${GITHUB_TOKEN:-none}"; echo x > "$TMPDIR/f"'], { env, encoding: 'utf8', timeout: 10_000, cwd: dir });
      assert.equal(run.status, 0, run.stderr);
      assert.equal(run.stdout, `${dir} candor-gate none`);
      assert.equal(fs.readFileSync(path.join(dir, 'f'), 'utf8'), 'x\n');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the environment of a command the agent runs', () => {
  const command = (extra: Partial<GateEnvironmentOptions> = {}): ReturnType<typeof commandEnvironment> =>
    commandEnvironment({ home: '/run/candor/home', tmp: '/run/candor/tmp', user: 'candor-gate', network: false, extraNames: [], isVisible: visible, base: hostEnv(), withhold: [STORED_KEY], ...extra });

  it('holds the allow-list, a throwaway home and temp folder, CI=1, and none of the host\'s credentials', () => {
    const { env } = command();
    assert.equal(env.HOME, '/run/candor/home');
    assert.equal(env.TMPDIR, '/run/candor/tmp');
    assert.equal(env.USER, 'candor-gate');
    assert.equal(env.CI, '1', 'nothing answers on stdin: watch modes and prompts must not wait for the timeout');
    assert.equal(env.LANG, 'C.UTF-8');
    // Tried: a root shell's environment in a dev container, credentials and agent sockets included.
    for (const name of ['OPENAI_API_KEY', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN', 'NPM_TOKEN', 'DATABASE_URL', 'SSH_AUTH_SOCK', 'DBUS_SESSION_BUS_ADDRESS', 'KRB5CCNAME', 'CANDOR_DATA_DIR', 'GIT_DIR', 'COPIED_KEY_VAR', 'HTTPS_PROXY', 'NODE_OPTIONS']) {
      assert.equal(env[name], undefined, `${name} passed`);
    }
    assert.ok(!JSON.stringify(env).includes(STORED_KEY), 'no value holds the stored key');
  });

  it('is not the evolution gate: no gate marker', () => {
    assert.equal(command().env.CANDOR_EVOLUTION_GATE, undefined);
    assert.equal(gate().env.CANDOR_EVOLUTION_GATE, '1', 'the gate has it');
  });

  it('adds what candor.commands.environment lists, and the proxies only with the network', () => {
    const listed = command({ extraNames: ['FOO', 'MYAPP_*'] }).env;
    assert.equal(listed.FOO, '1');
    assert.equal(listed.MYAPP_MODE, 'test');
    assert.equal(listed.MYAPP_TOKEN, undefined, 'a prefix never matches a credential-looking name');
    assert.equal(command().env.HTTPS_PROXY, undefined);
    const online = command({ network: true });
    assert.match(online.env.HTTPS_PROXY ?? '', /proxy\.corp/);
    assert.ok(online.secrets.includes(PROXY_PASSWORD), 'the proxy password joins the redaction set');
  });
});
