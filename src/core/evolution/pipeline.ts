import * as os from 'node:os';
import * as path from 'node:path';
import { isGitGuardError, noUnsavedBuffers, openWorkspaceRepo, readOnlyReason, type ReadOnlyGit } from '../git';
import { newId } from '../ids';
import { isoNow } from '../jsonl';
import type { ChatModel } from '../provider/chatModel';
import { changeTools } from './changeTools';
import { runChangeLoop } from './changeLoop';
import { agentReadme } from './readme';
import { EvolutionError, throwIfCancelled } from './errors';
import { GateRunner } from './gateRunner';
import { DEFAULT_GATE_LIMITS } from '../sandbox/limits';
import { describeGate } from './testGate';
import { describeCounts, FLAKY_CHANGE, runCheckedGate, type CheckedGate } from './checkedGate';
import { tryLock, type HeldLock } from '../process/lockFile';
import { DEFAULT_MAX_CHANGED_BYTES, keepChange, measureChange, stagingEnv, tooBig } from './measure';
import { hiddenForGate } from '../git/gitDirs';
import { repoPaths } from './paths';
import { appendRun, gateKey, gatedCommits, markGated, type EvolutionRecord } from './record';
import { redactedOutput, type RunOutput } from './redactedIO';
import { rantsOf, readHistory, revertUntilGreen, rollbackFailure, shipRevert, MAX_FIRST_PARENTS, MAX_REVERTS, type CandorCommit } from './rollback';
import { SANDBOX_OFF_WARNING, detectSandbox, isSandboxUnavailable, type Sandbox } from '../sandbox/sandbox';
import { prepareScratch, resetTo } from './scratch';
import type { Scratch } from './scratchGit';
import { environmentSecrets, type SecretSet } from '../redact';
import { changeSecret, secretReason } from './secretScan';
import { shipChange } from './ship';
import { appendDecision, rantStatuses, triage, type RantState } from './triage';
import { dataDirRefusal } from '../settings/dataDirRules';
import { errorMessage } from '../errorMessage';

import { REPOSITORY_HINT, type EvolutionIO, type EvolutionOptions, type EvolutionPhase } from './options';
import { failureEnding, gateSummary, triageLine, type Ending } from './ending';
import { firstLine } from '../text';
import { revertForCi } from './ciRollback';

export { REPOSITORY_HINT, type EvolutionIO, type EvolutionOptions };

/**
 * One evolution run (docs/architecture.md, "Evolution"): triage → scratch
 * clone of the agent's repository → gate HEAD (and roll back) → change →
 * gate → ship → record, each phase printed as it runs. No repository set:
 * triage only. A dirty repository: triage and record only. Ends with
 * exactly one line in evolution.jsonl and returns it; never throws for a
 * run that went wrong — that is an `error` record.
 */
export async function runEvolution(options: EvolutionOptions, io: EvolutionIO): Promise<EvolutionRecord> {
  return new EvolutionRun(options, io).run();
}

class EvolutionRun {
  readonly #clock: () => Date;
  readonly #runId = newId();
  readonly #started: string;
  #phase: EvolutionPhase = 'triage';
  #lock: HeldLock | undefined;
  #scratch: Scratch | undefined;
  #base: string | undefined;
  #repository: string | null = null;
  /** The agent repository's branch when the run started (the record's `base`); null when detached or none. */
  #startBranch: string | null = null;
  /** False when the data folder lies in the agent's repository: writing there would change it. */
  #mayWrite = true;
  #sandbox: Sandbox | undefined;
  #gateRunner: GateRunner | undefined;
  /** What of the agent's repository the commands must not see (its git dirs, main checkout, worktrees, alternates, superproject). */
  #repositoryHidden: readonly string[] = [];
  /** HEAD's submodule folders, empty in the clone. */
  #gitlinks: readonly string[] = [];
  /** True once any command (setup, build, test, run_tests) started: the record names the sandbox then. */
  #ranCommand = false;
  /** The API key and every credential of the environment: kept out of commits, records, output and the commands' environment. */
  readonly #secretSet: SecretSet;
  readonly #secrets: string[];
  /** What the run prints, logs and streams, all redacted. */
  private readonly io: RunOutput<EvolutionPhase>;

