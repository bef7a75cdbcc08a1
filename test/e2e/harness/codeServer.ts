// Starts a real VS Code (code-server 4.100.3, installed by
// scripts/install-code-server.sh into .cache/code-server) for one e2e suite:
// its own loopback port, user-data-dir, extensions-dir and HOME, the packaged
// VSIX installed the way a user installs it. Recipe: ../shared/testing.md.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

export const repoRoot = path.resolve(__dirname, '..', '..', '..');
export const artifactsDir = path.join(repoRoot, 'test-artifacts');
export const codeServerEntry = path.join(
  repoRoot, '.cache', 'code-server', 'node_modules', 'code-server', 'out', 'node', 'entry.js',
);
/** Publisher.name of the extension under test, the prefix of its status bar item ids. */
export const candorExtensionId = 'candor.candor';

export interface StartOptions {
  /** Folder opened in the workbench. */
  workspace: string;
  /** Extra user settings, merged over the harness defaults. */
  settings?: Record<string, unknown>;
  /** Extra environment for code-server (reaches the extension host). */
  env?: Record<string, string>;
  /** A VSIX to install with `--install-extension` before start. */
  vsix?: string;
  /** true (default): `--disable-workspace-trust`. false: the folder opens in Restricted Mode. */
  trust?: boolean;
  /** HOME for code-server and the extension host. Default: a fresh one from makeHome(). */
  home?: string;
  /** Folders put first on the extension host's PATH (only with the default HOME). */
  pathPrefix?: string[];
}

export interface VsCode {
  /** http://127.0.0.1:PORT */
  url: string;
  /** url + ?folder=WORKSPACE */
  folderUrl: string;
  port: number;
  workspace: string;
  userDir: string;
  extDir: string;
  home: string;
  /** code-server's own stdout and stderr so far. */
  logs(): string;
  /** Text of the extension host logs (remoteexthost.log of every session). */
  exthostLog(): string;
  /** Text of the "Candor" log output channel, '' if it does not exist (yet). */
  candorLog(): string;
  /** Copies code-server's, the extension host's and Candor's logs to test-artifacts/NAME/. */
  saveDiagnostics(name: string): string;
  /** Ends code-server and every helper it started, and removes the temp folders. */
  stop(): Promise<void>;
}

const OPEN_ON_INSTALL = 'workbench.welcomePage.walkthroughs.openOnInstall';

/** Settings every harness window gets: quiet, deterministic, terminal text in the DOM. */
export function defaultSettings(trust: boolean): Record<string, unknown> {
  return {
    'terminal.integrated.gpuAcceleration': 'off',
    'workbench.startupEditor': 'none',
    'workbench.tips.enabled': false,
    [OPEN_ON_INSTALL]: false,
    'workbench.enableExperiments': false,
    'telemetry.telemetryLevel': 'off',
    'update.mode': 'none',
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'extensions.ignoreRecommendations': true,
    'security.workspace.trust.enabled': !trust,
    'security.workspace.trust.startupPrompt': 'never',
    'git.openRepositoryInParentFolders': 'never',
    'chat.commandCenter.enabled': false,
    // VS Code for the Web saves after a delay by default; desktop VS Code does
    // not. Tests of unsaved buffers need the desktop behaviour.
    'files.autoSave': 'off',
  };
}

export interface HomeOptions {
  /** Folders put first on PATH by the login shell profiles. */
  pathPrefix?: string[];
  /** Identity written to .gitconfig. */
  gitName?: string;
  gitEmail?: string;
}

/**
 * Makes a HOME the way a user has one: shell profiles (the extension host takes
 * its environment from `$SHELL -il`, not from the process that starts it, so a
 * PATH shim must be exported here) and a .gitconfig with an identity.
 */
