import * as path from 'node:path';
import { DEPENDENCY_DIR } from './dependencies';

/**
 * The Seatbelt profile (`sandbox-exec -p`) of one gate command on macOS
 * (docs/architecture.md, "Sandbox").
 *
 * UNTESTED: written from Apple's sandbox profile language as Chromium and
 * Codex use it, never run on a Mac by this project's tests. It mirrors the
 * bubblewrap mounts: read the disk except the hidden folders, bound-back
 * toolchains readable, write only the clone (not its `.git`, not its
 * dependency folder outside setup) and the throwaway home and temp folder,
 * network only when asked. Only `allow` rules after `(deny default)`, so
 * their order does not matter.
 */

export interface SeatbeltRun {
  readonly cwd: string;
  readonly home: string;
  readonly tmp: string;
  readonly writable?: readonly string[];
  /** Real paths, the real home among them. */
  readonly hidden: readonly string[];
  /** Real paths readable even inside a hidden folder: a view's dependency folders, in the workspace (untested, as all of this file). */
  readonly readable?: readonly string[];
  readonly network: boolean;
  readonly depsWritable: boolean;
}

export function seatbeltProfile(run: SeatbeltRun, toolchains: readonly string[]): string {
  const notHidden = run.hidden.map((dir) => `(require-not (subpath ${quote(dir)}))`).join(' ');
  const readOnlyInClone = [path.join(run.cwd, '.git'), ...(run.depsWritable ? [] : [path.join(run.cwd, DEPENDENCY_DIR)])]
    .map((dir) => `(require-not (subpath ${quote(dir)}))`)
    .join(' ');
  const writable = [run.home, run.tmp, ...(run.writable ?? [])].map((dir) => `(subpath ${quote(dir)})`).join(' ');
  return [
    '(version 1)',
    '(deny default)',
    '(allow process-exec process-fork)',
    '(allow signal (target same-sandbox))',
    '(allow process-info* (target same-sandbox))',
    '(allow sysctl-read mach-lookup ipc-posix-shm iokit-open)',
    `(allow file-read* (require-all (subpath "/") ${notHidden}))`,
    ...(toolchains.length > 0 ? [`(allow file-read* ${toolchains.map((dir) => `(subpath ${quote(dir)})`).join(' ')})`] : []),
    ...((run.readable ?? []).length > 0 ? [`(allow file-read* ${(run.readable ?? []).map((dir) => `(subpath ${quote(dir)})`).join(' ')})`] : []),
    `(allow file-read* (subpath ${quote(run.cwd)}) ${writable})`,
    `(allow file-write* (require-all (subpath ${quote(run.cwd)}) ${readOnlyInClone}))`,
    `(allow file-write* ${writable})`,
    '(allow file-write* (literal "/dev/null") (literal "/dev/zero") (regex #"^/dev/tty") (regex #"^/dev/fd/"))',
    ...(run.network ? ['(allow network*)'] : []),
  ].join('\n');
}

function quote(text: string): string {
  return `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}
