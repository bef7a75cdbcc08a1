import { parseArgs } from 'node:util';
import * as path from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { saveRant, EmptyRantError } from '../core/rants';
import { environmentSecrets, LineRedactor, type SecretSet } from '../core/redact';
import { evolve, take, EVOLVE_USAGE } from './evolve';
import { runPromptEvolutionCli, PROMPT_EVOLVE_USAGE } from './promptEvolve';
import { errorMessage } from '../core/errorMessage';

/**
 * The headless CLI over the same core as the extension:
 *   node dist/cli.js rant "text" --data-dir DIR [--project NAME]
 *   node dist/cli.js evolve [--repository AGENT_REPO] --data-dir DIR [flags mirroring candor.evolution.*]
 *   node dist/cli.js take candor/rant-<id> --repository AGENT_REPO --data-dir DIR
 *   node dist/cli.js prompt-evolve --workspace DIR --data-dir DIR [flags mirroring candor.promptEvolution.*]
 */
const USAGE = `usage:
  candor rant "what went wrong" --data-dir DIR [--project NAME]
${EVOLVE_USAGE}
${PROMPT_EVOLVE_USAGE}`;

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'rant':
      return rant(rest);
    case 'evolve':
      return evolve(rest);
    case 'take':
      return take(rest);
    case 'prompt-evolve':
      return runPromptEvolutionCli(rest);
    case undefined:
    case '--help':
    case 'help':
      console.log(USAGE);
      return command === undefined ? 2 : 0;
    default:
      console.error(`unknown command "${command}"\n${USAGE}`);
      return 2;
  }
}

function rant(args: string[]): number {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { 'data-dir': { type: 'string' }, project: { type: 'string' } },
  });
  const dataDir = values['data-dir'] ?? process.env.CANDOR_DATA_DIR;
  if (!dataDir) {
    console.error('rant: --data-dir (or CANDOR_DATA_DIR) is required: the folder Candor keeps its data in.');
    return 2;
  }
  try {
    const saved = saveRant(path.resolve(dataDir), { text: positionals.join(' '), project: values.project ?? path.basename(process.cwd()), session: null });
    console.log(`Rant saved (${saved.id})`);
    return 0;
  } catch (err) {
    if (err instanceof EmptyRantError) {
      console.error(`rant: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

/**
 * Makes every write to `stream` pass through redaction (docs/architecture.md,
 * "Secrets"), whoever writes: console lines, a gate command's output piped
 * through. Text is held until its line ends, so a key split across two
 * writes is redacted whole; a line longer than `maxLine` is let out in
 * pieces. Returns the function that writes what is still held.
 */
export function redactWrites(stream: NodeJS.WriteStream, secrets: SecretSet, maxLine = 65_536): () => void {
  const write = stream.write.bind(stream) as (text: string) => boolean;
  const decoder = new StringDecoder('utf8');
  const lines = new LineRedactor(secrets, maxLine);
  const emit = (text: string): void => {
    if (text) write(text);
  };
  stream.write = ((chunk: string | Uint8Array, encoding?: BufferEncoding | ((err?: Error | null) => void), done?: (err?: Error | null) => void): boolean => {
    emit(lines.push(typeof chunk === 'string' ? chunk : decoder.write(Buffer.from(chunk))));
    const callback = typeof encoding === 'function' ? encoding : done;
    if (callback) process.nextTick(callback);
    return true;
  }) as typeof stream.write;
  return () => emit(lines.push(decoder.end()) + lines.flush());
}

if (require.main === module) {
  // What this process prints holds no key: not the environment's, not one a provider echoed.
  const secrets = environmentSecrets();
  for (const stream of [process.stdout, process.stderr]) process.on('exit', redactWrites(stream, secrets));
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      console.error(errorMessage(err));
      process.exit(1);
    },
  );
}
