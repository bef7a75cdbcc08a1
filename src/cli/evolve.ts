import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { handOff, runEvolution, type SandboxMode } from '../core/evolution';
import { isGitGuardError, noUnsavedBuffers } from '../core/git';
import { isEvolutionError } from '../core/evolution/errors';
import { environmentSecrets } from '../core/redact';
import { manifestDefaults } from '../core/manifest';
import { resolveCandorSettings } from '../core/settings/resolve';
import { resolveCliModel, UsageError, type CliModel } from './model';
import { errorMessage } from '../core/errorMessage';
import { ensureDataDir, isDataDirError } from '../core/settings/dataDirRules';
import type { CliStream } from './output';
import { ciAtStart } from './github';
import { isKindError } from '../core/kindError';

/** The `candor.evolution.*` settings with nothing set: the manifest's defaults, through the extension's own resolver. */
const SETTINGS = resolveCandorSettings({ inspect: manifestDefaults, trusted: true, confirmedUrls: [] });
/** Each gate command may run this long, as in the extension's task. */
const TIMEOUT_SECONDS = 600;

export const EVOLVE_USAGE = `  candor evolve --data-dir DIR [--repository AGENT_REPO] [--test-command CMD] [--build-command CMD]
                [--setup-command CMD] [--base-url URL] [--model M] [--scenario FILE]
                [--max-changed-lines N] [--max-changed-files N] [--max-changed-bytes N]
                [--timeout-seconds N] [--sandbox required|off] [--no-rerun] [--env NAME]…
                [--github-api URL] [--remote NAME]
                (without --repository: triage and routing only, no code change anywhere;
                 with GITHUB_TOKEN set, CI is read first: of earlier runs' pull requests, and
                 of the default branch, whose culprit the run reverts)
  candor take BRANCH --repository AGENT_REPO --data-dir DIR`;

/**
 * Evolution changes only the agent's own repository, never the project the
 * user works in: the flag that named the workspace is refused by name, so a
 * script written for it stops instead of running on the wrong repository.
 */
const WORKSPACE_FLAG = '--workspace is gone: evolution changes only the agent\'s own repository; use --repository AGENT_REPO (a local git checkout of the agent)';

/** `candor evolve`: one evolution run, headless. Exit 0 for any recorded outcome but `error` (1); 2 for bad usage. */
export async function evolve(args: string[], out: CliStream): Promise<number> {
  let parsed: ReturnType<typeof parseEvolveArgs>;
  try {
    parsed = parseEvolveArgs(args);
  } catch (err) {
    console.error(`evolve: ${errorMessage(err)}\nusage:\n${EVOLVE_USAGE}`);
    return 2;
  }
  const { values } = parsed;
  if (values.workspace !== undefined) {
    console.error(`evolve: ${WORKSPACE_FLAG}\nusage:\n${EVOLVE_USAGE}`);
    return 2;
  }
  let resolved: CliModel | undefined;
  const controller = new AbortController();
  const onSigint = (): void => {
    out.line('\ncancelling…');
    controller.abort();
  };
  process.once('SIGINT', onSigint);
  try {
    const dataDir = requireDataDir(values['data-dir'], values.repository);
    const github = { dataDir, remote: values.remote ?? SETTINGS.pullRequests.remote, ...(values['github-api'] !== undefined ? { apiUrl: values['github-api'] } : {}), secrets: environmentSecrets(), out };
    const ciCulprit = values.repository !== undefined ? await ciAtStart({ ...github, repository: path.resolve(values.repository) }) : undefined;
    const apiKey = process.env.OPENAI_API_KEY ?? '';
    resolved = await resolveCliModel({ baseUrl: values['base-url'], model: values.model, scenario: values.scenario }, apiKey);
    if (resolved.offline) out.line(`provider: ${resolved.offline}`);
    const record = await runEvolution(
      {
        ...(values.repository !== undefined ? { repository: path.resolve(values.repository) } : {}),
        dataDir,
        testCommand: values['test-command'] ?? SETTINGS.testCommand,
        buildCommand: values['build-command'] ?? '',
        setupCommand: values['setup-command'] ?? '',
        maxChangedLines: positiveInt(values['max-changed-lines'], SETTINGS.maxChangedLines, '--max-changed-lines'),
        maxChangedFiles: positiveInt(values['max-changed-files'], SETTINGS.maxChangedFiles, '--max-changed-files'),
        maxChangedBytes: positiveInt(values['max-changed-bytes'], SETTINGS.maxChangedBytes, '--max-changed-bytes'),
        rerunFailedGate: values['no-rerun'] !== true,
        sandboxUid: SETTINGS.sandboxUid,
        environment: values.env ?? [],
        limits: SETTINGS.limits,
        timeoutMs: positiveInt(values['timeout-seconds'], TIMEOUT_SECONDS, '--timeout-seconds') * 1000,
        ...(ciCulprit !== undefined ? { ciCulprit } : {}),
        model: resolved.model,
        unsaved: noUnsavedBuffers,
        // The key and every credential-looking variable of the environment: kept out of output, records, commits and commands.
        secrets: environmentSecrets().values(),
        signal: controller.signal,
        agentReadme: bundledReadme(),
        sandbox: sandboxMode(values.sandbox),
      },
      {
        // Lines of the run always arrive; a gate's output is dropped while the reader is 8 MiB behind (see output.ts).
        print: (line) => out.line(line),
        onOutput: (chunk) => out.stream(chunk),
      },
    );
    return record.outcome === 'error' ? 1 : 0;
  } catch (err) {
    if (isKindError(err, UsageError)) {
      console.error(`evolve: ${err.message}\nusage:\n${EVOLVE_USAGE}`);
      return 2;
    }
    if (isDataDirError(err)) {
      console.error(`evolve: ${err.message}`);
      return 1;
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
      'max-changed-bytes': { type: 'string' },
      'no-rerun': { type: 'boolean' },
      env: { type: 'string', multiple: true },
      'timeout-seconds': { type: 'string' },
      repository: { type: 'string' },
      sandbox: { type: 'string' },
      'github-api': { type: 'string' },
      remote: { type: 'string' },
    },
  });
}

