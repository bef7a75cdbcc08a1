/**
 * Messages between the host and the "Candor: Prompt Evolution" review panel.
 * Everything the panel shows is prepared as plain strings by the host; the
 * panel renders them as text, never as HTML. Messages from the panel are
 * untrusted: `parseReviewMessage` validates them.
 */

import type { CheckName } from '../core/promptEvolution/promotionGate';
import type { Lineage } from '../core/promptEvolution/registry';
import type { CheckDescription, DiffHunk, PairedStats } from '../core/promptEvolution/report';

export type { CheckName, DiffHunk };

/**
 * One of the six checks as shown to a person, in the words the task terminal
 * and the CLI print too; `passed` undefined = not run (an earlier check
 * stopped the candidate).
 */
export type CheckView = CheckDescription;

/** The paired statistics of one A/B test, as the registry's lineage records them. */
export type StatsView = PairedStats;

export type Verdict = 'pass' | 'near-miss' | 'reject';

export interface CandidateView {
  readonly id: string;
  readonly rationale?: string;
  readonly verdict: Verdict;
  readonly failed?: CheckName;
  /** Always six, in gate order. */
  readonly checks: readonly CheckView[];
  readonly stats?: StatsView;
  /** Unified diff against the prompt it was compared with. */
  readonly diff: readonly DiffHunk[];
}

export interface RunView {
  readonly run: string;
  readonly finished: string;
  readonly outcome: 'promote' | 'near-miss' | 'reject';
  /** One line saying what happened, including whether the prompt file was written. */
  readonly summary: string;
  readonly model: string;
  readonly tasks: number;
  readonly taskSetHash: string;
  readonly candidates: readonly CandidateView[];
}

export interface NearMissView {
  readonly candidateId: string;
  readonly run: string;
  readonly ts: string;
  readonly baselineVersion: string;
  /** The baseline is no longer the prompt in force: a re-test runs against the current one. */
  readonly stale: boolean;
  readonly failed?: string;
  readonly checks: readonly CheckView[];
  readonly stats?: StatsView;
  readonly diff: readonly DiffHunk[];
}

/** The numbers of a promotion, exactly as the registry keeps them. */
export type LineageView = Lineage;

export interface VersionView {
  readonly id: string;
  /** v1, v2, … in the order the registry recorded them. */
  readonly label: string;
  readonly kind: 'root' | 'promotion' | 'rollback';
  readonly parent?: string;
  readonly root: string;
  readonly restores?: string;
  readonly created: string;
  readonly inForce: boolean;
  readonly lineage?: LineageView;
  /** Against its parent (empty for a root without one). */
  readonly diff: readonly DiffHunk[];
}

export interface ReviewState {
  readonly prompt: { readonly source: 'built-in' | 'workspace'; readonly version?: string };
  readonly running: boolean;
  readonly lastRun?: RunView;
  readonly queue: readonly NearMissView[];
  /** Newest first. */
  readonly versions: readonly VersionView[];
  /** Set when the registry could not be read. */
  readonly error?: string;
}

export type ReviewHostMessage = { readonly type: 'state'; readonly state: ReviewState };

export type ReviewWebviewMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'refresh' }
  | { readonly type: 'retest'; readonly candidateId: string }
  /** Drop a near-miss from the review queue. */
  | { readonly type: 'dismiss'; readonly candidateId: string }
  /** A person's override of the gate: promote a near-miss (the frozen-block check still applies). */
  | { readonly type: 'promoteAnyway'; readonly candidateId: string }
  | { readonly type: 'restore'; readonly versionId: string };

const CANDIDATE_ID = /^c-[0-9a-f]{12}$/;
const VERSION_ID = /^[0-9a-z]{1,64}$/;

/** A valid message from the panel, or undefined. */
export function parseReviewMessage(value: unknown): ReviewWebviewMessage | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const m = value as Record<string, unknown>;
  const only = (...keys: string[]): boolean => Object.keys(m).every((k) => k === 'type' || keys.includes(k));
  switch (m.type) {
    case 'ready':
    case 'refresh':
      return only() ? { type: m.type } : undefined;
    case 'retest':
    case 'dismiss':
    case 'promoteAnyway':
      return only('candidateId') && typeof m.candidateId === 'string' && CANDIDATE_ID.test(m.candidateId) ? { type: m.type, candidateId: m.candidateId } : undefined;
    case 'restore':
      return only('versionId') && typeof m.versionId === 'string' && VERSION_ID.test(m.versionId) ? { type: 'restore', versionId: m.versionId } : undefined;
    default:
      return undefined;
  }
}
