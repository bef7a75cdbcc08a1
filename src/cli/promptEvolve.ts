import { setMaxListeners } from 'node:events';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { workspaceIdFor } from '../core/memory/location';
import { BUILT_IN_PROMPT } from '../core/prompt/systemPrompt';
import { evolvePrompt, type EvolveResult } from '../core/promptEvolution/evolve';
import { gatherEvidence } from '../core/promptEvolution/evidence';
import { PromptRegistry } from '../core/promptEvolution/registry';
import {
  abProgressLine, candidateLines, candidateViews, NO_TASKS_NEXT_STEP, outcomeLine, progressLine, skippedLines, undecidedLines,
} from '../core/promptEvolution/report';
import { resolveSettings, SettingsError, type PromptEvolutionSettings } from '../core/promptEvolution/settings';
import { SqliteFileError } from '../core/promptEvolution/sqliteFile';
import { readTaskSets } from '../core/promptEvolution/taskSet';
import { environmentSecrets, type SecretSet } from '../core/redact';
import { resolveCliModel, UsageError, type CliModel } from './model';

/**
 * `candor prompt-evolve`: one prompt-evolution run, headless. The same core
 * as the VS Code task; here a promotion writes `.candor/prompt.md` directly,
 * and only if the file is byte for byte what it was when the run began.
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

const PROMPT_FILE = path.join('.candor', 'prompt.md');

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
  // Every request of the run listens on this one signal, and the SDK keeps its listener until the run ends.
  setMaxListeners(0, controller.signal);
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
    const promptFile = path.join(workspace, PROMPT_FILE);

    const taskSet = readTaskSets(path.join(workspace, '.candor', 'evals'));
    for (const line of skippedLines(taskSet.skipped.map((s) => ({ ...s, file: path.relative(workspace, s.file) })))) io.out(line);
    if (taskSet.tasks.length === 0) {
      io.err(`No tasks found in ${path.join(workspace, '.candor', 'evals')}/*.jsonl.`);
      io.err(NO_TASKS_NEXT_STEP);
      return 1;
    }

    const startBytes = readBytes(promptFile);
    const current = startBytes === undefined ? BUILT_IN_PROMPT : startBytes.toString('utf8');
    io.out(`Prompt: ${startBytes === undefined ? `built in (no ${PROMPT_FILE} yet)` : PROMPT_FILE}`);
    io.out(`Tasks: ${taskSet.tasks.length} from ${taskSet.files.map((f) => path.relative(workspace, f)).join(', ')} (hash ${taskSet.hash.slice(0, 12)})`);

    resolved = await resolveCliModel(args, env.OPENAI_API_KEY ?? '');
    if (resolved.offline) io.out(`Provider: ${resolved.offline}`);
    const { model } = resolved;
    const modelName = `${model.identity.model} @ ${model.identity.provider}`;
    io.out(`Model: ${modelName}; ${args.settings.concurrency} request(s) in flight`);

    // The same scope VS Code uses for this folder: its versions, rollbacks and near-misses, no other workspace's.
    registry = await openRegistry(path.join(args.dataDir, 'traces.sqlite'), workspaceIdFor(workspace), io, secrets);
    const evidence = await gatherEvidence(args.dataDir, registry, secrets);
    io.out(`Evidence: ${evidence.failingTraces.length} failed request(s), ${evidence.downVoted.length} down-voted repl(ies), ${evidence.rants.length} linked rant(s)`);

    let lastTenth = -1;
    const result = await evolvePrompt({
      model,
      modelName,
      current,
      taskSet,
      evidence,
      registry,
      settings: args.settings,
      signal: controller.signal,
      secrets,
      onProgress: (p) => {
        if (p.stage !== 'ab-test') {
          const line = progressLine(p, false);
          if (line) io.out(line);
          return;
        }
        // Every tenth of the way, not every request: the CLI's output is often a log file.
        const tenth = Math.floor((p.done / Math.max(1, p.total)) * 10);
        if (tenth !== lastTenth) {
          lastTenth = tenth;
          io.out(abProgressLine(p));
        }
      },
    });
    return await report(result, { io, current, promptFile, startBytes, registry });
  } catch (err) {
    if (err instanceof UsageError) {
      io.err(`prompt-evolve: ${err.message}\nusage:\n${PROMPT_EVOLVE_USAGE}`);
      return 2;
    }
    if (err instanceof SettingsError) {
      io.err(`prompt-evolve: ${err.message}`);
      return 2;
    }
    io.err(`prompt-evolve: ${err instanceof Error ? err.message : String(err)}`);
    return 1;
  } finally {
    process.removeListener('SIGINT', onSigint);
    registry?.close();
    await resolved?.close();
  }
}

async function report(
  result: EvolveResult,
  ctx: { io: CliOutput; current: string; promptFile: string; startBytes: Buffer | undefined; registry: PromptRegistry },
): Promise<number> {
  const { io } = ctx;
  if (result.kind !== 'decided') {
    for (const line of undecidedLines(result)) {
      if (result.kind === 'cancelled') io.out(line);
      else io.err(line);
    }
    return result.kind === 'cancelled' ? 130 : 1;
  }
  io.out('');
  io.out(`A/B: ${result.ab.runs} request(s), ${result.ab.failures.length} failed`);
  for (const failure of result.ab.failures.slice(0, 5)) io.out(`  failed: task ${failure.taskId} (${failure.arm}): ${failure.message}`);
  for (const line of candidateLines(candidateViews(result, ctx.current))) io.out(line);
  io.out('');
  let summary = outcomeLine(result);
  let code = 0;
  if (result.outcome === 'promote' && result.winner) {
    const refusal = writeIfUnchanged(ctx.promptFile, result.winner.text, ctx.startBytes);
    if (refusal === undefined) summary += `. Written to ${PROMPT_FILE}.`;
    else {
      code = 1;
      summary += `. Not written: ${refusal}.`;
      // The registry recorded the promotion before the write: record that it never took effect.
      if (result.baselineVersion) {
        await ctx.registry.rollback(result.baselineVersion);
        summary += ' The registry records it as withdrawn.';
      }
    }
  }
  if (code === 0) io.out(summary);
  else io.err(summary);
  return code;
}

/** Writes `text` atomically (temp file + rename) unless the file is no longer `expected` (undefined: absent). Returns why not, or undefined. */
function writeIfUnchanged(file: string, text: string, expected: Buffer | undefined): string | undefined {
  const now = readBytes(file);
  const unchanged = expected === undefined ? now === undefined : now !== undefined && now.equals(expected);
  if (!unchanged) return `${PROMPT_FILE} changed since the run began`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const temp = `${file}.candor-${process.pid}.tmp`;
  try {
    fs.writeFileSync(temp, text);
    fs.renameSync(temp, file);
  } catch (err) {
    fs.rmSync(temp, { force: true });
    throw err;
  }
  return undefined;
}

function readBytes(file: string): Buffer | undefined {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function openRegistry(file: string, scope: string, io: CliOutput, secrets: SecretSet): Promise<PromptRegistry> {
  // Installed, the CLI is dist/cli.js with sql-wasm.wasm beside it; from the sources, node_modules has it.
  const beside = (name: string): string | undefined => {
    const candidate = path.join(__dirname, name);
    return fs.existsSync(candidate) ? candidate : undefined;
  };
  const options = { file, scope, secrets, locateFile: (name: string) => beside(name) ?? require.resolve(`sql.js/dist/${name}`) };
  try {
    return await PromptRegistry.open(options);
  } catch (err) {
    if (!(err instanceof SqliteFileError && err.kind === 'corrupt')) throw err;
    io.err(err.message);
    return PromptRegistry.open(options);
  }
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
    throw new UsageError(err instanceof Error ? err.message : String(err));
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
