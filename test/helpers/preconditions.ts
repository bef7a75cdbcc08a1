// What a test needs of the machine, probed where it runs, never assumed from
// a marker: the suite also runs inside Candor's own evolution gate, as an
// unprivileged uid, without nested namespaces, under a file-size limit
// (README, "Candor improves Candor"). A test whose need is not met skips with
// the probe's reason, printed beside the skip; the CI run counts skips.
import * as fs from 'node:fs';

/** Why this process is not root, or undefined when it is. */
export function notRoot(): string | undefined {
  if (process.platform !== 'linux') return `not Linux (${process.platform})`;
  const uid = process.getuid?.();
  return uid === 0 ? undefined : `runs as uid ${uid ?? '?'}, and this needs root`;
}

/** The soft `Max file size` of this process in bytes (Infinity when unlimited), from /proc/self/limits. */
export function fileSizeLimit(): number {
  try {
    const line = fs.readFileSync('/proc/self/limits', 'utf8').split('\n').find((l) => l.startsWith('Max file size'));
    const soft = line?.slice('Max file size'.length).trim().split(/\s+/)[0];
    if (soft === undefined || soft === 'unlimited') return Infinity;
    const bytes = Number(soft);
    return Number.isFinite(bytes) ? bytes : Infinity;
  } catch {
    return Infinity;
  }
}

/** Why a file of `bytes` (sparse or not: its length counts) cannot be made here, or undefined when it can. */
export function fileTooLarge(bytes: number): string | undefined {
  const limit = fileSizeLimit();
  return bytes <= limit ? undefined : `a ${bytes}-byte file is over this process's file-size limit (${limit} bytes, /proc/self/limits)`;
}

/** In a mocha test or hook: skips with `reason` when there is one, saying it. */
export function skipUnless(ctx: Mocha.Context, reason: string | undefined): void {
  if (reason === undefined) return;
  console.log(`      (skipped: ${reason})`);
  ctx.skip();
}
