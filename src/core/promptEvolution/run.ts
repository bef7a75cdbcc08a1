import { setMaxListeners } from 'node:events';
import * as path from 'node:path';
import { errorMessage } from '../errorMessage';
import { PROMPT_FILE, writePromptIfUnchanged, type PromptFilePort, type PromptSnapshot } from '../prompt/promptFile';
import type { ChatModel } from '../provider/chatModel';
import type { SecretSet } from '../redact';
import { evolvePrompt, type EvolveResult } from './evolve';
import { gatherEvidence } from './evidence';
import { PromptRegistry } from './registry';
import {
  abProgressLine, candidateLines, NO_TASKS_NEXT_STEP, outcomeLine, progressLine, skippedLines, undecidedLines,
} from './report';
import type { PromptEvolutionSettings } from './settings';
import { SqliteFileError } from './sqliteFile';
import { readTaskSets } from './taskSet';
import { isKindError } from '../kindError';

/**
 * One prompt-evolution run, the same for the VS Code task and
 * `candor prompt-evolve`: read the prompt in force and the task sets, ask
 * for candidates (or re-test one), A/B-test them, let the gate decide, record
 * it, and write a promoted prompt only if the prompt file did not change
 * meanwhile; a promotion that could not be written is withdrawn in the
 * registry. What differs between the two is behind the ports.
 */

/** Where the task sets are, in the workspace. */
export const EVALS_DIR = '.candor/evals';

/** traces.sqlite: the prompt registry, the chat's traces and the user's signals, in the data folder. */
export function registryFile(dataDir: string): string {
  return path.join(dataDir, 'traces.sqlite');
}

export interface RegistryLocation {
  readonly file: string;
  /** The workspace id (`workspaceIdOf`): prompt versions are kept per workspace. */
  readonly scope: string;
  /** Where sql.js finds its wasm (beside the bundle when installed). */
  readonly locateFile?: (name: string) => string;
  readonly secrets: SecretSet;
}

/**
 * Opens the registry; a file that is not a readable database has been moved
 * aside by then (`warn` says where), and a fresh one is opened: the one retry.
 */
export async function openPromptRegistry(location: RegistryLocation, warn: (message: string) => void): Promise<PromptRegistry> {
  try {
    return await PromptRegistry.open(location);
  } catch (err) {
    if (!isKindError(err, SqliteFileError, 'corrupt')) throw err;
    warn(err.message);
    return PromptRegistry.open(location);
  }
}

export interface PromptEvolutionOutput {
  line(text?: string): void;
  /** A line that says why the run did not get what it wanted (the CLI prints it on stderr). */
  problem(text: string): void;
  /** A/B progress: the task rewrites one line in place, the CLI prints every tenth of the way. */
  abProgress(text: string, done: number, total: number): void;
}

export interface PromptEvolutionPorts {
  /** The workspace folder: the task sets are in its `.candor/evals`. */
  readonly workspace: string;
  /** Candor's data folder: the sessions and rants the evidence is read from. */
  readonly dataDir: string;
  readonly promptFile: PromptFilePort;
  /** The workspace's registry (opened with openPromptRegistry); the caller closes it. */
  readonly registry: () => Promise<PromptRegistry>;
  readonly model: () => Promise<ChatModel>;
  readonly settings: PromptEvolutionSettings;
  readonly output: PromptEvolutionOutput;
  readonly clock: () => Date;
  /** Candidates, evidence, failures and records are redacted with them. */
  readonly secrets: SecretSet;
  readonly signal: AbortSignal;
  /** Re-test this near-miss of the review queue instead of asking for new candidates. */
  readonly retest?: string;
}

export interface PromptEvolutionEnd {
  /** 0: decided (and a promotion written); 1: nothing decided, or the promotion not written; 130: cancelled. */
  readonly code: number;
  /** The run's last word: the outcome and what became of the prompt file. */
  readonly summary: string;
  /** A decided run, for the review panel (the host builds its view). */
  readonly decided?: DecidedRun;
}

/** What the review panel shows of a decided run. */
export interface DecidedRun {
  readonly result: Extract<EvolveResult, { kind: 'decided' }>;
  /** The prompt the candidates were compared with. */
  readonly current: string;
  readonly model: string;
  readonly tasks: number;
  readonly taskSetHash: string;
  /** When the candidates were decided (ISO 8601). */
  readonly finished: string;
}

