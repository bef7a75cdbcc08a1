import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside, realOrResolved } from '../realPath';

/**
 * Git, resolved once to an absolute path (docs/architecture.md, "What runs").
 * A bare `git` is looked up by the operating system, and on Windows that
 * lookup tries the current folder first: a `git.exe` planted in the opened
 * repository would run. So Candor walks PATH itself, skips every relative
 * entry (`.`, `bin`, empty) and every entry inside a folder it must not trust,
 * and uses the first executable it finds by its absolute path.
 */

export interface ResolveGitOptions {
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
  /** Folders whose contents never provide git (the workspace folders, the scratch area). */
  readonly untrusted?: readonly string[];
}

/** The absolute path of git, or undefined when PATH holds none outside the untrusted folders. */
export function resolveGitBinary(options: ResolveGitOptions = {}): string | undefined {
  const env = options.env ?? process.env;
  const platform = options.platform ?? process.platform;
  const windows = platform === 'win32';
  const pathValue = (windows ? env.Path ?? env.PATH : env.PATH) ?? '';
  const names = windows ? ['git.exe', 'git.cmd'] : ['git'];
  const untrusted = (options.untrusted ?? []).map((dir) => realOrResolved(path.resolve(dir)));
  for (const entry of pathValue.split(windows ? ';' : ':')) {
    const dir = entry.replace(/^"|"$/g, '');
    if (dir === '' || !path.isAbsolute(dir)) continue;
    const realDir = realOrResolved(dir);
    if (untrusted.some((root) => isInside(root, realDir))) continue;
    for (const name of names) {
      const candidate = path.join(dir, name);
      if (isExecutableFile(candidate, windows)) return candidate;
    }
  }
  return undefined;
}

let cached: string | undefined;

/** `resolveGitBinary()` of this process's PATH, remembered after the first success; `git-missing` callers get undefined. */
export function gitBinary(untrusted: readonly string[] = []): string | undefined {
  if (cached !== undefined && !untrusted.some((root) => cached?.startsWith(path.resolve(root)))) return cached;
  const found = resolveGitBinary({ untrusted });
  if (found !== undefined) cached = found;
  return found;
}

function isExecutableFile(candidate: string, windows: boolean): boolean {
  try {
    const stat = fs.statSync(candidate);
    if (!stat.isFile()) return false;
    if (windows) return true;
    fs.accessSync(candidate, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

