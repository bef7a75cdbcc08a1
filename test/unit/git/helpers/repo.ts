import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * Fixture repositories for the guard's tests. Fixtures are built with the
 * real git directly (never through the guard), isolated from the machine's
 * global and system config.
 */

export const FIXTURE_ENV: NodeJS.ProcessEnv = (() => {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith('GIT_')) env[key] = value;
  return {
    ...env,
    GIT_AUTHOR_NAME: 'Fixture Author',
    GIT_AUTHOR_EMAIL: 'author@example.invalid',
    GIT_COMMITTER_NAME: 'Fixture Committer',
    GIT_COMMITTER_EMAIL: 'committer@example.invalid',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: os.devNull,
    GIT_EDITOR: 'true',
    GIT_TERMINAL_PROMPT: '0',
    LC_ALL: 'C',
  };
})();

export function git(cwd: string, ...args: string[]): string {
  return execFileSync('git', ['-c', 'init.defaultBranch=main', '-c', 'core.autocrlf=false', ...args], {
    cwd,
    env: FIXTURE_ENV,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** Runs git and returns its exit code instead of throwing (for commands meant to stop, like a conflicting merge). */
export function gitStatusCode(cwd: string, ...args: string[]): number {
  try {
    git(cwd, ...args);
    return 0;
  } catch (err) {
    return (err as { status?: number }).status ?? -1;
  }
}

const made: string[] = [];

export function tempDir(prefix = 'candor-git-'): string {
  const dir = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), prefix)));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
}

export function write(repo: string, relative: string, content: string | Uint8Array): void {
  const file = path.join(repo, relative);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, content);
}

export function initRepo(dir = tempDir()): string {
  git(dir, 'init', '-q', '-b', 'main');
  return dir;
}

/** A repository with one commit of `files`. */
export function repoWith(files: Record<string, string | Uint8Array>): string {
  const repo = initRepo();
  for (const [name, content] of Object.entries(files)) write(repo, name, content);
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial');
  return repo;
}

export interface RepoSnapshot {
  readonly worktree: string;
  readonly index: string;
  readonly refs: string;
  readonly head: string;
  readonly stashList: string;
  readonly reflogs: string;
  readonly gitDir: string;
}

/**
 * Everything a read must not change: work-tree bytes (and modes and mtimes),
 * index bytes, refs, HEAD, stash list, reflogs, and every file under .git.
 */
export function snapshot(repo: string): RepoSnapshot {
  const gitDir = path.join(repo, '.git');
  return {
    worktree: hashTree(repo, (rel) => rel === '.git', true),
    index: hashFile(path.join(gitDir, 'index')),
    refs: git(repo, 'for-each-ref', '--format=%(refname) %(objectname)'),
    head: fs.readFileSync(path.join(gitDir, 'HEAD'), 'utf8'),
    stashList: git(repo, 'stash', 'list'),
    reflogs: hashTree(path.join(gitDir, 'logs'), () => false, false),
    gitDir: hashTree(gitDir, () => false, false),
  };
}

export function hashFile(file: string): string {
  try {
    return createHash('sha256').update(fs.readFileSync(file)).digest('hex');
  } catch {
    return 'missing';
  }
}

function hashTree(dir: string, skip: (relative: string) => boolean, withTimes: boolean): string {
  const hash = createHash('sha256');
  const visit = (absolute: string, relative: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(absolute, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      const rel = relative === '' ? entry.name : `${relative}/${entry.name}`;
      if (skip(rel)) continue;
      const full = path.join(absolute, entry.name);
      const stat = fs.lstatSync(full);
      hash.update(`${rel}\0${stat.mode}\0${withTimes ? stat.mtimeMs : ''}\0`);
      if (entry.isSymbolicLink()) hash.update(fs.readlinkSync(full));
      else if (entry.isDirectory()) visit(full, rel);
      else if (entry.isFile()) hash.update(fs.readFileSync(full));
    }
  };
  visit(dir, '');
  return hash.digest('hex');
}

/** A seeded generator (mulberry32), so a failing state can be rebuilt from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
