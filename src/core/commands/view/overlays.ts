import * as path from 'node:path';
import { mebibytes } from './errors';
import { isEnvName } from './ignoredFolders';
import type { Notes } from './notes';
import type { ViewOverlay } from './types';

/**
 * The overlays the view takes, by path, a later one of a path winning.
 * Their paths come from the editor and from proposals the model wrote, so
 * each is checked: relative, `/`-separated, no `.` or `..` step, nothing
 * inside a `.git`. One git ignores (or under an ignored folder) is left
 * out, as the saved file would be; so is a `.env*` the workspace does not
 * have as a file git lists (a proposal creating `.env`).
 */
export interface OverlayRules {
  /** Ignored by git, or below an ignored folder. */
  readonly covers: (rel: string) => boolean;
  /** A file git lists (or the view holds). */
  readonly isListed: (rel: string) => boolean;
  /** Why the workspace's shape at `rel` takes no file (a folder there, a file above it), if it does not. */
  readonly shapeProblem: (rel: string) => string | undefined;
  readonly maxBytes: number;
}

export function admitOverlays(overlays: readonly ViewOverlay[], rules: OverlayRules, notes: Notes): Map<string, Uint8Array> {
  const admitted = new Map<string, Uint8Array>();
  for (const overlay of overlays) {
    const rel = overlay.path;
    const problem = pathProblem(rel) ?? contentProblem(rel, overlay.bytes, rules);
    if (problem !== undefined) {
      notes.add(`${JSON.stringify(rel)} ${problem}: its unsaved or proposed content is not in the view`);
      continue;
    }
    admitted.set(rel, overlay.bytes);
  }
  return admitted;
}

export function pathProblem(rel: unknown): string | undefined {
  if (typeof rel !== 'string' || rel === '') return 'is not a path';
  if (rel.includes('\0') || rel.includes('\\')) return 'holds a NUL or a backslash';
  if (path.posix.isAbsolute(rel)) return 'is absolute';
  const parts = rel.split('/');
  if (parts.some((part) => part === '' || part === '.' || part === '..')) return 'has an empty, `.` or `..` step';
  if (parts.some((part) => part.toLowerCase() === '.git')) return 'is inside a .git folder';
  return undefined;
}

function contentProblem(rel: string, bytes: Uint8Array, rules: OverlayRules): string | undefined {
  if (!(bytes instanceof Uint8Array)) return 'has no bytes';
  if (rules.covers(rel)) return 'is ignored by git';
  const shape = rules.shapeProblem(rel);
  if (shape !== undefined) return shape;
  if (isEnvName(path.posix.basename(rel)) && !rules.isListed(rel)) return 'is a .env file git does not list';
  if (bytes.length > rules.maxBytes) return `is larger than the ${mebibytes(rules.maxBytes)} a file may have in the view`;
  return undefined;
}
