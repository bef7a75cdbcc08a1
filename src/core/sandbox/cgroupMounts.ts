import * as fs from 'node:fs';
import * as path from 'node:path';
import { isInside } from '../realPath';

/**
 * Where the cgroup hierarchies are mounted and where this process sits in
 * them, read from `/proc/self/mountinfo` and `/proc/self/cgroup`, and which
 * v2 folder hands down the wanted controllers: cgroup.ts makes the gate's
 * cgroups there.
 */

export type CgroupController = 'pids' | 'memory';

export interface CgroupMount {
  readonly version: 1 | 2;
  /** The folder of the hierarchy this mount shows (relative to the cgroup namespace). */
  readonly root: string;
  readonly mountPoint: string;
  /** v1: the controllers of the hierarchy; v2: empty (see cgroup.controllers). */
  readonly controllers: readonly string[];
}

/** Where this process sits: the v2 path (`0::/…`), and the v1 path per controller. */
export interface CgroupMembership {
  readonly v2?: string;
  readonly v1: ReadonlyMap<string, string>;
}

/** The cgroup mounts in `/proc/self/mountinfo`. */
export function parseCgroupMounts(mountinfo: string): CgroupMount[] {
  const mounts: CgroupMount[] = [];
  for (const line of mountinfo.split('\n')) {
    const [left, right] = line.split(' - ');
    if (left === undefined || right === undefined) continue;
    const fields = left.split(' ');
    const [fsType, , superOptions = ''] = right.split(' ');
    const root = fields[3];
    const mountPoint = fields[4];
    if (root === undefined || mountPoint === undefined) continue;
    if (fsType === 'cgroup2') mounts.push({ version: 2, root: unescape(root), mountPoint: unescape(mountPoint), controllers: [] });
    if (fsType === 'cgroup') mounts.push({ version: 1, root: unescape(root), mountPoint: unescape(mountPoint), controllers: superOptions.split(',') });
  }
  return mounts;
}

/** `/proc/self/cgroup`: `hierarchy-id:controllers:path` per line. */
export function parseMembership(text: string): CgroupMembership {
  let v2: string | undefined;
  const v1 = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^(\d+):([^:]*):(.*)$/.exec(line.trim());
    if (match === null) continue;
    const [, id, controllers = '', where = ''] = match;
    if (id === '0' && controllers === '') v2 = where;
    else for (const controller of controllers.split(',')) v1.set(controller, where);
  }
  return { v2, v1 };
}

/** The folder of cgroup `where` under `mount`, or undefined when the mount does not show it. */
export function cgroupFolder(mount: CgroupMount, where: string): string | undefined {
  if (!isInside(mount.root, where, path.posix)) return undefined;
  return path.join(mount.mountPoint, path.posix.relative(mount.root, where));
}

/** Octal escapes of mountinfo (`\040` for a space). */
function unescape(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

export interface CgroupSystem {
  readonly mountinfo: string;
  readonly membership: string;
}

export function readSystem(): CgroupSystem | undefined {
  try {
    return { mountinfo: fs.readFileSync('/proc/self/mountinfo', 'utf8'), membership: fs.readFileSync('/proc/self/cgroup', 'utf8') };
  } catch {
    return undefined;
  }
}

/** The v2 folder to make the gate's cgroup in: Candor's own, else its parent, whichever hands down a wanted controller. */
export function v2Candidate(mounts: readonly CgroupMount[], membership: CgroupMembership, wanted: readonly CgroupController[]): { parent: string; controllers: CgroupController[] } | undefined {
  const mount = mounts.find((each) => each.version === 2);
  if (mount === undefined || membership.v2 === undefined) return undefined;
  const own = cgroupFolder(mount, membership.v2);
  const parent = membership.v2 === '/' ? undefined : cgroupFolder(mount, path.posix.dirname(membership.v2));
  for (const folder of [own, parent]) {
    if (folder === undefined) continue;
    const handed = readText(path.join(folder, 'cgroup.subtree_control')).split(/\s+/);
    const controllers = wanted.filter((controller) => handed.includes(controller));
    if (controllers.length > 0) return { parent: folder, controllers };
  }
  return undefined;
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
