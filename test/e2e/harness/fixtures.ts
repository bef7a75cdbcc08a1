// Temp workspaces (real git repositories) and offline-provider scenario files
// for e2e tests. Every test gets its own; nothing depends on leftovers.
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Scenario } from '../../../src/core/offline/scenario';
import { repoRoot } from './codeServer';

export type { Scenario, ScenarioRule } from '../../../src/core/offline/scenario';

/** The demo workspace of `npm start`, a small project with a passing `npm test`. */
export const demoFixture = path.join(repoRoot, 'demo');

export interface WorkspaceOptions {
  /** Folder copied into the workspace (default: demo/). */
  from?: string;
  /** Extra files, path relative to the workspace → content. */
  files?: Record<string, string>;
  /** git init and commit everything (default true). */
  git?: boolean;
  /** Name of the workspace folder (what Candor records as `project`). */
  name?: string;
}

export interface TempWorkspace {
  /** The workspace folder. */
  dir: string;
  /** A sibling folder outside the workspace, for Candor's data (`candor.dataDir`). */
  dataDir: string;
  /** Runs git in the workspace and returns its stdout. */
  git(...args: string[]): string;
  remove(): void;
}

const gitIdentity = {
  GIT_AUTHOR_NAME: 'Candor E2E',
  GIT_AUTHOR_EMAIL: 'e2e@candor.invalid',
  GIT_COMMITTER_NAME: 'Candor E2E',
  GIT_COMMITTER_EMAIL: 'e2e@candor.invalid',
};

/** Copies a fixture into a fresh temp folder and makes it a git repository with one commit. */
export function makeWorkspace(opts: WorkspaceOptions = {}): TempWorkspace {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-ws-'));
  const dir = path.join(root, opts.name ?? 'demo');
  const dataDir = path.join(root, 'candor-data');
  fs.mkdirSync(dataDir, { recursive: true });
  fs.cpSync(opts.from ?? demoFixture, dir, {
    recursive: true,
    filter: (src) => !/[/\\](node_modules|\.git)$/.test(src),
  });
  for (const [rel, content] of Object.entries(opts.files ?? {})) {
    const file = path.join(dir, rel);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, content);
  }
  const git = (...args: string[]): string => execFileSync('git', args, {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, ...gitIdentity },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (opts.git ?? true) initRepo(git);
  return {
    dir,
    dataDir,
    git,
    remove: () => fs.rmSync(root, { recursive: true, force: true }),
  };
}

export function initRepo(git: (...args: string[]) => string): void {
  git('init', '-q', '-b', 'main');
  git('config', 'user.name', gitIdentity.GIT_AUTHOR_NAME);
  git('config', 'user.email', gitIdentity.GIT_AUTHOR_EMAIL);
  git('config', 'commit.gpgsign', 'false');
  git('add', '-A');
  git('commit', '-q', '-m', 'Initial commit');
}

/**
 * Writes an offline-provider scenario (format: src/core/offline/scenario.ts)
 * to DIR/NAME.json and returns its path, for `candor.offline.scenario`.
 */
export function writeScenario(dir: string, scenario: Scenario, name = 'scenario'): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  fs.writeFileSync(file, `${JSON.stringify(scenario, null, 2)}\n`);
  return file;
}

/** Reads a JSON-lines file of Candor's data folder ([] if it does not exist). */
export function readJsonl(file: string): unknown[] {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return [];
  }
  return text.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as unknown);
}

/** Polls until CHECK returns a value other than undefined, or throws after TIMEOUT ms. */
export async function eventually<T>(
  check: () => T | undefined | Promise<T | undefined>, timeout = 15_000, what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeout;
  let lastError: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${what} not met within ${timeout} ms${lastError ? `: ${String(lastError)}` : ''}`);
}
