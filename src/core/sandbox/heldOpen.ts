import * as fs from 'node:fs';

/**
 * Disk that a command's processes hold where no walk can see it
 * (docs/architecture.md, "Sandbox", limits): files deleted while open, and
 * files made with `O_TMPFILE`, which have no name at all. They keep their
 * blocks until the last descriptor or mapping goes. Linux only: read from
 * `/proc/<pid>/fd` and, for a file that is only mapped, `/proc/<pid>/maps`
 * with `/proc/<pid>/map_files` (which only root may read; elsewhere the
 * free-space bound of diskWatch.ts still counts them). A thread with a
 * descriptor table of its own is left to that bound too.
 */

/** Bytes allocated to nameless files that `pids` hold, per file system (of `devices`), each file once. */
export function heldOpenBytes(pids: readonly number[], devices: ReadonlySet<number>): Map<number, number> {
  const bytes = new Map<number, number>();
  if (process.platform !== 'linux' || devices.size === 0) return bytes;
  const seen = new Set<string>();
  const count = (link: string): void => {
    let stats: fs.Stats;
    try {
      stats = fs.statSync(link);
    } catch {
      return;
    }
    if (!stats.isFile() || stats.nlink !== 0 || !devices.has(stats.dev)) return;
    const key = `${stats.dev}:${stats.ino}`;
    if (seen.has(key)) return;
    seen.add(key);
    bytes.set(stats.dev, (bytes.get(stats.dev) ?? 0) + stats.blocks * 512);
  };
  for (const pid of pids) {
    for (const fd of listOrEmpty(`/proc/${pid}/fd`)) count(`/proc/${pid}/fd/${fd}`);
    for (const range of deletedMappings(pid)) count(`/proc/${pid}/map_files/${range}`);
  }
  return bytes;
}

/** The address ranges of `pid`'s mappings of deleted files. */
function deletedMappings(pid: number): string[] {
  let maps: string;
  try {
    maps = fs.readFileSync(`/proc/${pid}/maps`, 'utf8');
  } catch {
    return [];
  }
  const ranges = new Set<string>();
  for (const line of maps.split('\n')) {
    // start-end perms offset dev inode path: an inode of 0 is no file.
    const match = /^([0-9a-f]+-[0-9a-f]+) \S+ \S+ \S+ (\d+) .* \(deleted\)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== '0') ranges.add(match[1]);
  }
  return [...ranges];
}

/** `root` and every process descended from it, read from `/proc/<pid>/stat`: the command's processes where no cgroup lists them. */
export function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of listOrEmpty('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read after the last ')'.
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    if (!Number.isInteger(ppid)) continue;
    const list = children.get(ppid) ?? [];
    list.push(Number(entry));
    children.set(ppid, list);
  }
  const tree = new Set<number>();
  const pending = [root];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    if (tree.has(pid)) continue;
    tree.add(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  return [...tree];
}

function listOrEmpty(dir: string): string[] {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}
