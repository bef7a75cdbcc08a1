// `npm run bench`: every benchmark, one after another. Each prints its own
// side-by-side ratios; absolute times on a shared machine mean little.
import * as path from 'node:path';

const benches = ['gate', 'git', 'evolution', 'sandbox', 'promptEvolution'];

async function main(): Promise<void> {
  const only = process.argv.slice(2);
  for (const name of benches) {
    if (only.length > 0 && !only.includes(name)) continue;
    console.log(`\n=== ${name} ===`);
    const mod = (await import(path.join(__dirname, `${name}.bench.ts`))) as { run: () => Promise<void> };
    await mod.run();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
