import * as path from 'node:path';
import { candorRantIds, isGitGuardError, noUnsavedBuffers, openWorkspaceRepo, readOnlyReason, type GuardOptions, type ReadOnlyGit, type UnsavedBufferSource } from '../git';
import { newId } from '../ids';
import { isoNow } from '../jsonl';
import type { Logger } from '../log';
import type { TextModel } from '../provider/textModel';
import { RequestError } from '../provider/requestError';
import { changeTools } from './changeTools';
import { runChangeLoop, textModelOf, type ChangeModel } from './changeLoop';
import { isEvolutionError, throwIfCancelled } from './errors';
import { describeGate, runGate, type GateOptions, type GateResult, type GateStep } from './gateRunner';
import { acquireRunLock, type RunLock } from './lock';
import { measureChange, tooBig } from './measure';
import { realOrResolved, repoPaths } from './paths';
import { appendRun, gateKey, gatedCommits, markGated, type EvolutionOutcome, type EvolutionRecord, type GateSummary } from './record';
import { prepareScratch, resetTo, setupIsCurrent, setupPlan, writeSetupStamp } from './scratch';
import type { Scratch } from './scratchGit';
import { prepareRevert, shipChange } from './ship';
import { appendDecision, triage, type RantState } from './triage';
import { within } from '../workspace/confine';

export type EvolutionPhase = 'triage' | 'scratch clone' | 'gate HEAD' | 'change' | 'gate' | 'ship' | 'record';

export interface EvolutionOptions {
  /** A folder inside the workspace repository. */
  readonly workspace: string;
  readonly dataDir: string;
  /** `candor.evolution.testCommand` (`npm test`). */
  readonly testCommand: string;
  readonly buildCommand?: string;
  /** '' = what the lock file implies. */
  readonly setupCommand?: string;
  readonly maxChangedLines: number;
  readonly maxChangedFiles: number;
  /** Each gate command's timeout. */
  readonly timeoutMs: number;
  /** The model of the change phase (and of triage unless `triageModel` is given). Undefined: triage by rules, no change. */
  readonly model?: ChangeModel;
  readonly triageModel?: TextModel;
  /** The editor's unsaved buffers (the host); the CLI has none. */
  readonly unsaved?: UnsavedBufferSource;
  /** Values kept out of every command's environment (the API key). */
  readonly secrets?: readonly string[];
  readonly signal?: AbortSignal;
  /** Rants of this project are acted on. Default: the workspace folder's name. */
  readonly project?: string;
  /** Model requests in the change phase at most. Default 16. */
  readonly maxRounds?: number;
  readonly clock?: () => Date;
  readonly git?: GuardOptions;
}

export interface EvolutionIO {
  /** One line for the terminal. */
  print(line: string): void;
  onPhase?(phase: EvolutionPhase): void;
  /** Raw output of the gate commands, as it comes. */
  onOutput?(chunk: string): void;
  readonly log?: Logger;
}

interface Ending {
  readonly outcome: EvolutionOutcome;
  readonly reason: string;
  readonly rants?: readonly string[];
  readonly branch?: string;
  readonly commit?: string;
  readonly diffstat?: string;
  readonly gate?: GateResult;
}

/**
 * One evolution run (design.md §3): triage → scratch clone → change → gate →
 * ship → record, each phase printed as it runs. A dirty workspace makes it
 * triage-and-record only. Ends with exactly one line in evolution.jsonl and
 * returns it; never throws for a run that went wrong — that is an `error`
 * record.
 */
export async function runEvolution(options: EvolutionOptions, io: EvolutionIO): Promise<EvolutionRecord> {
  return new EvolutionRun(options, io).run();
}

class EvolutionRun {
  readonly #clock: () => Date;
  readonly #runId = newId();
  readonly #started: string;
  #phase: EvolutionPhase = 'triage';
  #lock: RunLock | undefined;
  #scratch: Scratch | undefined;
  #base: string | undefined;
  /** False when the data folder lies in the workspace: writing there would change the workspace. */
  #mayWrite = true;

  constructor(
    private readonly options: EvolutionOptions,
    private readonly io: EvolutionIO,
  ) {
    this.#clock = options.clock ?? (() => new Date());
    this.#started = isoNow(this.#clock);
  }

