import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { handOff, runEvolution, type SandboxMode } from '../core/evolution';
import { isGitGuardError, noUnsavedBuffers } from '../core/git';
import { isEvolutionError } from '../core/evolution/errors';
import { environmentSecrets } from '../core/redact';
import { resolveCliModel, UsageError, type CliModel } from './model';

/** Defaults of the `candor.evolution.*` settings. */
const DEFAULTS = { testCommand: 'npm test', maxChangedLines: 200, maxChangedFiles: 10, timeoutSeconds: 600 };

export const EVOLVE_USAGE = `  candor evolve --workspace DIR --data-dir DIR [--test-command CMD] [--build-command CMD]
                [--setup-command CMD] [--base-url URL] [--model M] [--scenario FILE]
                [--max-changed-lines N] [--max-changed-files N] [--timeout-seconds N] [--project NAME]
                [--sandbox required|off]
  candor take BRANCH --workspace DIR --data-dir DIR`;

/** `candor evolve`: one evolution run, headless. Exit 0 for any recorded outcome but `error` (1); 2 for bad usage. */
export async function evolve(args: string[]): Promise<number> {
  let parsed: ReturnType<typeof parseEvolveArgs>;
  try {
    parsed = parseEvolveArgs(args);
  } catch (err) {
    console.error(`evolve: ${err instanceof Error ? err.message : String(err)}\nusage:\n${EVOLVE_USAGE}`);
    return 2;
  }
  const { values } = parsed;
  let resolved: CliModel | undefined;
  const controller = new AbortController();
  const onSigint = (): void => {
    console.log('\ncancelling…');
    controller.abort();
  };
  process.once('SIGINT', onSigint);
  try {
    const dataDir = requireDataDir(values['data-dir']);
    const apiKey = process.env.OPENAI_API_KEY ?? '';
    resolved = await resolveCliModel({ baseUrl: values['base-url'], model: values.model, scenario: values.scenario }, apiKey);
    if (resolved.offline) console.log(`provider: ${resolved.offline}`);
    const record = await runEvolution(
      {
        workspace: path.resolve(values.workspace ?? process.cwd()),
        dataDir,
        testCommand: values['test-command'] ?? DEFAULTS.testCommand,
        buildCommand: values['build-command'] ?? '',
        setupCommand: values['setup-command'] ?? '',
        maxChangedLines: positiveInt(values['max-changed-lines'], DEFAULTS.maxChangedLines, '--max-changed-lines'),
        maxChangedFiles: positiveInt(values['max-changed-files'], DEFAULTS.maxChangedFiles, '--max-changed-files'),
        timeoutMs: positiveInt(values['timeout-seconds'], DEFAULTS.timeoutSeconds, '--timeout-seconds') * 1000,
        model: resolved.model,
        unsaved: noUnsavedBuffers,
        secrets: apiKey !== '' ? [apiKey] : [],
        signal: controller.signal,
        project: values.project,
        sandbox: sandboxMode(values.sandbox),
      },
      {
        print: (line) => console.log(line),
        onOutput: (chunk) => process.stdout.write(chunk),
      },
    );
    return record.outcome === 'error' ? 1 : 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`evolve: ${err.message}\nusage:\n${EVOLVE_USAGE}`);
      return 2;
    }
    throw err;
  } finally {
    process.removeListener('SIGINT', onSigint);
    await resolved?.close();
  }
}

function parseEvolveArgs(args: string[]) {
  return parseArgs({
    args,
    options: {
      workspace: { type: 'string' },
      'data-dir': { type: 'string' },
      'test-command': { type: 'string' },
      'build-command': { type: 'string' },
      'setup-command': { type: 'string' },
      'base-url': { type: 'string' },
      model: { type: 'string' },
      scenario: { type: 'string' },
      'max-changed-lines': { type: 'string' },
      'max-changed-files': { type: 'string' },
      'timeout-seconds': { type: 'string' },
      project: { type: 'string' },
      sandbox: { type: 'string' },
    },
  });
}

/** `--sandbox required|off` (default required): "off" runs the gate's commands without an OS sandbox, at the user's own risk. */
function sandboxMode(value: string | undefined): SandboxMode {
  if (value === undefined || value === 'required' || value === 'off') return value ?? 'required';
  throw new UsageError(`--sandbox must be "required" or "off", got ${JSON.stringify(value)}`);
}

/** `candor take BRANCH`: the ref-only hand-off of a branch from the scratch clone (clean workspace only). */
export async function take(args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { workspace: { type: 'string' }, 'data-dir': { type: 'string' } } });
  try {
    const branch = positionals[0];
    if (branch === undefined) throw new UsageError('name the branch to take, e.g. candor/rant-<id>');
    const result = await handOff(requireDataDir(values['data-dir']), path.resolve(values.workspace ?? process.cwd()), branch, noUnsavedBuffers);
    console.log(`took ${result.branch} at ${result.commit.slice(0, 12)} (not checked out)`);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      console.error(`take: ${err.message}\nusage:\n${EVOLVE_USAGE}`);
      return 2;
    }
    if (isGitGuardError(err) || isEvolutionError(err)) {
      console.error(`take: ${environmentSecrets().redact(err.message)}`);
      return 1;
    }
    throw err;
  }
}

function requireDataDir(value: string | undefined): string {
  const dataDir = value ?? process.env.CANDOR_DATA_DIR;
  if (!dataDir) throw new UsageError('--data-dir (or CANDOR_DATA_DIR) is required: the folder Candor keeps its data in');
  return path.resolve(dataDir);
}

function positiveInt(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive whole number, got ${JSON.stringify(value)}`);
  return n;
}