export function makeHome(dir: string, opts: HomeOptions = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  const prefix = (opts.pathPrefix ?? []).map((p) => path.resolve(p));
  const profile = [
    '# written by the Candor e2e harness',
    ...(prefix.length > 0 ? [`export PATH=${shellQuote(prefix.join(':'))}:"$PATH"`] : []),
    '',
  ].join('\n');
  for (const name of ['.profile', '.bash_profile', '.bashrc']) {
    fs.writeFileSync(path.join(dir, name), profile);
  }
  fs.writeFileSync(path.join(dir, '.gitconfig'), [
    '[user]',
    `\tname = ${opts.gitName ?? 'Candor E2E'}`,
    `\temail = ${opts.gitEmail ?? 'e2e@candor.invalid'}`,
    '[init]',
    '\tdefaultBranch = main',
    '',
  ].join('\n'));
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startVsCode(opts: StartOptions): Promise<VsCode> {
  if (!fs.existsSync(codeServerEntry)) {
    throw new Error(`code-server is not installed at ${codeServerEntry}: run scripts/install-code-server.sh`);
  }
  const trust = opts.trust ?? true;
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-e2e-'));
  const userDir = path.join(root, 'user');
  const extDir = path.join(root, 'extensions');
  const configFile = path.join(root, 'code-server.yaml');
  const serverLogFile = path.join(root, 'code-server.log');
  const home = opts.home ?? makeHome(path.join(root, 'home'), { pathPrefix: opts.pathPrefix });
  fs.mkdirSync(path.join(userDir, 'User'), { recursive: true });
  fs.mkdirSync(extDir, { recursive: true });
  // Our own config file, so the user's ~/.config/code-server (auth, bind address) never applies.
  fs.writeFileSync(configFile, 'auth: none\ncert: false\n');
  const settings = { ...defaultSettings(trust), ...opts.settings };
  fs.writeFileSync(path.join(userDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));
  // A machine-scoped setting reaches the extension host of a remote window
  // (code-server's) from the remote machine's settings only: Candor opens
  // its walkthrough on its first activation unless this says not to.
  fs.mkdirSync(path.join(userDir, 'Machine'), { recursive: true });
  fs.writeFileSync(path.join(userDir, 'Machine', 'settings.json'), JSON.stringify({ [OPEN_ON_INSTALL]: settings[OPEN_ON_INSTALL] }, null, 2));

  const env = serverEnv(home, opts.env);
  const common = ['--config', configFile, '--user-data-dir', userDir, '--extensions-dir', extDir];

  if (opts.vsix) {
    const vsix = path.resolve(opts.vsix);
    const { stdout, stderr } = await execFileAsync(
      process.execPath, [codeServerEntry, ...common, '--install-extension', vsix],
      { env, timeout: 120_000 },
    );
    if (!/successfully installed/i.test(stdout + stderr)) {
      throw new Error(`installing ${vsix} failed:\n${stdout}\n${stderr}`);
    }
  }

  const port = await freePort();
  const args = [
    codeServerEntry, ...common,
    '--auth', 'none',
    '--bind-addr', `127.0.0.1:${port}`,
    '--disable-telemetry',
    '--disable-update-check',
    '--disable-getting-started-override',
    ...(trust ? ['--disable-workspace-trust'] : []),
    opts.workspace,
  ];
  const logFd = fs.openSync(serverLogFile, 'a');
  // A process group leader, so stop() can end the helpers (extension host,
  // file watcher, pty host) that outlive code-server's own pid.
  const child = spawn(process.execPath, args, {
    cwd: opts.workspace, env, detached: true, stdio: ['ignore', logFd, logFd],
  });
  fs.closeSync(logFd);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitPromise = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      resolve();
    });
  });

  const logs = (): string => readIfExists(serverLogFile);
  const url = `http://127.0.0.1:${port}`;
  const stop = once(async () => {
    await killGroup(child, exitPromise, () => exited !== undefined);
    if (!process.env.CANDOR_E2E_KEEP) {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });

  try {
    await waitForHttp(`${url}/healthz`, 60_000, () => {
      if (exited) throw new Error(`code-server exited (${JSON.stringify(exited)}) before it served:\n${logs()}`);
    });
  } catch (err) {
    await stop();
    throw err;
  }

  const exthostLog = (): string => findLogs(userDir, (f) => /exthost\.log$/.test(f))
    .map((f) => `--- ${path.relative(userDir, f)}\n${readIfExists(f)}`).join('\n');
  const candorLog = (): string => findLogs(userDir, (f) => path.basename(f) === 'Candor.log' || /-Candor\.log$/.test(f))
    .map((f) => readIfExists(f)).join('\n');

  return {
    url,
    folderUrl: folderUrl(url, opts.workspace),
    port,
    workspace: opts.workspace,
    userDir,
    extDir,
    home,
    logs,
    exthostLog,
    candorLog,
    saveDiagnostics(name: string): string {
      const dir = path.join(artifactsDir, safeName(name));
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, 'code-server.log'), logs());
      fs.writeFileSync(path.join(dir, 'exthost.log'), exthostLog());
      fs.writeFileSync(path.join(dir, 'candor.log'), candorLog());
      return dir;
    },
    stop,
  };
}

export function folderUrl(url: string, folder: string): string {
  return `${url}/?${new URLSearchParams({ folder }).toString()}`;
}

/** The environment code-server starts with: the caller's, hermetic where it matters. */
function serverEnv(home: string, extra: Record<string, string> | undefined): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    // Nothing of an enclosing VS Code, and no key or endpoint the test did not give.
    if (key.startsWith('VSCODE_') || key.startsWith('OPENAI_') || key.startsWith('CANDOR_')) continue;
    env[key] = value;
  }
  return {
    ...env,
    HOME: home,
    SHELL: '/bin/bash',
    XDG_CONFIG_HOME: path.join(home, '.config'),
    XDG_DATA_HOME: path.join(home, '.local', 'share'),
    ...extra,
  };
}

async function waitForHttp(url: string, timeoutMs: number, check: () => void): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    check();
    const status = await new Promise<number>((resolve) => {
      const req = http.get(url, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(0));
      req.setTimeout(2_000, () => req.destroy());
    });
    if (status === 200) return;
    await sleep(200);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms`);
}

async function killGroup(child: ChildProcess, exitPromise: Promise<void>, hasExited: () => boolean): Promise<void> {
  const pid = child.pid;
  if (pid === undefined) return;
  const signalGroup = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is already gone
    }
  };
  signalGroup('SIGTERM');
  await Promise.race([exitPromise, sleep(5_000)]);
  // Helpers may linger after code-server itself exits: end the whole group.
  signalGroup('SIGKILL');
  if (!hasExited()) await Promise.race([exitPromise, sleep(2_000)]);
}

/** Files under DIR/logs (VS Code's log folder inside the user-data-dir) that match. */
export function findLogs(userDir: string, match: (file: string) => boolean): string[] {
  const found: string[] = [];
  const walk = (dir: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (match(full)) found.push(full);
    }
  };
  walk(path.join(userDir, 'logs'));
  return found.sort();
}

function readIfExists(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

function shellQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

export function safeName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 120) || 'unnamed';
}

function once<T>(fn: () => Promise<T>): () => Promise<T> {
  let result: Promise<T> | undefined;
  return () => (result ??= fn());
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
