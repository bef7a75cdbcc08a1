import * as path from 'node:path';
import { candorRantIds, isGitGuardError, noUnsavedBuffers, openWorkspaceRepo, readOnlyReason, type GuardOptions, type ReadOnlyGit, type UnsavedBufferSource } from '../git';
import { newId } from '../ids';
import { isoNow } from '../jsonl';
import type { Logger } from '../log';
import type { ChatModel, TextModel } from '../provider/chatModel';
import { RequestError } from '../provider/requestError';
import { changeTools } from './changeTools';
import { runChangeLoop } from './changeLoop';
import { isEvolutionError, throwIfCancelled } from './errors';
import { describeGate, runGate, type GateOptions, type GateResult, type GateStep } from './testGate';
import { acquireRunLock, type RunLock } from './lock';
import { measureChange, tooBig } from './measure';
import { repoPaths } from './paths';
import { appendRun, gateKey, gatedCommits, markGated, type EvolutionOutcome, type EvolutionRecord, type GateSummary } from './record';
import { redactedOutput, type RunOutput } from './redactedIO';
import { SANDBOX_OFF_WARNING, detectSandbox, isSandboxUnavailable, type DetectOptions, type Sandbox, type SandboxMode } from './sandbox';
import { prepareScratch, resetTo, setupInputsMatch, setupIsCurrent, setupPlan, setupStampFile, writeSetupStamp } from './scratch';
import type { Scratch } from './scratchGit';
import { SecretSet } from '../redact';
import { prepareRevert, shipChange } from './ship';
import { appendDecision, triage, type RantState } from './triage';
import { isInsideReal } from '../settings/realPath';

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
  readonly model?: ChatModel;
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
  /** `candor.evolution.sandbox`; default 'required': no command runs outside the OS sandbox. */
  readonly sandbox?: SandboxMode;
  /** Where to look for the sandbox (a test points it at a missing bwrap). */
  readonly sandboxProbe?: DetectOptions;
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
 * One evolution run (docs/architecture.md, "Evolution"): triage → scratch clone → change → gate →
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
  #sandbox: Sandbox | undefined;
  /** Folders the commands must not see: the data folder and the source repository. */
  #hidden: string[] = [];
  /** True once any command (setup, build, test, run_tests) started: the record names the sandbox then. */
  #ranCommand = false;
  /** What the run prints, logs and streams, all redacted. */
  private readonly io: RunOutput<EvolutionPhase>;

  constructor(
    private readonly options: EvolutionOptions,
    io: EvolutionIO,
  ) {
    this.#clock = options.clock ?? (() => new Date());
    this.#started = isoNow(this.#clock);
    this.io = redactedOutput(io, options.secrets ?? []);
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
    if (o.sandbox === 'off') {
      this.io.print(SANDBOX_OFF_WARNING);
      this.io.log?.warn(SANDBOX_OFF_WARNING);
    }
    const repo = await this.#openRepo();
    if (isInsideReal(repo.root, o.dataDir)) {
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

    // Before any clone or command: without the sandbox the run stops here (triage is done and recorded).
    const sandbox = await detectSandbox(o.sandbox ?? 'required', o.sandboxProbe);
    if (isSandboxUnavailable(sandbox)) return { outcome: 'error', reason: sandbox.message, ...(picked !== undefined ? { rants: [picked.rant.id] } : {}) };
    this.#sandbox = sandbox;
    this.#hidden = [o.dataDir, repo.root];
    if (sandbox.kind !== 'off') this.io.print(`commands run in an OS sandbox (${sandbox.kind}): writable only the clone (not its .git), the home and data folders hidden, no network (setup: only on HEAD's manifest and lock file)`);

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
    const model = o.triageModel ?? o.model;
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

  async #change(picked: RantState, model: ChatModel, scratch: Scratch, base: string, gatedFile: string): Promise<Ending> {
    const o = this.options;
    const rants = [picked.rant.id];
    this.#enter('change');
    const tools = changeTools({ ...this.#commandOptions(), root: scratch.dir, testSteps: this.#testSteps() });
    const request = { rant: picked.rant, class: picked.class, note: picked.note, maxChangedLines: o.maxChangedLines, maxChangedFiles: o.maxChangedFiles, sandbox: (this.#sandbox as Sandbox).kind };
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

  /**
   * Setup, when the lock file (or the command) changed since the last
   * install; undefined when none was needed. The dependency folder is
   * writable; the network only while the setup inputs are HEAD's.
   */
  async #ensureSetup(dir: string): Promise<GateResult | undefined> {
    const scratch = this.#scratch as Scratch;
    const setupCommand = this.options.setupCommand ?? '';
    const plan = setupPlan(dir, setupCommand);
    const stamp = setupStampFile(scratch);
    if (plan === undefined || setupIsCurrent(dir, setupCommand, stamp)) return undefined;
    const network = await setupInputsMatch(scratch, this.#base as string, { secrets: this.options.secrets });
    this.io.print(`setup: ${plan.command}${plan.lockFile !== undefined ? ` (${plan.lockFile} changed)` : ''}${network ? '' : ' — without network: the manifest or lock file differs from HEAD'}`);
    const setup = await runGate([{ name: 'setup', command: plan.command }], { ...this.#gateOptions(dir), network, depsWritable: true });
    if (setup.passed) writeSetupStamp(stamp, plan);
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
    return { ...this.#commandOptions(), cwd: dir, signal: this.options.signal };
  }

  /** What every command of the run shares: the sandbox, what it hides, the timeout, the secrets, where output goes. */
  #commandOptions(): Pick<GateOptions, 'sandbox' | 'hidden' | 'timeoutMs' | 'secrets' | 'onOutput' | 'onCommand'> {
    const o = this.options;
    return { sandbox: this.#sandbox as Sandbox, hidden: this.#hidden, timeoutMs: o.timeoutMs, secrets: o.secrets, onOutput: this.io.onOutput?.bind(this.io), onCommand: () => (this.#ranCommand = true) };
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
    this.io.flush();
    const gate: GateSummary | null = ending.gate !== undefined ? { passed: ending.gate.passed, ms: ending.gate.ms, tail: ending.gate.tail } : null;
    const record: EvolutionRecord = new SecretSet(this.options.secrets ?? []).redactDeep({
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
      sandbox: this.#ranCommand && this.#sandbox !== undefined ? this.#sandbox.kind : null,
    } satisfies EvolutionRecord);
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
