import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Sandbox } from '../../../../src/core/sandbox/sandbox';
import { prepareForGateUser } from '../../../../src/core/sandbox/gateUser';
import type { ViewCommand } from '../../../../src/core/commands/sandboxedCommand';
import { hashTree } from '../../../helpers/hashTree';
import { git, removeTempDirs, requiredSandbox, skipUnlessSandbox, tempDir, write } from '../evolution/helpers';

/**
 * A workspace (a real git repository with a dependency folder and an
 * ignored `.env`), Candor's data folder in the real home (where VS Code
 * keeps it) with a view of the workspace inside it, made by copying, and
 * the command options that run in it.
 */

export const GREET = "module.exports = () => 'hello';\n";
export const FAILING_GREET = "module.exports = () => 'bye';\n";
export const TEST_JS = "const assert = require('assert');\nassert.ok(require('./greet')().startsWith('hello'), 'greet() says hello');\nconsole.log('tests ok');\n";
/** Planted in the workspace only: the view leaves ignored files out, and the sandbox never mounts the workspace itself. */
export const DOT_ENV_SECRET = 'DATABASE_PASSWORD=candor-dotenv-secret-value';

export interface ViewFixture {
  readonly workspace: string;
  /** Candor's data folder (hidden from commands), under the real home. */
  readonly data: string;
  readonly view: string;
}

const dataFolders: string[] = [];

/** In a temp folder, or under `parent` (the real home, where users keep their projects). */
export function makeWorkspace(parent?: string): string {
  const workspace = tempDir('candor-ws-', parent);
  git(workspace, 'init', '-q', '-b', 'main');
  write(workspace, 'greet.js', GREET);
  write(workspace, 'test.js', TEST_JS);
  write(workspace, 'which.txt', 'workspace\n');
  write(workspace, 'sub/inner.txt', 'inner\n');
  write(workspace, '.gitignore', '.env\nnode_modules/\n');
  git(workspace, 'add', '-A');
  git(workspace, 'commit', '-q', '-m', 'initial');
  write(workspace, '.env', `${DOT_ENV_SECRET}\n`);
  write(workspace, 'node_modules/dep/index.js', 'module.exports = 42;\n');
  write(workspace, 'node_modules/.cache/planted.txt', 'from the workspace\n');
  return workspace;
}

/** A view of `workspace` in a fresh data folder under the real home: tracked files and `.git` copied, `node_modules` an empty mount point, which.txt saying "view". */
export async function makeView(workspace: string, sandbox: Sandbox): Promise<ViewFixture> {
  const data = fs.realpathSync(fs.mkdtempSync(path.join(os.homedir(), '.candor-test-data-')));
  dataFolders.push(data);
  const view = path.join(data, 'views', path.basename(workspace));
  const left = new Set(['.env', 'node_modules'].map((name) => path.join(workspace, name)));
  fs.cpSync(workspace, view, { recursive: true, filter: (source) => !left.has(source) });
  fs.mkdirSync(path.join(view, 'node_modules'));
  fs.writeFileSync(path.join(view, 'which.txt'), 'view\n');
  fs.writeFileSync(path.join(data, 'secret.txt'), 'candor-data-folder-secret\n');
  if (sandbox.user !== undefined) await prepareForGateUser(view, sandbox.user);
  return { workspace, data, view };
}

export function removeDataFolders(): void {
  for (const dir of dataFolders.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

/**
 * A suite's hooks: the sandbox once, a fresh workspace
 * and view before each test, both removed after it. The setters hand them
 * to the suite's own variables.
 */
export function useView(setSandbox: (sandbox: Sandbox) => void, setView: (f: ViewFixture) => void): void {
  let sandbox: Sandbox;
  before(async function () {
    // bubblewrap, or the suite fails, never a silent skip; skipped only inside Candor's own evolution gate, where no sandbox nests.
    await skipUnlessSandbox(this);
    sandbox = await requiredSandbox();
    setSandbox(sandbox);
  });
  beforeEach(async () => setView(await makeView(makeWorkspace(), sandbox)));
  afterEach(() => {
    removeDataFolders();
    removeTempDirs();
  });
}

/** The options of one command in the view, with the workspace's dependency folder bound and its cache a tmpfs. */
export function inView(sandbox: Sandbox, f: ViewFixture, command: string, more: Partial<ViewCommand> = {}): ViewCommand {
  return {
    sandbox,
    view: f.view,
    workspaceRoot: f.workspace,
    cwd: f.workspace,
    command,
    readOnlyBinds: [{ source: path.join(f.workspace, 'node_modules'), dest: path.join(f.workspace, 'node_modules') }],
    tmpfs: [path.join(f.workspace, 'node_modules', '.cache')],
    hidden: [f.data],
    network: false,
    environment: [],
    withhold: [],
    timeoutMs: 30_000,
    signal: new AbortController().signal,
    onOutput: () => undefined,
    ...more,
  };
}

/**
 * The trap armed: `command` in a plain host shell, no sandbox, its stdout
 * and stderr together. Asynchronous, so a server of the test process keeps
 * answering meanwhile.
 */
export function hostShell(command: string, cwd: string, env: NodeJS.ProcessEnv = process.env): Promise<{ readonly status: number | null; readonly output: string }> {
  return new Promise((resolve) => {
    const child = spawn('/bin/sh', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], timeout: 30_000, killSignal: 'SIGKILL' });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('close', (status) => resolve({ status, output }));
  });
}

/** A throwaway copy of the workspace for the host shell to wreck. */
export function throwawayCopy(workspace: string): string {
  const copy = tempDir('candor-ws-copy-');
  fs.cpSync(workspace, copy, { recursive: true });
  return copy;
}

/** The whole tree, `.git` and the ignored files included, contents and modes. */
export function treeHash(dir: string): string {
  return hashTree(dir, () => false, true);
}
