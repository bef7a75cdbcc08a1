import { createGateCgroup, type GateCgroup } from './cgroup';
import { cgroupWants, type GateLimits } from './limits';

/**
 * The cgroup of one gate call (docs/architecture.md, "Sandbox", limits),
 * from its first command to its result. It is made once, when that first
 * command starts. Strays are cleaned up first: cgroups that killed Candor
 * processes left behind, and this process's own that could not be removed
 * before. The gate's commands share it one after another. Each command
 * joins it, is counted from its own start, and empties it at its end.
 *
 * The cgroup is removed after the gate's result is returned, off its path.
 * A removal still pending when Candor exits is done synchronously then. If
 * a removal fails (a process in uninterruptible sleep), the next gate's
 * start tries again. If Candor is killed outright, the next gate's start
 * finds the owner dead and cleans the cgroup up. So no gate cgroup
 * outlives the next gate.
 */

/** Released gate cgroups whose removal has not finished: undefined until it starts. */
const pending = new Map<GateCgroup, Promise<void> | undefined>();
let exitHooked = false;

/** The gate's cgroup with `limits`, or undefined when this host offers none. */
export function openGateCgroup(limits: Omit<GateLimits, 'diskPaths'>): GateCgroup | undefined {
  hookExit();
  return createGateCgroup(cgroupWants(limits), undefined, { sweepAlways: true });
}

/** The gate is over: its cgroup is emptied and removed once the result has gone back to the caller. */
export function releaseGateCgroup(cgroup: GateCgroup): void {
  pending.set(cgroup, undefined);
  setImmediate(() => startRemoval(cgroup));
}

/** Waits until every released gate cgroup is removed (or left for the next gate's start): before the extension host goes. */
export async function settleGateCgroups(): Promise<void> {
  for (const cgroup of [...pending.keys()]) startRemoval(cgroup);
  await Promise.all([...pending.values()]);
}

function startRemoval(cgroup: GateCgroup): void {
  if (!pending.has(cgroup) || pending.get(cgroup) !== undefined) return;
  pending.set(
    cgroup,
    cgroup.close().finally(() => pending.delete(cgroup)),
  );
}

/** An exit that comes before a removal ran (the CLI exits once its output is flushed) removes what it can, synchronously. */
function hookExit(): void {
  if (exitHooked) return;
  exitHooked = true;
  process.on('exit', () => {
    for (const cgroup of pending.keys()) cgroup.removeNow();
  });
}
