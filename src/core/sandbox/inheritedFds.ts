import * as fs from 'node:fs';

/**
 * Descriptors a sandboxed command must not inherit (docs/architecture.md,
 * "Sandbox"). Node opens everything close-on-exec, but a descriptor this
 * process was itself given open without it (by the terminal, the container
 * runtime or the editor that started it) passes to every child, through
 * bubblewrap, which closes none, into the model's code: a directory there
 * would reach the host's file system past every mount, a file or socket
 * whatever it leads to.
 *
 * They are found once, from `/proc/self/fdinfo`, the first time a command
 * runs: what this process was handed at its start is what leaks. Each
 * command then gets `/dev/null` at each of those numbers instead (spawn's
 * stdio puts a descriptor of ours over the one it would inherit). A number
 * reused since by a descriptor of Node's own is covered too, which costs
 * nothing: the child would not have had it.
 */

/** Linux's O_CLOEXEC, as fdinfo's octal `flags` shows it. */
const O_CLOEXEC = 0o2000000;

let found: readonly number[] | undefined;

/** This process's descriptors above stdio that lack close-on-exec, read once; none where `/proc` does not tell (macOS). */
export function leakedDescriptors(): readonly number[] {
  found ??= scan('/proc/self');
  return found;
}

/** The descriptors above stdio under `proc` (a `/proc/<pid>`) that are open without close-on-exec. */
export function scan(proc: string): number[] {
  let names: string[];
  try {
    names = fs.readdirSync(`${proc}/fd`);
  } catch {
    return [];
  }
  const leaked: number[] = [];
  for (const name of names) {
    const fd = Number(name);
    if (!Number.isInteger(fd) || fd < 3) continue;
    let info: string;
    try {
      info = fs.readFileSync(`${proc}/fdinfo/${name}`, 'latin1');
    } catch {
      // Closed meanwhile (the listing's own descriptor among them).
      continue;
    }
    const flags = /^flags:\s*([0-7]+)/m.exec(info)?.[1];
    if (flags !== undefined && (parseInt(flags, 8) & O_CLOEXEC) === 0) leaked.push(fd);
  }
  return leaked.sort((a, b) => a - b);
}

export type StdioEntry = 'ignore' | 'pipe' | number;

/**
 * `stdio` with `/dev/null` at every leaked number past its end, and
 * `'ignore'` in the gaps (an ignored slot above 2 leaves the inherited
 * descriptor as it is, so each leaked one needs a descriptor of ours). Call
 * `close` once the child has started.
 */
export function coverLeaked(stdio: readonly StdioEntry[], leaked: readonly number[] = leakedDescriptors()): { stdio: StdioEntry[]; close: () => void } {
  const over = leaked.filter((fd) => fd >= stdio.length);
  if (over.length === 0) return { stdio: [...stdio], close: () => undefined };
  const devNull = fs.openSync('/dev/null', 'r');
  const covered: StdioEntry[] = [...stdio];
  const last = over.at(-1) ?? 0;
  for (let fd = stdio.length; fd <= last; fd++) covered.push('ignore');
  for (const fd of over) covered[fd] = devNull;
  return { stdio: covered, close: () => fs.closeSync(devNull) };
}