  async run(): Promise<EvolutionRecord> {
    let ending: Ending;
    try {
      ending = await this.#steps();
    } catch (err) {
      ending = this.#failure(err);
    } finally {
      await this.#restoreClone();
      this.#lock?.release();
    }
    return this.#record(ending);
  }

  async #steps(): Promise<Ending> {
    const o = this.options;
    const repo = await this.#openRepo();
    if (within(repo.root, realOrResolved(o.dataDir))) {
      this.#mayWrite = false;
      return { outcome: 'error', reason: `the data folder ${o.dataDir} is inside the workspace repository; choose one outside it` };
    }
    const paths = repoPaths(o.dataDir, repo.root);
    this.#lock = acquireRunLock(paths.lock, this.#clock);
    if (this.#lock.tookOver !== undefined) {
      this.io.print(`took over the lock left by an earlier run that did not end (pid ${this.#lock.tookOver.pid}, started ${this.#lock.tookOver.started})`);
    }

    const dirty = await repo.dirtyState(o.unsaved ?? noUnsavedBuffers);
    if (dirty.dirty) {
      const line = readOnlyReason(dirty) ?? 'dirty working tree — read-only cycle';
      this.io.print(line);
      this.io.log?.info(line);
      await this.#triage();
      return { outcome: 'read-only', reason: line };
    }
    const head = await repo.headCommit();
    if (head === undefined) return { outcome: 'error', reason: `the repository at ${repo.root} has no commits yet; an evolution run starts from HEAD` };

    const picked = await this.#triage();
    throwIfCancelled(o.signal);

    this.#enter('scratch clone');
    const prepared = await prepareScratch({ dataDir: o.dataDir, workspaceRoot: repo.root, head, setupCommand: o.setupCommand ?? '', secrets: o.secrets, signal: o.signal });
    this.#scratch = prepared.scratch;
    this.#base = head;
    this.io.print(`${prepared.cloned ? 'cloned' : prepared.fetched ? 'refreshed' : 'reused'} ${prepared.scratch.dir}`);
    this.io.print(`at the workspace's HEAD ${head.slice(0, 12)} — committed work only: uncommitted work is not included`);

