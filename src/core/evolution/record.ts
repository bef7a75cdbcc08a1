import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { appendJsonLine, isoNow, readJsonLines } from '../jsonl';
import { EVOLUTION_FILE } from './paths';
import type { SandboxKind } from '../sandbox/sandbox';
import type { LimitMechanisms } from '../sandbox/limits';
import type { CiResult, CiStateName } from '../github/ciState';

/** `triage-only`: no agent repository is set, so the run triaged and routed and changed no code anywhere. */
export type EvolutionOutcome = 'shipped' | 'discarded' | 'nothing-to-evolve' | 'read-only' | 'revert-prepared' | 'triage-only' | 'error';

export interface GateSummary {
  readonly passed: boolean;
  readonly ms: number;
  /** Redacted; for a flaky gate, the first failure's. */
  readonly tail: string;
  /** It failed, then passed, on the same tree: nothing ships on it. */
  readonly flaky?: true;
  /** What the test runner's summary line counted, when it printed one. */
  readonly passing?: number;
  readonly failing?: number;
  readonly skipped?: number;
}

/** A run's line of evolution.jsonl (docs/architecture.md, "Data files"): it has an `outcome`. */
export interface EvolutionRecord {
  readonly v: 1;
  readonly run: string;
  readonly ts: string;
  readonly ended: string;
  /** The rants this run worked on (at most one). */
  readonly rants: readonly string[];
  readonly outcome: EvolutionOutcome;
  readonly reason: string;
  /** The agent's repository the run worked on (`candor.evolution.repository`); null when none is set. */
  readonly repository: string | null;
  /**
   * The agent repository's branch at the run's start (a pull request's
   * base); null when HEAD was detached or there is no repository. Every run
   * writes it; a line from before it existed reads as null (`readRuns`).
   */
  readonly base?: string | null;
  readonly branch: string | null;
  readonly commit: string | null;
  readonly diffstat: string | null;
  readonly gate: GateSummary | null;
  /** Where the run's commands ran; null when no command ran (docs/architecture.md, "Sandbox"). */
  readonly sandbox: SandboxKind | null;
  /** Which mechanism enforced each limit of the last command (`cgroup`, `rlimit`, `poll` or `none`); null when no command ran. */
  readonly limits?: LimitMechanisms | null;
}

export function appendRun(dataDir: string, record: EvolutionRecord): void {
  appendJsonLine(path.join(dataDir, EVOLUTION_FILE), record);
}

/** A pull request opened for a run's branch. */
export interface PullRequestRef {
  readonly url: string;
  readonly number: number;
}

/** The pull request's CI, as last read: the state, where to look, and each check. */
export type CiState = CiResult;

/**
 * A later line about a run: its pull request opened (`pr`), or its CI read
 * (`ci`). It has no `outcome`; it is appended, never a rewrite of the run's
 * line (docs/architecture.md, "Data files").
 */
export interface EvolutionUpdate {
  readonly v: 1;
  readonly ts: string;
  readonly run: string;
  readonly update: 'pr' | 'ci';
  readonly pr?: PullRequestRef;
  readonly ci?: CiState;
}

/** A run as every reader sees it: its line, with the newest of its updates merged in. */
export type EvolutionRun = EvolutionRecord & {
  readonly base: string | null;
  readonly pr?: PullRequestRef;
  readonly ci?: CiState;
};

export function appendRunUpdate(dataDir: string, update: EvolutionUpdate): void {
  if (updateProblem(update) !== undefined) throw new Error(`not an update line of evolution.jsonl: ${updateProblem(update)}`);
  appendJsonLine(path.join(dataDir, EVOLUTION_FILE), update);
}

/**
 * Every run of evolution.jsonl, in the order they were recorded, each with
 * its updates merged in: for `pr` and for `ci`, the update with the newest
 * `ts` wins (the later line on a tie). A line with `run` and `outcome` is a
 * run; a line with `update` and no `outcome` is an update. An update for a
 * run the file does not hold, and a line that is neither, or is corrupt, is
 * skipped, never fatal.
 */
