// `npm run bench`: every benchmark, one after another. Each prints its own
// side-by-side ratios; absolute times on a shared machine mean little.
import * as path from 'node:path';

const benches = ['gate', 'request', 'realText', 'git', 'evolution', 'reset', 'sandbox', 'promptEvolution', 'session', 'view', 'mcp', 'neutralise'];
/** Run only when named: they start code-server, or run Candor's whole unit suite several times (gateSuite, about an hour). */
const onDemand = ['activation', 'sessionReopen', 'gateSuite'];

async function main(): Promise<void> {
  const only = process.argv.slice(2).filter((arg) => !arg.endsWith('.vsix'));
  for (const name of [...benches, ...onDemand]) {
    if (only.length > 0 ? !only.includes(name) : onDemand.includes(name)) continue;
    console.log(`\n=== ${name} ===`);
    const mod = (await import(path.join(__dirname, `${name}.bench.ts`))) as { run: (args?: readonly string[]) => Promise<void> };
    // Only the on-demand benchmarks take arguments (the VSIX files to compare; gateSuite ignores them).
    if (onDemand.includes(name)) await mod.run(process.argv.slice(2).filter((arg) => arg.endsWith('.vsix')));
    else await mod.run();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
