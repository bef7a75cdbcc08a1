/**
 * Run by diskLimit.test.ts as Candor would run when it is not root: a
 * process of an ordinary uid, whose gate runs in bubblewrap as that same
 * uid, without a cgroup (so the disk is polled). Runs one gate command in
 * `clone` under a 64 MiB disk limit and prints its result as JSON.
 */
import { runGate } from '../../../../src/core/evolution/testGate';
import { requiredSandbox } from '../evolution/helpers';

async function main(): Promise<void> {
  const [clone = '', command = ''] = process.argv.slice(2);
  const sandbox = await requiredSandbox();
  const result = await runGate([{ name: 'test', command }], { cwd: clone, sandbox, timeoutMs: 60_000, limits: { processes: 64, memoryMiB: 512, fileSizeMiB: 1024, diskMiB: 64 } });
  process.stdout.write(JSON.stringify({ uid: process.getuid?.(), limitHit: result.limitHit, limits: result.limits, timedOut: result.timedOut, tail: result.tail }));
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
