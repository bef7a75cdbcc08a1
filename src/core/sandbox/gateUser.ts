import * as fs from 'node:fs';
import * as path from 'node:path';
import { DEPENDENCY_DIR } from './dependencies';
import { manifestNumber } from '../manifest';

/**
 * The account gate commands run as when Candor runs as root
 * (docs/architecture.md, "Sandbox"). Root with every capability dropped is
 * still root to the kernel wherever it checks a uid and not a capability:
 * the owner bits of root's `0600` files, `/proc/sys`, root's user keyring,
 * sockets that trust uid 0, and `RLIMIT_NPROC`, which root is exempt from. A
 * uid no account has closes all of these at once. (The session keyring is
 * inherited whatever the uid, and readable by whoever holds it: the seccomp
 * filter refuses `keyctl` for that.)
 *
 * Inside the sandbox `/etc/passwd` and `/etc/group` name it `candor-gate`,
 * so `id`, `whoami` and tools that look the user up work. Its group has the
 * same number. The work tree of the scratch clone (not its `.git`, which
 * stays root's and is mounted read-only) and the throwaway home are chowned
 * to it before a command runs.
 */

export const GATE_USER_NAME = 'candor-gate';
/** `candor.evolution.sandboxUid`'s default (the manifest's). */
export const DEFAULT_SANDBOX_UID = manifestNumber('evolution.sandboxUid');

export interface GateUser {
  readonly uid: number;
  readonly gid: number;
  readonly name: string;
}

/** The gate user when this process is root; undefined otherwise (the commands run as Candor's own user, as before). */
export function gateUserFor(sandboxUid: number = DEFAULT_SANDBOX_UID, processUid: number | undefined = process.getuid?.()): GateUser | undefined {
  if (processUid !== 0) return undefined;
  return { uid: sandboxUid, gid: sandboxUid, name: GATE_USER_NAME };
}

/**
 * Why `user` cannot be the gate's, in a sentence naming the setting; undefined
 * when it can. A uid an account of this machine already has would hand the
 * model's code that account's files (and a gid its group's), so only an
 * unused number, or an account the administrator made for this and named
 * `candor-gate`, is taken.
 */
export function gateUserProblem(user: GateUser, passwd = readOrEmpty('/etc/passwd'), group = readOrEmpty('/etc/group')): string | undefined {
  const fix = 'set candor.evolution.sandboxUid to a uid no account or process uses';
  if (!Number.isInteger(user.uid) || user.uid < 1 || user.uid > 0xfffffffe || user.uid === 65534) {
    return `candor.evolution.sandboxUid is ${user.uid}, which cannot be the gate's unprivileged uid (0, 65534 "nobody" and numbers outside 1–4294967294 are refused): ${fix}`;
  }
  const account = entryWithId(passwd, 2, user.uid);
  if (account !== undefined && account !== GATE_USER_NAME) {
    return `uid ${user.uid} (candor.evolution.sandboxUid) belongs to the account "${account}" on this machine, whose files the model's code would then reach: ${fix}`;
  }
  const owner = entryWithId(group, 2, user.gid);
  if (owner !== undefined && owner !== GATE_USER_NAME) {
    return `gid ${user.gid} (candor.evolution.sandboxUid is also the gate's group) belongs to the group "${owner}" on this machine, whose files the model's code would then reach: ${fix}`;
  }
  return undefined;
}

/** The `/etc/passwd` of the sandbox: root, nobody and the gate user, whose home is the throwaway one. */
export function gatePasswd(user: GateUser, home: string): string {
  const safeHome = /^[^:\n]+$/.test(home) ? home : '/nonexistent';
  return [
    'root:x:0:0:root:/root:/bin/sh',
    'nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin',
    `${user.name}:x:${user.uid}:${user.gid}:Candor evolution gate:${safeHome}:/bin/sh`,
    '',
  ].join('\n');
}

/** The `/etc/group` of the sandbox. */
export function gateGroup(user: GateUser): string {
  return ['root:x:0:', 'nogroup:x:65534:', `${user.name}:x:${user.gid}:`, ''].join('\n');
}

/** The user and group databases of NSS: in the sandbox, only the files above answer. */
const USER_DATABASES = ['passwd', 'group', 'shadow', 'gshadow', 'initgroups'];

/**
 * The `/etc/nsswitch.conf` of the sandbox: the host's, except that users and
 * groups come from the files above alone. The host's other sources (systemd,
 * sss, ldap) would answer for accounts the sandbox does not have, and each
 * lookup would load their modules (about 0.2 ms a command for `setpriv`'s
 * own lookup of the gate user). Hosts and the rest stay as the host has them.
 */
export function gateNsswitch(host: string): string {
  const kept = host.split('\n').filter((line) => !USER_DATABASES.includes(/^\s*([a-z_]+)\s*:/.exec(line)?.[1] ?? ''));
  const body = kept.join('\n').replace(/\n*$/, '\n');
  return `${USER_DATABASES.map((database) => `${database}: files`).join('\n')}\n${body === '\n' ? '' : body}`;
}

/** Files handled between two yields to the event loop: a few milliseconds of work at a time. */
const BATCH = 500;

/**
 * Makes `dir` and everything beneath it the gate user's, except `dir/.git`
 * (root's, mounted read-only in the sandbox), so the commands can write the
 * work tree and its dependency folder. Never follows a symbolic link
 * (`lchown`), and changes only directories, regular files and links: a
 * device node or socket keeps its owner. A file with more than one hard link
 * keeps its owner too, since it may be another name of a file outside the
 * clone. What already belongs to the gate user is left as it is, and a
 * dependency folder that does is not entered: setup, which runs as the gate
 * user, is the only writer there, and it holds tens of thousands of files.
 *
 * The walk is synchronous in batches, yielding to the event loop between
 * them: one `lstat` a file, without a thread-pool round trip each.
 */
export async function prepareForGateUser(dir: string, user: GateUser): Promise<void> {
  const pending: string[] = [dir];
  const skip = path.join(dir, '.git');
  const deps = path.join(dir, DEPENDENCY_DIR);
  for (let done = 0; pending.length > 0; done++) {
    if (done > 0 && done % BATCH === 0) await new Promise((resolve) => setImmediate(resolve));
    const file = pending.pop() as string;
    let stat: fs.Stats;
    try {
      stat = fs.lstatSync(file);
    } catch (err) {
      // A file that vanished meanwhile is no longer ours to change; one past PATH_MAX only a gate command made (Candor
      // writes by whole paths), and it is the gate user's already.
      if (beyondReach(err)) continue;
      throw err;
    }
    const directory = stat.isDirectory();
    if (!directory && !stat.isFile() && !stat.isSymbolicLink()) continue;
    const owned = stat.uid === user.uid && stat.gid === user.gid;
    if (!owned && (directory || stat.nlink === 1)) fs.lchownSync(file, user.uid, user.gid);
    if (!directory || (owned && file === deps)) continue;
    let entries: string[];
    try {
      entries = fs.readdirSync(file);
    } catch (err) {
      if (beyondReach(err)) continue;
      throw err;
    }
    for (const entry of entries) {
      const child = path.join(file, entry);
      if (child !== skip) pending.push(child);
    }
  }
}

function beyondReach(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENAMETOOLONG';
}

/** The name of the entry whose numeric field `field` is `id` in a passwd-style file. */
function entryWithId(text: string, field: number, id: number): string | undefined {
  for (const line of text.split('\n')) {
    const parts = line.split(':');
    if (parts.length > field && parts[field] === String(id)) return parts[0];
  }
  return undefined;
}

function readOrEmpty(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}
