// Waiting for a condition instead of sleeping a fixed time.

/**
 * Resolves once `check` holds, polling every few milliseconds; fails with
 * `what` after `timeoutMs`, a bound far above the wait expected, so that a
 * test under load waits longer rather than failing.
 */
export async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
