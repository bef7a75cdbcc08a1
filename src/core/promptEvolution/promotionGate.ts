import { type FrozenCheck, changedLines, checkFrozen, drift } from './textMetrics';
import { type PairedScore, type PairedSummary, type PairedTestName, summarizePairs } from './paired';
import { type PromptEvolutionSettings, resolveSettings } from './settings';
import { holm } from './stats';

/**
 * The deterministic gate. Six checks, fail-fast, in this order: the first
 * three are cheap and run before any A/B request; the last three judge the
 * paired A/B scores, with Holm's correction over the candidates that reached
 * the A/B test.
 */

/** The six checks in the order the gate runs them. */
export const CHECK_ORDER = ['frozen_sections', 'edit_distance', 'drift', 'sample_floor', 'effect_size', 'confidence'] as const;

export type CheckName = (typeof CHECK_ORDER)[number];

export type GateCheck =
  /** value: frozen blocks missing, moved or changed; threshold 0. */
  | { readonly name: 'frozen_sections'; readonly passed: boolean; readonly value: number; readonly threshold: 0; readonly frozen: FrozenCheck }
  /** value: changed lines against the current prompt; passes when ≤ threshold. */
  | { readonly name: 'edit_distance'; readonly passed: boolean; readonly value: number; readonly threshold: number }
  /** value: TF-IDF cosine distance from the root original; passes when ≤ threshold. */
  | { readonly name: 'drift'; readonly passed: boolean; readonly value: number; readonly threshold: number }
  /** passes when both counts are ≥ their thresholds. */
  | { readonly name: 'sample_floor'; readonly passed: boolean; readonly value: SampleCounts; readonly threshold: SampleCounts }
  /** value: mean per-task difference (0..1); passes when strictly above threshold. */
  | { readonly name: 'effect_size'; readonly passed: boolean; readonly value: number; readonly threshold: number }
  /** value: p; threshold: Holm-adjusted alpha; passes when p < threshold and Holm has not stopped. */
  | { readonly name: 'confidence'; readonly passed: boolean; readonly value: number; readonly threshold: number; readonly test: PairedTestName; readonly rank: number; readonly m: number };

export interface SampleCounts {
  readonly tasks: number;
  readonly discordant: number;
}

export interface CandidateHistory {
  /** Tasks this candidate was already scored on: never counted again. */
  readonly scoredTaskIds: readonly string[];
  /** Earlier A/B tests of this candidate: each was a hypothesis, so m grows. */
  readonly tests: number;
}

export interface GateCandidate {
  readonly id: string;
  readonly text: string;
  /** Paired A/B scores; absent for a candidate that did not reach the A/B test. */
  readonly pairs?: readonly PairedScore[];
  readonly history?: CandidateHistory;
}

export interface GateInput {
  /** The prompt in force: edit distance and frozen sections are measured against it. */
  readonly current: string;
  /** The root original: drift is measured against it, so small edits cannot add up unseen. */
  readonly root: string;
  readonly candidates: readonly GateCandidate[];
  readonly settings?: Partial<PromptEvolutionSettings>;
}

export type VerdictKind = 'pass' | 'near-miss' | 'reject';

export interface CandidateVerdict {
  readonly id: string;
  readonly kind: VerdictKind;
  /** The checks run, in order, up to and including the first that failed. */
  readonly checks: readonly GateCheck[];
  /** The check that stopped the candidate; absent when all six passed. */
  readonly failed?: CheckName;
  /** Every A/B number, present when the candidate reached the A/B test (shown for near-misses too). */
  readonly stats?: PairedSummary & { readonly adjustedAlpha: number; readonly rank: number; readonly m: number };
}

export type GateDecision =
  | { readonly outcome: 'promote'; readonly winner: CandidateVerdict; readonly verdicts: readonly CandidateVerdict[] }
  | { readonly outcome: 'near-miss'; readonly nearMisses: readonly CandidateVerdict[]; readonly verdicts: readonly CandidateVerdict[] }
  | { readonly outcome: 'reject'; readonly verdicts: readonly CandidateVerdict[] };

/** Checks 1–3, fail-fast. Run before any A/B request; only survivors are tested. */
export function cheapChecks(current: string, root: string, candidate: string, overrides: Partial<PromptEvolutionSettings> = {}): GateCheck[] {
  const settings = resolveSettings(overrides);
  const checks: GateCheck[] = [];
  const frozen = checkFrozen(current, candidate);
  const missing = frozenMismatches(frozen);
  checks.push({ name: 'frozen_sections', passed: missing === 0, value: missing, threshold: 0, frozen });
  if (missing !== 0) return checks;
  const lines = changedLines(current, candidate);
  checks.push({ name: 'edit_distance', passed: lines <= settings.maxChangedLines, value: lines, threshold: settings.maxChangedLines });
  if (lines > settings.maxChangedLines) return checks;
  const distance = drift(root, candidate);
  checks.push({ name: 'drift', passed: distance <= settings.maxDrift, value: distance, threshold: settings.maxDrift });
  return checks;
}