  constructor(
    private readonly options: EvolutionOptions,
    io: EvolutionIO,
  ) {
    this.#clock = options.clock ?? (() => new Date());
    this.#started = isoNow(this.#clock);
    this.#secretSet = environmentSecrets(process.env, options.secrets ?? []);
    this.#secrets = this.#secretSet.values();
    this.io = redactedOutput(io, this.#secrets);
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
    if (o.repository === undefined || o.repository.trim() === '') return this.#refuseDataDir([]) ?? this.#triageOnly();
    this.#repository = path.resolve(o.repository);
    const repo = await this.#openRepo(this.#repository);
    this.#repository = repo.root;
    // The repository's own folders, its main checkout, worktrees and superproject: the data folder may overlap none of them.
    this.#repositoryHidden = await hiddenForGate(repo.root);
    const refused = this.#refuseDataDir([repo.root, ...this.#repositoryHidden]);
    if (refused !== undefined) return refused;
    this.io.print(`the agent's repository: ${repo.root}`);
    const paths = repoPaths(o.dataDir, repo.root);
    this.#lock = tryLock(paths.lock, { clock: this.#clock, holderName: 'another evolution run', holderOf: 'for this repository' });
    if (this.#lock.tookOver !== undefined) {
      this.io.print(`took over the lock left by an earlier run that did not end (pid ${this.#lock.tookOver.pid}, started ${this.#lock.tookOver.started})`);
    }
    const readme = agentReadme(repo.root) ?? o.agentReadme;

    const { dirty, status } = await repo.overview(o.unsaved ?? noUnsavedBuffers);
    this.#startBranch = status.branch.head;
    if (dirty.dirty) {
      const line = readOnlyReason(dirty) ?? 'dirty working tree — read-only cycle';
      this.io.print(line);
      this.io.log?.info(line);
      await this.#triage(true, readme);
      return { outcome: 'read-only', reason: line };
    }
    const head = await repo.headCommit();
    if (head === undefined) return { outcome: 'error', reason: `the agent's repository ${repo.root} has no commits yet; an evolution run starts from HEAD` };

    const picked = await this.#triage(true, readme);
    throwIfCancelled(o.signal);
    // A rant to act on needs commands: without the sandbox the run stops before any clone (triage is done and recorded).
    if (picked !== undefined) {
      const unavailable = await this.#detectSandbox();
      if (unavailable !== undefined) return { ...unavailable, rants: [picked.rant.id] };
    }

    this.#enter('scratch clone');
    const prepared = await prepareScratch({ dataDir: o.dataDir, repositoryRoot: repo.root, head, setupCommand: o.setupCommand ?? '', secrets: o.secrets, signal: o.signal });
    this.#scratch = prepared.scratch;
    this.#base = head;
    this.io.print(`${prepared.cloned ? 'cloned' : prepared.fetched ? 'refreshed' : 'reused'} ${prepared.scratch.dir}`);
    this.io.print(`at the agent repository's HEAD ${head.slice(0, 12)} — committed work only: uncommitted work is not included`);
    this.#gitlinks = prepared.gitlinks;
    if (this.#gitlinks.length > 0) this.io.print(`left empty: ${emptySubmodules(this.#gitlinks)}`);

    if (o.ciCulprit !== undefined) {
      this.#enter('revert');
      const reverted = await revertForCi(repo, prepared.scratch, head, o.ciCulprit, { secrets: this.#secrets, signal: o.signal, print: (line) => this.io.print(line) });
      if (reverted !== undefined) return reverted;
    }
    const headEnding = await this.#checkHead(prepared.scratch, head, picked, paths.gated);
    if (headEnding !== undefined) return headEnding;
    if (picked === undefined) return { outcome: 'nothing-to-evolve', reason: 'no agent-code rant to act on' };
    if (o.model === undefined) return { outcome: 'nothing-to-evolve', rants: [picked.rant.id], reason: 'no model is configured to make a change' };
    // What HEAD's gate left in the clone (build output, caches, test files) is not the model's change.
    await resetTo(prepared.scratch, head, o.setupCommand ?? '');
    return this.#change(picked, o.model, prepared.scratch, head, paths.gated);
  }

  /** An ending when the data folder breaks a rule (dataDirRules.ts); nothing is written to it then. */
  #refuseDataDir(guarded: readonly string[]): Ending | undefined {
    const refusal = dataDirRefusal(this.options.dataDir, { home: os.homedir(), uid: process.getuid?.(), guarded: guarded.map((dir) => ({ label: "the agent's repository", path: dir })) });
    if (refusal === undefined) return undefined;
    this.#mayWrite = false;
    return { outcome: 'error', reason: refusal.message };
  }

  /** No agent repository: route every rant, change nothing anywhere. */
  async #triageOnly(): Promise<Ending> {
    await this.#triage(false, this.options.agentReadme);
    const waiting = rantStatuses(this.options.dataDir).filter((s) => s.status === 'waiting-for-repository').length;
    const line = `${waiting} code rant(s) wait for "candor.evolution.repository" (user settings): no code change is made anywhere until it names the agent's own repository; ${REPOSITORY_HINT}`;
    this.io.print(line);
    return { outcome: 'triage-only', reason: line };
  }

  async #openRepo(repository: string): Promise<ReadOnlyGit> {
    try {
      return await openWorkspaceRepo(repository, this.options.git);
    } catch (err) {
      if (isGitGuardError(err, 'not-a-repo')) throw new EvolutionError('refused', `${repository} (candor.evolution.repository) is not a git repository; it must be a local git checkout of the agent's own source`);
      throw err;
    }
  }

  async #triage(codeRouting: boolean, readme: string | undefined): Promise<RantState | undefined> {
    this.#enter('triage');
    const o = this.options;
    const result = await triage(o.dataDir, { codeRouting, model: o.triageModel ?? o.model, readme, signal: o.signal, clock: this.#clock });
    this.io.print(triageLine(result.decisions, result.unclassified.length, o.triageModel === undefined && o.model?.identity.provider === 'offline'));
    for (const d of result.decisions) if (d.status === 'answered' && d.answer !== undefined) this.io.print(`  answered ${d.rant}: ${d.answer}`);
    const picked = result.picked;
    if (codeRouting) this.io.print(picked === undefined ? 'no agent-code rant to act on' : `acting on rant ${picked.rant.id} (agent-code): ${firstLine(picked.rant.text, 100)}`);
    return picked;
  }

  /**
   * Gates HEAD when there is a rant to act on, or a Candor commit after the
   * newest commit known to pass; when HEAD fails, prepares the rollback (or
   * says why there is none). An ending when the run stops here.
   */
  async #checkHead(scratch: Scratch, head: string, picked: RantState | undefined, gatedFile: string): Promise<Ending | undefined> {
    const history = await readHistory(scratch, head, gatedCommits(gatedFile, gateKey(this.options)), { signal: this.options.signal });
    if (history.base === head) {
      this.io.print(`HEAD ${head.slice(0, 12)} passed the gate before`);
      if (picked === undefined) return undefined;
      const setup = await this.#gates(head).ensureSetup();
      return setup !== undefined && !setup.passed ? { outcome: 'error', reason: `the setup command failed: ${describeGate(setup, this.options.timeoutMs)}`, gate: setup } : undefined;
    }
    if (picked === undefined && history.candidates.length === 0) {
      this.io.print(`HEAD is not gated: no rant to act on, and no Candor commit after ${history.base === undefined ? 'the commits searched' : `${history.base.slice(0, 12)}, the newest known to pass`}`);
      return undefined;
    }
    const unavailable = await this.#detectSandbox();
    if (unavailable !== undefined) return unavailable;
    const gates = this.#gates(head);
    this.#enter('gate HEAD');
    this.io.print(`HEAD ${head.slice(0, 12)} has not passed the gate yet: running it first`);
    const checked = await this.#checkedGate(gates);
    const result = checked.result;
    const described = describeGate(result, this.options.timeoutMs);
    this.io.print(checked.flaky ? `HEAD gate: flaky gate — it failed (${described}), then passed` : `HEAD gate ${described}${describeCounts(checked)}`);
    if (checked.flaky) {
      return { outcome: 'error', reason: `the gate is flaky at HEAD ${head.slice(0, 12)}: it failed, then passed, on the same commit; nothing is built on it until its tests are stable`, gate: result, checked };
    }
    if (result.passed) {
      markGated(gatedFile, head, gateKey(this.options), this.#clock);
      return undefined;
    }
    throwIfCancelled(this.options.signal);
    const failing = `HEAD ${head.slice(0, 12)} fails the gate (${described})${this.#gitlinks.length > 0 ? `, with ${emptySubmodules(this.#gitlinks)}` : ''}`;
    if (history.base === undefined) return { outcome: 'error', reason: `${failing}, and no earlier commit is known to pass (none of the newest ${MAX_FIRST_PARENTS} on its first-parent chain); nothing reverted`, gate: result };
    if (history.candidates.length === 0) return { outcome: 'error', reason: `${failing}: HEAD fails its own tests, and not because of a Candor change (none after ${history.base.slice(0, 12)}, the newest commit known to pass)`, gate: result };
    return this.#rollBack(scratch, gates, head, history.candidates, described, gatedFile);
  }

  async #rollBack(scratch: Scratch, gates: GateRunner, head: string, candidates: readonly CandorCommit[], described: string, gatedFile: string): Promise<Ending> {
    const failing = `HEAD ${head.slice(0, 12)} fails the gate (${described})`;
    this.#enter('revert');
    this.io.print(`${candidates.length} Candor commit(s) since the newest passing commit: reverting them newest first, re-gating after each (at most ${MAX_REVERTS})`);
    const result = await revertUntilGreen(scratch, candidates, {
      gate: () => gates.gate(),
      onStep: (commit, gate) => this.io.print(`  reverted ${commit.sha.slice(0, 12)} ${firstLine(commit.subject, 100)}: gate ${describeGate(gate, this.options.timeoutMs)}`),
      setupCommand: this.options.setupCommand ?? '',
      signal: this.options.signal,
    });
    if (result.kind !== 'passed') return { outcome: 'error', ...rollbackFailure(result, failing, candidates.length), ...(result.kind === 'still-failing' && result.gate !== undefined ? { gate: result.gate } : {}) };
    this.#enter('ship');
    const shipped = await shipRevert(scratch, { head, tree: result.tree, reverted: result.reverted, why: described }, { secrets: this.#secrets });
    markGated(gatedFile, shipped.commit, gateKey(this.options), this.#clock);
    const list = result.reverted.map((c) => c.sha.slice(0, 12)).join(', ');
    this.io.print(`committed ${shipped.commit.slice(0, 12)} on ${shipped.branch} in the scratch clone`);
    return {
      outcome: 'revert-prepared',
      rants: rantsOf(result.reverted),
      reason: `${failing}; reverting ${result.reverted.length} Candor commit(s) (${list}) makes it pass: a revert is ready on ${shipped.branch}`,
      branch: shipped.branch,
      commit: shipped.commit,
      gate: result.gate,
    };
  }

  /** Finds the sandbox the commands need; an ending when it is required and missing. */
  async #detectSandbox(): Promise<Ending | undefined> {
    if (this.#sandbox !== undefined) return undefined;
    const sandbox = await detectSandbox(this.options.sandbox ?? 'required', { ...this.options.sandboxProbe, ...(this.options.sandboxUid !== undefined ? { sandboxUid: this.options.sandboxUid } : {}) });
    if (isSandboxUnavailable(sandbox)) return { outcome: 'error', reason: sandbox.message };
    this.#sandbox = sandbox;
    if (sandbox.kind !== 'off') this.io.print(`commands run in an OS sandbox (${sandbox.kind}): writable only the clone (not its .git), the home and data folders hidden, no network (setup: only on HEAD's manifest and lock file)`);
    return undefined;
  }

  /** The run's commands in the scratch clone, in the sandbox found before. */
  #gates(head: string): GateRunner {
    const o = this.options;
    this.#gateRunner ??= new GateRunner({
      scratch: this.#scratch as Scratch,
      base: head,
      sandbox: this.#sandbox as Sandbox,
      hidden: [o.dataDir, this.#repository as string, ...this.#repositoryHidden],
      testCommand: o.testCommand,
      buildCommand: o.buildCommand,
      setupCommand: o.setupCommand,
      timeoutMs: o.timeoutMs,
      secrets: this.#secrets,
      limits: o.limits ?? DEFAULT_GATE_LIMITS,
      environment: o.environment ?? [],
      signal: o.signal,
      print: (line) => this.io.print(line),
      onOutput: this.io.onOutput?.bind(this.io),
      onCommand: () => (this.#ranCommand = true),
    });
    return this.#gateRunner;
  }

  async #change(picked: RantState, model: ChatModel, scratch: Scratch, base: string, gatedFile: string): Promise<Ending> {
    const o = this.options;
    const rants = [picked.rant.id];
    const gates = this.#gates(base);
    this.#enter('change');
    // What HEAD's gate left is not the change's: only the change phase's commands count for its measure.
    gates.takeRemovedRepositories();
    const tools = changeTools({ root: scratch.dir, runTests: (signal) => gates.runTests(signal), timeoutMs: o.timeoutMs, secrets: this.#secrets });
    const request = { rant: picked.rant, class: picked.class, note: picked.note, maxChangedLines: o.maxChangedLines, maxChangedFiles: o.maxChangedFiles, sandbox: (this.#sandbox as Sandbox).kind };
    const loop = await runChangeLoop(request, { model, tools, maxRounds: o.maxRounds, signal: o.signal, onTool: (line) => this.io.print(`  ${line}`), onNotice: (line) => this.io.print(line) });
    this.io.print(`${loop.rounds} request(s), ${loop.toolCalls} tool call(s)${loop.outOfRounds ? ' — stopped at the round limit' : ''}`);
    throwIfCancelled(o.signal);
    const size = await measureChange(scratch, base, { maxBytes: o.maxChangedBytes ?? DEFAULT_MAX_CHANGED_BYTES, maxFiles: o.maxChangedFiles }, { planted: gates.takeRemovedRepositories() });
    if (!size.staged) return { outcome: 'discarded', rants, reason: size.reason, diffstat: size.diffstat };
    if (size.files === 0) {
      return { outcome: 'nothing-to-evolve', rants, reason: `the model made no change${loop.summary !== '' ? `: ${firstLine(loop.summary, 100)}` : ''}` };
    }
    this.io.print(`change: ${size.files} file(s), +${size.insertions} −${size.deletions}`);
    const big = tooBig(size, o.maxChangedLines, o.maxChangedFiles);
    if (big !== undefined) return { outcome: 'discarded', rants, reason: big, diffstat: size.diffstat };
    const leaked = await changeSecret(scratch, base, size.tree, this.#secretSet, { secrets: this.#secrets, staging: stagingEnv(scratch) });
    if (leaked !== undefined) return { outcome: 'discarded', rants, reason: `${secretReason(leaked)}; nothing of it is committed, and the clone is restored`, diffstat: size.diffstat };

    this.#enter('gate');
    const checked = await this.#checkedGate(gates);
    const gate = checked.result;
    if (checked.flaky) {
      this.io.print(`flaky gate: it failed (${describeGate(gate, o.timeoutMs)}), then passed, on the same change; nothing ships`);
      return { outcome: 'discarded', rants, reason: `${FLAKY_CHANGE}; the clone is restored`, diffstat: size.diffstat, gate, checked };
    }
    this.io.print(`gate ${describeGate(gate, o.timeoutMs)}${describeCounts(checked)}`);
    if (!gate.passed) {
      throwIfCancelled(o.signal);
      return { outcome: 'discarded', rants, reason: `the change fails the gate: ${describeGate(gate, o.timeoutMs)}; the clone is restored`, diffstat: size.diffstat, gate, checked };
    }

    this.#enter('ship');
    await keepChange(scratch);
    const shipped = await shipChange(scratch, { base, tree: size.tree, rant: picked.rant, class: picked.class, summary: loop.summary }, { redaction: this.#secretSet, secrets: this.#secrets });
    markGated(gatedFile, shipped.commit, gateKey(o), this.#clock);
    appendDecision(o.dataDir, {
      v: 1, rant: picked.rant.id, ts: isoNow(this.#clock), class: picked.class, duplicateOf: null, status: 'acted', source: picked.source,
      run: this.#runId, branch: shipped.branch, commit: shipped.commit,
    });
    this.io.print(`committed ${shipped.commit.slice(0, 12)} on ${shipped.branch} in the scratch clone`);
    // A printed line is one line (redactedIO.ts): the diffstat's lines go one by one.
    for (const line of size.diffstat.split('\n')) this.io.print(line);
    return {
      outcome: 'shipped',
      rants,
      reason: `rant ${picked.rant.id} addressed${loop.summary !== '' ? `: ${firstLine(loop.summary, 100)}` : ''}; take the branch with "Candor: Take Evolution Branch"`,
      branch: shipped.branch,
      commit: shipped.commit,
      diffstat: size.diffstat,
      gate,
      checked,
    };
  }

  /** The gate, run once more after a failure unless the user turned that off. */
  #checkedGate(gates: GateRunner): Promise<CheckedGate> {
    return runCheckedGate(() => gates.gate(), { rerun: this.options.rerunFailedGate ?? true, print: (line) => this.io.print(line) });
  }

  #failure(err: unknown): Ending {
    return failureEnding(err, { phase: this.#phase, cancelled: this.options.signal?.aborted === true, cloned: this.#base !== undefined, log: this.io.log });
  }

  async #restoreClone(): Promise<void> {
    if (this.#scratch === undefined || this.#base === undefined) return;
    try {
      // No signal: a cancelled run must still leave the clone clean.
      await resetTo(this.#scratch, this.#base, this.options.setupCommand ?? '');
    } catch (err) {
      this.io.log?.warn(`could not restore the scratch clone: ${errorMessage(err)}`);
    }
  }

  #record(ending: Ending): EvolutionRecord {
    this.#enter('record');
    this.io.flush();
    const gate = gateSummary(ending);
    const record: EvolutionRecord = this.#secretSet.redactDeep({
      v: 1,
      run: this.#runId,
      ts: this.#started,
      ended: isoNow(this.#clock),
      rants: ending.rants ?? [],
      outcome: ending.outcome,
      reason: ending.reason,
      repository: this.#repository,
      base: this.#startBranch,
      branch: ending.branch ?? null,
      commit: ending.commit ?? null,
      diffstat: ending.diffstat ?? null,
      gate,
      sandbox: this.#ranCommand && this.#sandbox !== undefined ? this.#sandbox.kind : null,
      limits: ending.gate?.limits ?? null,
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

/** `2 submodule folder(s) (sub, lib/x), which Candor does not populate in the scratch clone` */
function emptySubmodules(gitlinks: readonly string[]): string {
  const named = gitlinks.slice(0, 5).join(', ') + (gitlinks.length > 5 ? ` and ${gitlinks.length - 5} more` : '');
  return `${gitlinks.length} submodule folder(s) (${named}), which Candor does not populate in the scratch clone`;
}