/** `--sandbox required|off` (default required): "off" runs the gate's commands without an OS sandbox, at the user's own risk. */
function sandboxMode(value: string | undefined): SandboxMode {
  if (value === undefined || value === 'required' || value === 'off') return value ?? 'required';
  throw new UsageError(`--sandbox must be "required" or "off", got ${JSON.stringify(value)}`);
}

/** `candor take BRANCH`: the ref-only hand-off of a branch from the scratch clone into the agent's repository (clean only). */
export async function take(args: string[]): Promise<number> {
  try {
    const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { repository: { type: 'string' }, workspace: { type: 'string' }, 'data-dir': { type: 'string' } } });
    if (values.workspace !== undefined) throw new UsageError(WORKSPACE_FLAG);
    const branch = positionals[0];
    if (branch === undefined) throw new UsageError('name the branch to take, e.g. candor/rant-<id>');
    if (values.repository === undefined) throw new UsageError('--repository is required: the agent\'s repository the branch goes into');
    const result = await handOff(requireDataDir(values['data-dir'], values.repository), path.resolve(values.repository), branch, noUnsavedBuffers);
    console.log(`took ${result.branch} at ${result.commit.slice(0, 12)} (not checked out)`);
    return 0;
  } catch (err) {
    if (isKindError(err, UsageError) || isParseArgsError(err)) {
      console.error(`take: ${err.message}\nusage:\n${EVOLVE_USAGE}`);
      return 2;
    }
    if (isGitGuardError(err) || isEvolutionError(err) || isDataDirError(err)) {
      console.error(`take: ${environmentSecrets().redact(err.message)}`);
      return 1;
    }
    throw err;
  }
}

/** An unknown option or a missing value, as node:util's parseArgs reports it. */
export function isParseArgsError(err: unknown): err is Error {
  return err instanceof Error && String((err as { code?: unknown }).code ?? '').startsWith('ERR_PARSE_ARGS');
}

/** Candor's own README beside the CLI bundle (dist/../README.md), context for triage when the agent's repository has none. */
function bundledReadme(): string | undefined {
  try {
    return fs.readFileSync(path.join(__dirname, '..', 'README.md'), 'utf8');
  } catch {
    return undefined;
  }
}

/** The data folder, checked by the same rules as `candor.dataDir` and created 0700 when missing. */
export function requireDataDir(value: string | undefined, repository?: string): string {
  const dataDir = value ?? process.env.CANDOR_DATA_DIR;
  if (!dataDir) throw new UsageError('--data-dir (or CANDOR_DATA_DIR) is required: the folder Candor keeps its data in');
  const guarded = repository !== undefined ? [{ label: "the agent's repository (--repository)", path: path.resolve(repository) }] : [];
  return ensureDataDir(path.resolve(dataDir), { home: os.homedir(), uid: process.getuid?.(), guarded });
}

function positiveInt(value: string | undefined, fallback: number, flag: string): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new UsageError(`${flag} must be a positive whole number, got ${JSON.stringify(value)}`);
  return n;
}
