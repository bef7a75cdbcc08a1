/**
 * Run by inheritedFds.test.ts as a process of its own, which was handed a
 * descriptor without close-on-exec (as a terminal or a container runtime
 * may hand one to the editor). `plain`: a plain child reads through it, the
 * trap armed. `gate`: the same command as a gate command, in the sandbox.
 * Prints what the command printed.
 */
import { spawnSync } from 'node:child_process';
import { runGate } from '../../../../src/core/evolution/testGate';
import { requiredSandbox } from '../evolution/helpers';

async function main(): Promise<void> {
  const [mode, clone = '', fd = ''] = process.argv.slice(2);
  const command = `cat /proc/self/fd/${fd}/secret.txt 2>/dev/null || echo "nothing at fd ${fd}"; readlink /proc/self/fd/${fd} || true`;
  if (mode === 'plain') {
    process.stdout.write(spawnSync('/bin/sh', ['-c', command], { encoding: 'utf8' }).stdout);
    return;
  }
  const sandbox = await requiredSandbox();
  const result = await runGate([{ name: 'test', command }], { cwd: clone, sandbox, timeoutMs: 30_000 });
  process.stdout.write(result.tail);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
