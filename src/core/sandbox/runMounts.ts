import * as fs from 'node:fs';
import * as path from 'node:path';
import type { SandboxRun } from './sandbox';
import { isInside } from '../realPath';

/**
 * Where a run's own mounts go (docs/architecture.md, "Commands"): the
 * dependency folders bound read-only over the view and the fresh tmpfs
 * folders for their caches, each only where bubblewrap can make its mount
 * point, and never a source that holds or lies in a hidden folder.
 */

/**
 * The run's read-only binds, then its tmpfs folders, each where bubblewrap
 * can make its mount point (canMountAt), pushed onto `args` and `layers`.
 * `size` goes before each tmpfs (bubblewrap's `--size`, or nothing).
 */
export function runMounts(run: SandboxRun, layers: Layer[], args: string[], readOnlyBinds: readonly { source: string; dest: string }[], size: readonly string[] = []): { binds: string[]; tmpfsDests: string[] } {
  const binds: string[] = [];
  for (const bind of readOnlyBinds) {
    if (!canMountAt(layers, bind.dest)) continue;
    args.push('--ro-bind', bind.source, bind.dest);
    layers.push({ dest: bind.dest, source: bind.source, readOnly: true });
    binds.push(bind.dest);
  }
  const tmpfsDests: string[] = [];
  for (const dir of unique((run.tmpfs ?? []).filter((dest) => path.isAbsolute(dest)).map((dest) => path.resolve(dest)))) {
    if (dir === '/' || !canMountAt(layers, dir)) continue;
    // Writable for the uid the command runs as, whoever owns the mount (root, as root).
    args.push('--perms', '1777', ...size, '--tmpfs', dir);
    layers.push({ dest: dir });
    tmpfsDests.push(dir);
  }
  return { binds, tmpfsDests };
}

/** One mount of the sandbox, in the order bubblewrap makes them: a bind shows `source` at `dest`; without a source, a tmpfs. */
export interface Layer {
  readonly dest: string;
  readonly source?: string;
  readonly readOnly?: boolean;
}

/**
 * Whether bubblewrap can mount something at `dest` without stopping the
 * command. It needs a folder there, and makes a missing one (with its
 * parents) in whatever mount shows that place: a tmpfs, or a writable bind
 * (on the host, then, as the uid bubblewrap runs as). Inside a read-only
 * bind it cannot, and stops ("Can't mkdir … Read-only file system"): such a
 * dest is left out, unless the bound folder already has it, as a real
 * folder and not a link (a link would aim the mount elsewhere).
 */
function canMountAt(layers: readonly Layer[], dest: string): boolean {
  const shown = layers.filter((layer) => isInside(layer.dest, dest)).at(-1);
  if (shown?.source === undefined || shown.readOnly !== true) return true;
  const host = path.join(shown.source, path.relative(shown.dest, dest));
  return isRealFolder(host) && realOrUndefined(host) === host;
}

/**
 * The run's read-only binds, by the real path of their source: those whose
 * source exists, and neither holds a hidden folder (the real home among
 * them) nor lies in one other than the home (a dependency folder that is a
 * link into the data folder shows nothing). The dest is taken as given:
 * where the command looks.
 */
export function extraBinds(binds: readonly { readonly source: string; readonly dest: string }[], home: string | undefined, hidden: readonly string[]): { source: string; dest: string }[] {
  const kept: { source: string; dest: string }[] = [];
  for (const bind of binds) {
    const source = realOrUndefined(bind.source);
    if (source === undefined || source === '/' || !path.isAbsolute(bind.dest)) continue;
    if (hidden.some((dir) => isInside(source, dir) || (dir !== home && isInside(dir, source)))) continue;
    kept.push({ source, dest: path.resolve(bind.dest) });
  }
  return kept;
}

/** A folder, not a link to one. */
export function isRealFolder(dir: string): boolean {
  try {
    return fs.lstatSync(dir).isDirectory();
  } catch {
    return false;
  }
}

export function realOrUndefined(target: string): string | undefined {
  try {
    return fs.realpathSync.native(target);
  } catch {
    return undefined;
  }
}

export function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
