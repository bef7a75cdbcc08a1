import { parseArgs } from 'node:util';
import * as path from 'node:path';
import { saveRant, EmptyRantError } from '../core/rants';
import { environmentSecrets } from '../core/redact';
import { evolve, take, EVOLVE_USAGE } from './evolve';
import { runPromptEvolutionCli, PROMPT_EVOLVE_USAGE } from './promptEvolve';
import { pr, PR_USAGE } from './pr';
import { errorMessage } from '../core/errorMessage';
import { exitWhenWritten, processStreams, type CliStreams } from './output';
import { isKindError } from '../core/kindError';

/**
 * The headless CLI over the same core as the extension:
 *   node dist/cli.js rant "text" --data-dir DIR [--project NAME]
 *   node dist/cli.js evolve [--repository AGENT_REPO] --data-dir DIR [flags mirroring candor.evolution.*]
 *   node dist/cli.js take candor/rant-<id> --repository AGENT_REPO --data-dir DIR
 *   node dist/cli.js pr candor/rant-<id> --repository AGENT_REPO --data-dir DIR [--remote NAME] [--github-api URL] [--yes] [--wait]
 *   node dist/cli.js prompt-evolve --workspace DIR --data-dir DIR [flags mirroring candor.promptEvolution.*]
 */
const USAGE = `usage:
  candor rant "what went wrong" --data-dir DIR [--project NAME]
${EVOLVE_USAGE}
${PR_USAGE}
${PROMPT_EVOLVE_USAGE}`;

/** Runs one command; what it prints goes to `streams` (the process's own, redacted and queued). */
export async function main(argv: string[], streams: CliStreams): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'rant':
      return rant(rest);
    case 'evolve':
      return evolve(rest, streams.stdout);
    case 'take':
      return take(rest);
    case 'pr':
      return pr(rest, streams.stdout);
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
    if (isKindError(err, EmptyRantError)) {
      console.error(`rant: ${err.message}`);
      return 2;
    }
    throw err;
  }
}

// Kept where it was for callers that import it from here; the CLI's streams live in output.ts.
export { redactWrites } from './output';

if (require.main === module) {
  // What this process prints holds no key: not the environment's, not one a provider echoed.
  const streams = processStreams(environmentSecrets());
  void main(process.argv.slice(2), streams).then(
    (code) => exitWhenWritten(streams, code),
    (err: unknown) => {
      console.error(errorMessage(err));
      return exitWhenWritten(streams, 1);
    },
  );
}
