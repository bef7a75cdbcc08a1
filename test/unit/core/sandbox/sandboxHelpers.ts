import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { cgroupFolder, parseCgroupMounts, parseMembership } from '../../../../src/core/sandbox/cgroupMounts';
import { openInputs, type Invocation, type SandboxRun } from '../../../../src/core/sandbox/sandbox';
import { prepareForGateUser, type GateUser } from '../../../../src/core/sandbox/gateUser';
import { tempDir } from '../evolution/helpers';

/** Runs a wrapped command to its end, its inputs (the seccomp program, passwd, group) at fds 3, 4, 5 as the gate passes them. */
export function runWrapped(invocation: Invocation, options: { readonly cwd?: string; readonly env?: NodeJS.ProcessEnv } = {}): SpawnSyncReturns<string> {
  const inputs = openInputs(invocation.inputs, tempDir('candor-inputs-'));
  try {
    return spawnSync(invocation.file, [...invocation.args], {
      cwd: options.cwd,
      env: options.env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe', ...inputs.fds],
      timeout: 20_000,
      killSignal: 'SIGKILL',
    });
  } finally {
    inputs.close();
  }
}

/** A clone (with a `.git` of Candor's), a throwaway home and temp folder; the first two the gate user's when there is one. */
export async function gateRun(user: GateUser | undefined, extra: Partial<SandboxRun> = {}): Promise<SandboxRun> {
  const base = tempDir('candor-run-');
  const run: SandboxRun = { cwd: path.join(base, 'clone'), home: path.join(base, 'home'), tmp: path.join(base, 'tmp'), network: false, depsWritable: false, ...extra };
  for (const dir of [run.cwd, path.join(run.cwd, '.git'), run.home, run.tmp]) fs.mkdirSync(dir, { recursive: true });
  if (user !== undefined) for (const dir of [run.cwd, run.home, run.tmp]) await prepareForGateUser(dir, user);
  return run;
}

/** The words of a shell probe: `OPEN:<what>` when the file opened for writing, `REFUSED:<what>` when not. Never writes a byte. */
export function openForWriting(file: string, what: string): string {
  return `( exec 3>>${file} ) 2>/dev/null && echo OPEN:${what} || echo REFUSED:${what}`;
}

/**
 * The gate cgroups that process `pid` made (`candor-gate-<ns>-<pid>-<n>`),
 * as folders, in every hierarchy where Candor makes them: beside or below
 * this process's own cgroup (the caller and `pid` share it).
 */
export function gateCgroupsOf(pid: number): string[] {
  const membership = parseMembership(fs.readFileSync('/proc/self/cgroup', 'utf8'));
  const named = new RegExp(`^candor-gate-\\d+-${pid}-\\d+$`);
  const found = new Set<string>();
  for (const mount of parseCgroupMounts(fs.readFileSync('/proc/self/mountinfo', 'utf8'))) {
    const where = mount.version === 2 ? membership.v2 : membership.v1.get(mount.controllers.find((each) => each === 'pids' || each === 'memory') ?? '');
    if (where === undefined) continue;
    for (const folder of [cgroupFolder(mount, where), cgroupFolder(mount, path.posix.dirname(where))]) {
      if (folder === undefined || !fs.existsSync(folder)) continue;
      for (const name of fs.readdirSync(folder)) if (named.test(name)) found.add(path.join(folder, name));
    }
  }
  return [...found];
}

/** Waits up to `ms` for `done`; whether it came true. */
export async function eventually(done: () => boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!done() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 25));
  return done();
}
