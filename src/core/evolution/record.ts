import { createHash } from 'node:crypto';
import * as path from 'node:path';
import { appendJsonLine, isoNow, readJsonLines } from '../jsonl';
import { EVOLUTION_FILE } from './paths';
import type { SandboxKind } from './sandbox';
import type { LimitMechanisms } from './limits';

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

/** One line of evolution.jsonl (docs/architecture.md, "Data files"). */
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

export function readRuns(dataDir: string): EvolutionRecord[] {
  return readJsonLines<EvolutionRecord>(path.join(dataDir, EVOLUTION_FILE)).records.filter((r) => r.v === 1 && typeof r.run === 'string' && typeof r.outcome === 'string');
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
