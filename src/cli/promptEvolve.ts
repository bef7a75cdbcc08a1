import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { errorMessage } from '../core/errorMessage';
import { diskPromptFile } from '../core/prompt/promptFile';
import type { PromptRegistry } from '../core/promptEvolution/registry';
import { openPromptRegistry, registryFile, runPromptEvolution } from '../core/promptEvolution/run';
import { resolveSettings, SettingsError, type PromptEvolutionSettings } from '../core/promptEvolution/settings';
import { environmentSecrets, type SecretSet } from '../core/redact';
import { workspaceIdOf } from '../core/workspaceId';
import { resolveCliModel, UsageError, type CliModel } from './model';
import { isKindError } from '../core/kindError';

/**
 * `candor prompt-evolve`: one prompt-evolution run, headless: the same
 * `runPromptEvolution` as the VS Code task, with the prompt file read and
 * written on disk, the model from the flags and the key from the environment.
 */

export const PROMPT_EVOLVE_USAGE = `  candor prompt-evolve --workspace DIR --data-dir DIR [--base-url URL --model M] [--scenario FILE]
                [--candidates N] [--concurrency N] [--max-changed-lines N] [--max-drift X]
                [--min-tasks N] [--min-discordant N] [--min-effect X] [--alpha X]
    Proposes candidate edits of .candor/prompt.md (or the built-in prompt), A/B-tests them on
    .candor/evals/*.jsonl and promotes one only if it passes the gate. Without --base-url the
    offline demo provider answers (scripted replies, not a model), from --scenario if given.
    The API key comes from OPENAI_API_KEY. The prompt history in the data folder's traces.sqlite
    is kept per workspace: --workspace picks it, as VS Code does for the first workspace folder.`;

export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

const consoleOutput: CliOutput = { out: (line) => console.log(line), err: (line) => console.error(line) };

/** Every line printed is redacted first (docs/architecture.md, "Secrets"): a provider's error may echo the key. */
function redactedOutput(io: CliOutput, secrets: SecretSet): CliOutput {
  return { out: (line) => io.out(secrets.redact(line)), err: (line) => io.err(secrets.redact(line)) };
}

const SETTING_FLAGS = {
  candidates: 'candidates',
  concurrency: 'concurrency',
  'max-changed-lines': 'maxChangedLines',
  'max-drift': 'maxDrift',
  'min-tasks': 'minTasks',
  'min-discordant': 'minDiscordant',
  'min-effect': 'minEffect',
  alpha: 'alpha',
} as const satisfies Record<string, keyof PromptEvolutionSettings>;

/** Exit 0 for any gate outcome; 1 for an error (no tasks, no candidates, a refused write); 2 for bad usage; 130 when cancelled. */
export async function runPromptEvolutionCli(argv: string[], output: CliOutput = consoleOutput, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  // The key, and everything written or printed, without it: traces.sqlite, the prompt file, stdout and stderr.
  const secrets = environmentSecrets(env);
  const io = redactedOutput(output, secrets);
  const controller = new AbortController();
  const onSigint = (): void => {
    io.out('cancelling…');
    controller.abort();
  };
  process.once('SIGINT', onSigint);
  let resolved: CliModel | undefined;
  let registry: PromptRegistry | undefined;
  try {
    const args = parse(argv);
    const workspace = path.resolve(args.workspace);
    let lastTenth = -1;
    const end = await runPromptEvolution({
      workspace,
      dataDir: args.dataDir,
      promptFile: diskPromptFile(workspace),
      // The same scope VS Code uses for this folder: its versions, rollbacks and near-misses, no other workspace's.
      registry: async () => (registry ??= await openPromptRegistry({ file: registryFile(args.dataDir), scope: workspaceIdOf(workspace), secrets, locateFile: sqlWasm }, io.err)),
      model: async () => {
        resolved = await resolveCliModel(args, env.OPENAI_API_KEY ?? '');
        if (resolved.offline) io.out(`Provider: ${resolved.offline}`);
        return resolved.model;
      },
      settings: args.settings,
      output: {
        line: (text = '') => io.out(text),
        problem: (text) => io.err(text),
        abProgress: (text, done, total) => {
          // Every tenth of the way, not every request: the CLI's output is often a log file.
          const tenth = Math.floor((done / Math.max(1, total)) * 10);
          if (tenth !== lastTenth) {
            lastTenth = tenth;
            io.out(text);
          }
        },
      },
      clock: () => new Date(),
      secrets,
      signal: controller.signal,
    });
    return end.code;
  } catch (err) {
    if (isKindError(err, UsageError)) {
      io.err(`prompt-evolve: ${err.message}\nusage:\n${PROMPT_EVOLVE_USAGE}`);
      return 2;
    }
    if (isKindError(err, SettingsError)) {
      io.err(`prompt-evolve: ${err.message}`);
      return 2;
    }
    io.err(`prompt-evolve: ${errorMessage(err)}`);
    return 1;
  } finally {
    process.removeListener('SIGINT', onSigint);
    registry?.close();
    await resolved?.close();
  }
}

/** Installed, the CLI is dist/cli.js with sql-wasm.wasm beside it; from the sources, node_modules has it. */
function sqlWasm(name: string): string {
  const beside = path.join(__dirname, name);
  return fs.existsSync(beside) ? beside : require.resolve(`sql.js/dist/${name}`);
}

interface ParsedArgs {
  readonly workspace: string;
  readonly dataDir: string;
  readonly baseUrl?: string;
  readonly model?: string;
  readonly scenario?: string;
  readonly settings: PromptEvolutionSettings;
}

function parse(argv: string[]): ParsedArgs {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({
      args: argv,
      options: {
        workspace: { type: 'string' },
        'data-dir': { type: 'string' },
        'base-url': { type: 'string' },
        model: { type: 'string' },
        scenario: { type: 'string' },
        ...Object.fromEntries(Object.keys(SETTING_FLAGS).map((flag) => [flag, { type: 'string' as const }])),
      },
    }).values as Record<string, string | undefined>;
  } catch (err) {
    throw new UsageError(errorMessage(err));
  }
  const workspace = values.workspace ?? process.cwd();
  const dataDir = values['data-dir'] ?? process.env.CANDOR_DATA_DIR;
  if (!dataDir) throw new UsageError('--data-dir (or CANDOR_DATA_DIR) is required: the folder Candor keeps its data in');
  const overrides: Partial<Record<keyof PromptEvolutionSettings, number>> = {};
  for (const [flag, key] of Object.entries(SETTING_FLAGS)) {
    const raw = values[flag];
    if (raw === undefined) continue;
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) throw new UsageError(`--${flag} must be a number, got ${JSON.stringify(raw)}`);
    overrides[key] = n;
  }
  const baseUrl = values['base-url']?.trim();
  return {
    workspace,
    dataDir: path.resolve(dataDir),
    ...(baseUrl ? { baseUrl } : {}),
    ...(values.model ? { model: values.model } : {}),
    ...(values.scenario ? { scenario: values.scenario } : {}),
    settings: resolveSettings(overrides),
  };
}