function frozenMismatches(frozen: FrozenCheck): number {
  switch (frozen.kind) {
    case 'ok':
      return 0;
    case 'count':
      return Math.max(1, Math.abs(frozen.expected - frozen.found));
    case 'reordered':
    case 'changed':
      return 1;
  }
}

/** Float noise below this is treated as equality, and equality fails the strict effect check. */
const EFFECT_EPSILON = 1e-12;

/** All six checks over every candidate, then the round's outcome. */
export function evaluateCandidates(input: GateInput): GateDecision {
  const settings = resolveSettings(input.settings);
  const early = input.candidates.map((candidate) => ({ candidate, checks: cheapChecks(input.current, input.root, candidate.text, settings) }));
  const tested = early.filter((e) => e.checks.every((c) => c.passed));
  const summaries = tested.map(({ candidate }) =>
    summarizePairs(candidate.pairs ?? [], {
      alreadyScored: new Set(candidate.history?.scoredTaskIds ?? []),
      flips: settings.permutationFlips,
      seed: settings.seed,
    }),
  );
  const earlierTests = tested.reduce((sum, { candidate }) => sum + (candidate.history?.tests ?? 0), 0);
  const corrected = holm(summaries.map((s) => s.p), settings.alpha, earlierTests);
  const m = tested.length + earlierTests;

  const verdicts = early.map(({ candidate, checks }): CandidateVerdict => {
    const failedEarly = checks.find((c) => !c.passed);
    if (failedEarly) return { id: candidate.id, kind: 'reject', checks, failed: failedEarly.name };
    const index = tested.findIndex((t) => t.candidate === candidate);
    const summary = summaries[index] as PairedSummary;
    const holmEntry = corrected[index] as (typeof corrected)[number];
    const stats = { ...summary, adjustedAlpha: holmEntry.adjustedAlpha, rank: holmEntry.rank, m };
    const late = abChecks(summary, holmEntry, m, settings);
    const all = [...checks, ...late];
    const failed = late.find((c) => !c.passed);
    if (!failed) return { id: candidate.id, kind: 'pass', checks: all, stats };
    return { id: candidate.id, kind: summary.effect > 0 ? 'near-miss' : 'reject', checks: all, failed: failed.name, stats };
  });
  return decide(verdicts);
}

function abChecks(summary: PairedSummary, holmEntry: { adjustedAlpha: number; rank: number; passed: boolean }, m: number, settings: PromptEvolutionSettings): GateCheck[] {
  const discordant = summary.b + summary.c;
  const floorPassed = summary.n >= settings.minTasks && discordant >= settings.minDiscordant;
  const checks: GateCheck[] = [
    {
      name: 'sample_floor',
      passed: floorPassed,
      value: { tasks: summary.n, discordant },
      threshold: { tasks: settings.minTasks, discordant: settings.minDiscordant },
    },
  ];
  if (!floorPassed) return checks;
  const effectPassed = summary.effect - settings.minEffect > EFFECT_EPSILON;
  checks.push({ name: 'effect_size', passed: effectPassed, value: summary.effect, threshold: settings.minEffect });
  if (!effectPassed) return checks;
  checks.push({
    name: 'confidence',
    passed: holmEntry.passed && summary.p < holmEntry.adjustedAlpha,
    value: summary.p,
    threshold: holmEntry.adjustedAlpha,
    test: summary.test,
    rank: holmEntry.rank,
    m,
  });
  return checks;
}

/** Several passes: the largest effect wins, then the smaller p, then the id, so the choice never depends on order. */
function decide(verdicts: CandidateVerdict[]): GateDecision {
  const passed = verdicts.filter((v) => v.kind === 'pass').sort(byStrength);
  const winner = passed[0];
  if (winner) return { outcome: 'promote', winner, verdicts };
  const nearMisses = verdicts.filter((v) => v.kind === 'near-miss').sort(byStrength);
  if (nearMisses.length > 0) return { outcome: 'near-miss', nearMisses, verdicts };
  return { outcome: 'reject', verdicts };
}

function byStrength(x: CandidateVerdict, y: CandidateVerdict): number {
  const a = x.stats;
  const b = y.stats;
  if (!a || !b) return x.id < y.id ? -1 : x.id > y.id ? 1 : 0;
  return b.effect - a.effect || a.p - b.p || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0);
}