export async function runPromptEvolution(ports: PromptEvolutionPorts): Promise<PromptEvolutionEnd> {
  const { output: out } = ports;
  // Every request of the run listens on this one signal, and the SDK keeps its listener until the run ends.
  setMaxListeners(0, ports.signal);
  const taskSet = readTaskSets(path.join(ports.workspace, ...EVALS_DIR.split('/')));
  for (const line of skippedLines(taskSet.skipped.map((s) => ({ ...s, file: path.relative(ports.workspace, s.file) })))) out.line(line);
  if (taskSet.tasks.length === 0) return stop(out, [`No tasks found in ${EVALS_DIR}/*.jsonl.`, NO_TASKS_NEXT_STEP]);

  const start = await ports.promptFile.read();
  if (start.refused !== undefined) out.line(`${start.refused}; the run starts from the built-in prompt and will not write the file`);
  out.line(`Prompt: ${start.source === 'workspace' ? PROMPT_FILE : `built in (no ${PROMPT_FILE} yet)`}`);
  out.line(`Tasks: ${taskSet.tasks.length} from ${taskSet.files.map((f) => path.relative(ports.workspace, f)).join(', ')} (hash ${taskSet.hash.slice(0, 12)})`);
  const registry = await ports.registry();

  let candidates: string[] | undefined;
  if (ports.retest !== undefined) {
    const nearMiss = (await registry.nearMisses()).find((e) => e.candidateId === ports.retest);
    if (!nearMiss) return stop(out, [`No near-miss ${ports.retest} in the review queue.`]);
    candidates = [nearMiss.text];
    out.line(`Re-test of ${ports.retest} on tasks it has not been scored on (counts as another hypothesis).`);
  }

  const model = await ports.model();
  const modelName = `${model.identity.model} @ ${model.identity.provider}`;
  out.line(`Model: ${modelName}; ${ports.settings.concurrency} request(s) in flight`);
  const evidence = candidates ? undefined : await gatherEvidence(ports.dataDir, registry, ports.secrets);
  if (evidence) out.line(`Evidence: ${evidence.failingTraces.length} failed request(s), ${evidence.downVoted.length} down-voted repl(ies), ${evidence.rants.length} linked rant(s)`);

  const result = await evolvePrompt({
    secrets: ports.secrets,
    model,
    modelName,
    current: start.text,
    taskSet,
    ...(evidence ? { evidence } : {}),
    ...(candidates ? { candidates } : {}),
    registry,
    settings: ports.settings,
    signal: ports.signal,
    onProgress: (p) => {
      if (p.stage === 'ab-test') out.abProgress(abProgressLine(p), p.done, p.total);
      else {
        const line = progressLine(p, candidates !== undefined);
        if (line) out.line(line);
      }
    },
  });
  if (result.kind !== 'decided') {
    const lines = undecidedLines(result);
    if (result.kind === 'cancelled') {
      for (const line of lines) out.line(line);
      return { code: 130, summary: lines[0] ?? result.kind };
    }
    return stop(out, lines);
  }
  return decided(ports, result, start, registry, { modelName, tasks: taskSet.tasks.length, taskSetHash: taskSet.hash });
}

async function decided(
  ports: PromptEvolutionPorts,
  result: Extract<EvolveResult, { kind: 'decided' }>,
  start: PromptSnapshot,
  registry: PromptRegistry,
  info: { modelName: string; tasks: number; taskSetHash: string },
): Promise<PromptEvolutionEnd> {
  const { output: out } = ports;
  out.line();
  out.line(`A/B: ${result.ab.runs} request(s), ${result.ab.failures.length} failed`);
  for (const failure of result.ab.failures.slice(0, 5)) out.line(`  failed: task ${failure.taskId} (${failure.arm}): ${failure.message}`);
  const decidedRun: DecidedRun = { result, current: start.text, model: info.modelName, tasks: info.tasks, taskSetHash: info.taskSetHash, finished: ports.clock().toISOString() };
  for (const line of candidateLines(result, start.text)) out.line(line);
  out.line();
  let summary = outcomeLine(result);
  let code = 0;
  if (result.outcome === 'promote' && result.winner) {
    const written = await writePromptIfUnchanged(ports.promptFile, result.winner.text, start, 'Candor: promote prompt').catch((err: unknown) => ({ ok: false as const, reason: errorMessage(err) }));
    if (written.ok) summary += `. Written to ${PROMPT_FILE} and saved.`;
    else {
      code = 1;
      summary += `. Not written: ${written.reason}.`;
      // The registry recorded the promotion before the write: record that it never took effect.
      if (result.baselineVersion) {
        await registry.rollback(result.baselineVersion);
        summary += ' The registry records it as withdrawn.';
      }
    }
  }
  if (code === 0) out.line(summary);
  else out.problem(summary);
  return { code, summary, decided: decidedRun };
}

function stop(out: PromptEvolutionOutput, lines: readonly string[]): PromptEvolutionEnd {
  for (const line of lines) out.problem(line);
  return { code: 1, summary: lines[0] ?? '' };
}