export function readRuns(dataDir: string): EvolutionRun[] {
  const lines = readJsonLines<Record<string, unknown>>(path.join(dataDir, EVOLUTION_FILE)).records;
  const runs: EvolutionRun[] = [];
  const newest = new Map<string, { pr?: Stamped<PullRequestRef>; ci?: Stamped<CiState> }>();
  for (const line of lines) {
    if (line.v !== 1 || typeof line.run !== 'string') continue;
    if (typeof line.outcome === 'string') {
      runs.push({ ...(line as unknown as EvolutionRecord), base: typeof line.base === 'string' ? line.base : null });
      continue;
    }
    if (line.outcome !== undefined || updateProblem(line) !== undefined) continue;
    const update = line as unknown as EvolutionUpdate;
    const at = Date.parse(update.ts);
    const merged = newest.get(update.run) ?? {};
    if (update.pr !== undefined && !((merged.pr?.at ?? -Infinity) > at)) merged.pr = { at, value: update.pr };
    if (update.ci !== undefined && !((merged.ci?.at ?? -Infinity) > at)) merged.ci = { at, value: update.ci };
    newest.set(update.run, merged);
  }
  return runs.map((run) => {
    const merged = newest.get(run.run);
    if (merged === undefined) return run;
    return { ...run, ...(merged.pr !== undefined ? { pr: merged.pr.value } : {}), ...(merged.ci !== undefined ? { ci: merged.ci.value } : {}) };
  });
}

interface Stamped<T> {
  readonly at: number;
  readonly value: T;
}

const CI_STATES: ReadonlySet<string> = new Set<CiStateName>(['pending', 'passed', 'failed', 'none', 'timeout']);

/** Why a line is not an update line, or undefined: the shape of the contract, checked field by field. */
function updateProblem(line: Partial<Record<keyof EvolutionUpdate, unknown>>): string | undefined {
  if (line.v !== 1 || typeof line.run !== 'string' || line.run === '') return 'no v: 1 and run';
  if (typeof line.ts !== 'string' || Number.isNaN(Date.parse(line.ts))) return 'no ISO-8601 ts';
  if (line.update !== 'pr' && line.update !== 'ci') return `update ${JSON.stringify(line.update)} is neither "pr" nor "ci"`;
  if (line[line.update] === undefined) return `an update "${line.update}" without its ${line.update}`;
  if (line.pr !== undefined && !isPullRequestRef(line.pr)) return 'pr is not {url, number}';
  if (line.ci !== undefined && !isCiState(line.ci)) return 'ci is not {state, url, checks}';
  return undefined;
}

function isPullRequestRef(value: unknown): value is PullRequestRef {
  const pr = value as Partial<PullRequestRef> | null;
  return typeof pr === 'object' && pr !== null && typeof pr.url === 'string' && Number.isInteger(pr.number) && (pr.number ?? 0) > 0;
}

function isCiState(value: unknown): value is CiState {
  const ci = value as Partial<CiState> | null;
  if (typeof ci !== 'object' || ci === null || typeof ci.state !== 'string' || !CI_STATES.has(ci.state) || typeof ci.url !== 'string') return false;
  return Array.isArray(ci.checks) && ci.checks.every((check: unknown) => {
    const c = check as Record<string, unknown> | null;
    return typeof c === 'object' && c !== null && typeof c.name === 'string' && typeof c.status === 'string' && (c.conclusion === null || typeof c.conclusion === 'string') && typeof c.url === 'string';
  });
}

/** What a gate ran: a HEAD that passed `npm test` has not passed a different test command. */
export function gateKey(commands: { readonly testCommand: string; readonly buildCommand?: string; readonly setupCommand?: string }): string {
  return createHash('sha256')
    .update([commands.setupCommand ?? '', commands.buildCommand ?? '', commands.testCommand].join('\0'))
    .digest('hex')
    .slice(0, 16);
}

/** Commits that passed this gate in this repository's scratch clone (HEADs gated, changes shipped). */
export function gatedCommits(file: string, key: string): Set<string> {
  const commits = new Set<string>();
  for (const line of readJsonLines<{ commit?: unknown; gate?: unknown }>(file).records) {
    if (typeof line.commit === 'string' && line.gate === key) commits.add(line.commit);
  }
  return commits;
}

export function markGated(file: string, commit: string, key: string, clock: () => Date = () => new Date()): void {
  appendJsonLine(file, { v: 1, ts: isoNow(clock), commit, gate: key });
}
