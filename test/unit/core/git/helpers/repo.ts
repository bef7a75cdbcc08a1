import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { hashFile, hashTree } from '../../../../helpers/hashTree';
export { hashFile };
import { mulberry32 } from '../../../../../src/core/random';
import { uniform } from '../../../../helpers/core';
import { FIXTURE_ENV } from '../../../../helpers/fixtureEnv';
export { FIXTURE_ENV };

/**
 * Fixture repositories for the guard's tests. Fixtures are built with the
 * real git directly (never through the guard), isolated from the machine's
 * global and system config.
 */

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

/**
 * Makes `main` and a new branch `other` each change `file` from the commit
 * at HEAD, with `main` checked out: merging, cherry-picking or rebasing one
 * onto the other conflicts.
 */
export function divergeOn(repo: string, file: string, mainMessage = 'main'): void {
  git(repo, 'checkout', '-q', '-b', 'other');
  write(repo, file, 'other side\n');
  git(repo, 'commit', '-q', '-am', 'other side');
  git(repo, 'checkout', '-q', 'main');
  write(repo, file, 'main side\n');
  git(repo, 'commit', '-q', '-am', mainMessage);
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

/** The seeded generator of src/core/random.ts as floats in [0, 1), so a failing run can be replayed from its seed. */
export const prng = (seed: number): (() => number) => uniform(mulberry32(seed));
