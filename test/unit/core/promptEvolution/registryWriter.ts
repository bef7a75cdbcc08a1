/**
 * A second process writing to the registry, for the two-writer and
 * killed-writer tests: `registryWriter.ts <file> <count|0 = forever> <session>`.
 * Prints the index of each trace once its write has been renamed into place.
 */
import { PromptRegistry } from '../../../../src/core/promptEvolution/registry';

async function main(): Promise<void> {
  const [file, count, session] = process.argv.slice(2);
  if (!file || !count || !session) throw new Error('usage: registryWriter <file> <count> <session>');
  const registry = await PromptRegistry.open({ file, scope: session });
  const limit = Number(count);
  for (let i = 0; limit === 0 || i < limit; i++) {
    await registry.addTrace({ session, model: 'm', provider: 'offline', toolCalls: i, durationMs: 1, promptTokens: 10, completionTokens: 5 });
    process.stdout.write(`${i}\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
