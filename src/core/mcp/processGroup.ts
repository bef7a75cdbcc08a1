import { abortableSleep } from '../sleep';

/**
 * A stdio MCP server runs as the leader of its own process group (spawned
 * detached), so that whatever it starts (`npx` starts a shell that starts
 * node that may start more) is in that group and goes with it: SIGTERM to
 * the whole group, then SIGKILL after a short grace. Windows has no process
 * groups; there only the server itself is signalled.
 */

const KILL_GRACE_MS = 1500;
const POLL_MS = 25;

const windows = process.platform === 'win32';

/** The groups alive now, so that they are signalled when Candor itself exits. */
const live = new Set<number>();
let exitHookInstalled = false;

/** Signals every process of the group led by `pid` (only `pid` itself on Windows); false when none is left. */
function signalGroup(pid: number, signal: NodeJS.Signals | 0): boolean {
  try {
    process.kill(windows ? pid : -pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Whether any process of the group is left (a zombie counts until its parent reaps it). */
function groupAlive(pid: number): boolean {
  return signalGroup(pid, 0);
}

/** Remembers a group started just now, so that Candor's own exit ends it. */
export function trackGroup(pid: number): void {
  live.add(pid);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // The last resort, when Candor exits without closing its connections: nothing
  // can wait any more, so a grace is impossible and SIGKILL is the only
  // signal that leaves no orphan.
  process.once('exit', () => {
    for (const group of live) signalGroup(group, 'SIGKILL');
  });
}

/**
 * Ends the group led by `pid`: SIGTERM to all of it, then SIGKILL to what is
 * left after `graceMs`. Resolves once no process of the group is left, or
 * right after the SIGKILL (the kernel does the rest).
 */
export async function killGroup(pid: number, graceMs = KILL_GRACE_MS): Promise<void> {
  live.delete(pid);
  if (!signalGroup(pid, 'SIGTERM')) return;
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    await abortableSleep(POLL_MS);
    if (!groupAlive(pid)) return;
  }
  signalGroup(pid, 'SIGKILL');
}