    const headGate = await this.#gateHead(repo, head, paths.gated);
    if (headGate !== undefined) return headGate;
    if (picked === undefined) return { outcome: 'nothing-to-evolve', reason: 'no rant to act on' };
    if (o.model === undefined) return { outcome: 'nothing-to-evolve', rants: [picked.rant.id], reason: 'no model is configured to make a change' };
    return this.#change(picked, o.model, prepared.scratch, head, paths.gated);
  }

  async #openRepo(): Promise<ReadOnlyGit> {
    try {
      return await openWorkspaceRepo(this.options.workspace, this.options.git);
    } catch (err) {
      if (isGitGuardError(err, 'not-a-repo')) throw new RunFailure(`${path.resolve(this.options.workspace)} is not a git repository; evolution runs need one`);
      throw err;
    }
  }

  async #triage(): Promise<RantState | undefined> {
    this.#enter('triage');
    const o = this.options;
    const model = o.triageModel ?? (o.model !== undefined ? textModelOf(o.model) : undefined);
    const project = o.project ?? path.basename(path.resolve(o.workspace));
    const result = await triage(o.dataDir, { project, model, signal: o.signal, clock: this.#clock });
    const bySource = (source: string): number => result.decisions.filter((d) => d.status === 'triaged' && d.source === source).length;
    const duplicates = result.decisions.filter((d) => d.status === 'duplicate').length;
    this.io.print(`${result.decisions.length} new rant(s): ${bySource('model')} classified by the model, ${bySource('fallback')} by rules, ${duplicates} duplicate(s)`);
    const picked = result.picked;
    this.io.print(picked === undefined ? 'nothing to act on' : `acting on rant ${picked.rant.id} (${picked.class ?? 'unclassified'}): ${firstLine(picked.rant.text)}`);
    return picked;
  }

  /** Gates HEAD unless it passed before; an ending when it fails. */
  async #gateHead(repo: ReadOnlyGit, head: string, gatedFile: string): Promise<Ending | undefined> {
    const scratch = this.#scratch as Scratch;
    if (gatedCommits(gatedFile, gateKey(this.options)).has(head)) {
      this.io.print(`HEAD ${head.slice(0, 12)} passed the gate before`);
      const setup = await this.#ensureSetup(scratch.dir);
      if (setup !== undefined && !setup.passed) return { outcome: 'error', reason: `the setup command failed: ${describeGate(setup, this.options.timeoutMs)}`, gate: setup };
      return undefined;
    }
    this.#enter('gate HEAD');
    this.io.print(`HEAD ${head.slice(0, 12)} has not passed the gate yet: running it first`);
    const result = await this.#gate(scratch.dir);
    this.io.print(`HEAD gate ${describeGate(result, this.options.timeoutMs)}`);
    if (result.passed) {
      markGated(gatedFile, head, gateKey(this.options), this.#clock);
      return undefined;
    }
    throwIfCancelled(this.options.signal);
    const rants = candorRantIds(await repo.topCommitTrailers());
    if (rants.length === 0) return { outcome: 'error', reason: "the workspace's HEAD does not pass its own tests", gate: result };
    const revert = await prepareRevert(scratch, head);
    this.io.print(`HEAD ${head.slice(0, 12)} came from rant ${rants.join(', ')} and fails the gate: a revert is ready on ${revert.branch}`);
    return {
      outcome: 'revert-prepared',
      reason: `HEAD ${head.slice(0, 12)} (Candor-Rant ${rants.join(', ')}) fails the gate (${describeGate(result, this.options.timeoutMs)}); a revert is prepared on ${revert.branch}`,
      rants,
      branch: revert.branch,
      commit: revert.commit,
      gate: result,
    };
  }

  async #change(picked: RantState, model: ChangeModel, scratch: Scratch, base: string, gatedFile: string): Promise<Ending> {
    const o = this.options;
    const rants = [picked.rant.id];
    this.#enter('change');
    const tools = changeTools({ root: scratch.dir, testSteps: this.#testSteps(), timeoutMs: o.timeoutMs, secrets: o.secrets, onOutput: this.io.onOutput });
    const request = { rant: picked.rant, class: picked.class, note: picked.note, maxChangedLines: o.maxChangedLines, maxChangedFiles: o.maxChangedFiles };
    const loop = await runChangeLoop(request, { model, tools, maxRounds: o.maxRounds, signal: o.signal, onTool: (line) => this.io.print(`  ${line}`), onNotice: (line) => this.io.print(line) });
    this.io.print(`${loop.rounds} request(s), ${loop.toolCalls} tool call(s)${loop.outOfRounds ? ' — stopped at the round limit' : ''}`);
    throwIfCancelled(o.signal);
    const size = await measureChange(scratch, base);
    if (size.files === 0) {
      return { outcome: 'nothing-to-evolve', rants, reason: `the model made no change${loop.summary !== '' ? `: ${firstLine(loop.summary)}` : ''}` };
    }
    this.io.print(`change: ${size.files} file(s), +${size.insertions} −${size.deletions}`);
    const big = tooBig(size, o.maxChangedLines, o.maxChangedFiles);
    if (big !== undefined) return { outcome: 'discarded', rants, reason: big, diffstat: size.diffstat };

    this.#enter('gate');
    const gate = await this.#gate(scratch.dir);
    this.io.print(`gate ${describeGate(gate, o.timeoutMs)}`);
    if (!gate.passed) {
      throwIfCancelled(o.signal);
      return { outcome: 'discarded', rants, reason: `the change fails the gate: ${describeGate(gate, o.timeoutMs)}; the clone is restored`, diffstat: size.diffstat, gate };
    }

    this.#enter('ship');
    const shipped = await shipChange(scratch, { base, tree: size.tree, rant: picked.rant, class: picked.class, summary: loop.summary });
    markGated(gatedFile, shipped.commit, gateKey(o), this.#clock);
    appendDecision(o.dataDir, {
      v: 1, rant: picked.rant.id, ts: isoNow(this.#clock), class: picked.class, duplicateOf: null, status: 'acted', source: picked.source,
      run: this.#runId, branch: shipped.branch, commit: shipped.commit,
    });
    this.io.print(`committed ${shipped.commit.slice(0, 12)} on ${shipped.branch} in the scratch clone`);
    this.io.print(size.diffstat);
    return {
      outcome: 'shipped',
      rants,
      reason: `rant ${picked.rant.id} addressed${loop.summary !== '' ? `: ${firstLine(loop.summary)}` : ''}; take the branch with "Candor: Take Evolution Branch"`,
      branch: shipped.branch,
      commit: shipped.commit,
      diffstat: size.diffstat,
      gate,
    };
  }

  #testSteps(): GateStep[] {
    return [
      { name: 'build', command: this.options.buildCommand ?? '' },
      { name: 'test', command: this.options.testCommand },
    ];
  }

  /** Setup, when the lock file (or the command) changed since the last install; undefined when none was needed. */
  async #ensureSetup(dir: string): Promise<GateResult | undefined> {
    const setupCommand = this.options.setupCommand ?? '';
    const plan = setupPlan(dir, setupCommand);
    if (plan === undefined || setupIsCurrent(dir, setupCommand)) return undefined;
    this.io.print(`setup: ${plan.command}${plan.lockFile !== undefined ? ` (${plan.lockFile} changed)` : ''}`);
    const setup = await runGate([{ name: 'setup', command: plan.command }], this.#gateOptions(dir));
    if (setup.passed) writeSetupStamp(dir, plan);
    return setup;
  }

  /** The gate: setup when needed, then build and tests. */
  async #gate(dir: string): Promise<GateResult> {
    const setup = await this.#ensureSetup(dir);
    if (setup !== undefined && !setup.passed) return setup;
    const result = await runGate(this.#testSteps(), this.#gateOptions(dir));
    return setup !== undefined ? { ...result, ms: result.ms + setup.ms } : result;
  }

  #gateOptions(dir: string): GateOptions {
    const o = this.options;
    return { cwd: dir, timeoutMs: o.timeoutMs, secrets: o.secrets, signal: o.signal, onOutput: this.io.onOutput };
  }

  #failure(err: unknown): Ending {
    if (err instanceof RunFailure) return { outcome: 'error', reason: err.message };
    if (isEvolutionError(err, 'cancelled') || (this.options.signal?.aborted === true)) {
      return { outcome: 'discarded', reason: `cancelled by the user during ${this.#phase}${this.#base !== undefined ? '; the clone is restored' : ''}` };
    }
    if (isEvolutionError(err, 'busy')) return { outcome: 'error', reason: err.message };
    if (err instanceof RequestError) return { outcome: 'error', reason: `the model request failed during ${this.#phase}: ${err.kind}${err.status !== undefined ? ` ${err.status}` : ''} — ${err.message}` };
    const message = err instanceof Error ? err.message : String(err);
    this.io.log?.error(`evolution run failed during ${this.#phase}: ${err instanceof Error && err.stack ? err.stack : message}`);
    return { outcome: 'error', reason: `failed during ${this.#phase}: ${message}` };
  }

  async #restoreClone(): Promise<void> {
    if (this.#scratch === undefined || this.#base === undefined) return;
    try {
      // No signal: a cancelled run must still leave the clone clean.
      await resetTo(this.#scratch, this.#base, this.options.setupCommand ?? '');
    } catch (err) {
      this.io.log?.warn(`could not restore the scratch clone: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  #record(ending: Ending): EvolutionRecord {
    this.#enter('record');
    const gate: GateSummary | null = ending.gate !== undefined ? { passed: ending.gate.passed, ms: ending.gate.ms, tail: ending.gate.tail } : null;
    const record: EvolutionRecord = {
      v: 1,
      run: this.#runId,
      ts: this.#started,
      ended: isoNow(this.#clock),
      rants: ending.rants ?? [],
      outcome: ending.outcome,
      reason: ending.reason,
      branch: ending.branch ?? null,
      commit: ending.commit ?? null,
      diffstat: ending.diffstat ?? null,
      gate,
    };
    if (this.#mayWrite) appendRun(this.options.dataDir, record);
    this.io.print(`outcome: ${record.outcome} — ${record.reason}`);
    return record;
  }

  #enter(phase: EvolutionPhase): void {
    this.#phase = phase;
    this.io.onPhase?.(phase);
    this.io.print(`── ${phase}`);
  }
}

/** A run that cannot proceed, with a reason for people. */
class RunFailure extends Error {}

function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 100)}…` : line;
}
