// What a test needs of the machine, probed where it runs, never assumed from
// a marker: the suite also runs inside Candor's own evolution gate, as an
// unprivileged uid, without nested namespaces, under a file-size limit
// (README, "Candor improves Candor"). A test whose need is not met skips with
// the probe's reason; the reporter (test/helpers/skipReporter.ts) lists every
// skip with it, and `npm test` fails on any skip.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { detectSandbox } from '../../src/core/sandbox/sandbox';

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

/** A uid and gid no account of this machine's usual set has; what the chown probe gives its file to. */
const OTHER_OWNER = 4242;
let chownProbe: { reason: string | undefined } | undefined;

/**
 * Why this process cannot give a file to another user, or undefined when it
 * can: an `lchown` of a file of its own to uid and gid 4242 is tried (once),
 * not inferred from the uid. It needs CAP_CHOWN, which the gate user lacks.
 */
export function cannotChown(): string | undefined {
  if (chownProbe !== undefined) return chownProbe.reason;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-chown-probe-'));
  try {
    const file = path.join(dir, 'probe');
    fs.writeFileSync(file, '');
    const other = process.getuid?.() === OTHER_OWNER ? OTHER_OWNER + 1 : OTHER_OWNER;
    fs.lchownSync(file, other, other);
    chownProbe = { reason: undefined };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    chownProbe = { reason: `lchown of a file to another uid is refused here (${code}; uid ${process.getuid?.() ?? '?'}): this needs CAP_CHOWN` };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return chownProbe.reason;
}

let sandboxProbe: Promise<string | undefined> | undefined;

/**
 * Why bubblewrap cannot start a sandbox here, or undefined when it can: the
 * real detection, run once. Only a sandbox the kernel refuses (as inside
 * another sandbox, where namespaces cannot be nested) is a reason to skip;
 * a missing bubblewrap or setpriv is a machine not set up, and the tests
 * that need it fail on it (`requiredSandbox`).
 */
export function noNestedSandbox(): Promise<string | undefined> {
  sandboxProbe ??= detectSandbox('required').then((found) => (found.kind === 'unavailable' && found.cause === 'refused' ? `no sandbox can start here (inside another sandbox, or namespaces are off): ${found.message}` : undefined));
  return sandboxProbe;
}

/** Where a skip's reason is kept for the reporter: on the test, or on the suite a `before` hook skips. */
export interface SkipReasoned {
  skipReason?: string;
}

/** In a mocha test or hook: skips with `reason` when there is one, keeping it for the reporter. */
export function skipUnless(ctx: Mocha.Context, reason: string | undefined): void {
  if (reason === undefined) return;
  const runnable = ctx.test as (Mocha.Runnable & { readonly type?: string }) | undefined;
  // A "before all" hook skips its whole suite; a "before each" hook, the test about to run.
  const target = (runnable?.type === 'hook' ? (runnable.title.startsWith('"before each"') ? ctx.currentTest : runnable.parent) : runnable) as SkipReasoned | undefined;
  if (target !== undefined) target.skipReason = reason;
  ctx.skip();
}
