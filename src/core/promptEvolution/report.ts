import { structuredPatch } from 'diff';
import type { EvolveProgress, EvolveResult } from './evolve';
import { CHECK_ORDER, type CandidateVerdict, type CheckName, type GateCheck } from './promotionGate';
import type { Lineage } from './registry';

/**
 * A prompt-evolution run described for people: the lines the task terminal
 * and the CLI print, and the words and diffs the review panel shows (the host
 * builds the panel's views from these, see docs/architecture.md, "Layout").
 * Both say the same numbers the same way.
 */

/** One of the six checks as shown to a person; `passed` undefined = not run (an earlier check stopped the candidate). */
export interface CheckDescription {
  readonly name: CheckName;
  readonly passed?: boolean;
  /** The measured number, formatted ("3 lines", "0.142", "p = 0.0039"). */
  readonly value: string;
  /** The rule it was held to ("≤ 20 lines", "< 0.025"). */
  readonly threshold: string;
  readonly detail?: string;
}

export interface DiffLine {
  readonly kind: 'context' | 'added' | 'removed' | 'note';
  readonly text: string;
}

export interface DiffHunk {
  readonly header: string;
  readonly lines: readonly DiffLine[];
}

/** The paired statistics of one A/B test, as the registry's lineage records them. */
export type PairedStats = Pick<Lineage, 'n' | 'b' | 'c' | 'effect' | 'p' | 'adjustedAlpha'>;

type DecidedResult = Extract<EvolveResult, { kind: 'decided' }>;

/** p-values and other small numbers: four significant digits, no trailing zeros (0.03125, 1.192e-7). */
export function formatNumber(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const abs = Math.abs(x);
  if (abs < 1e-4) return x.toExponential(3).replace(/\.?0+e/, 'e');
  return String(Number(x.toPrecision(4)));
}

function signed(x: number): string {
  return `${x > 0 ? '+' : ''}${x.toFixed(3)}`;
}

export function describeCheck(check: GateCheck): CheckDescription {
  switch (check.name) {
    case 'frozen_sections': {
      const f = check.frozen;
      const detail =
        f.kind === 'ok' ? `${f.blocks} frozen block(s) intact`
        : f.kind === 'count' ? `${f.expected} frozen block(s) expected, ${f.found} found`
        : f.kind === 'reordered' ? `frozen block ${f.index + 1} moved`
        : `frozen block ${f.index + 1} changed`;
      return { name: check.name, passed: check.passed, value: `${check.value} mismatched`, threshold: 'must be 0', detail };
    }
    case 'edit_distance':
      return { name: check.name, passed: check.passed, value: `${check.value} changed line(s)`, threshold: `≤ ${check.threshold}` };
    case 'drift':
      return { name: check.name, passed: check.passed, value: check.value.toFixed(3), threshold: `≤ ${check.threshold}`, detail: 'TF-IDF cosine distance from the root prompt' };
    case 'sample_floor':
      return {
        name: check.name,
        passed: check.passed,
        value: `${check.value.tasks} tasks, ${check.value.discordant} discordant`,
        threshold: `≥ ${check.threshold.tasks} tasks, ≥ ${check.threshold.discordant} discordant`,
      };
    case 'effect_size':
      return { name: check.name, passed: check.passed, value: signed(check.value), threshold: `> ${check.threshold}`, detail: 'mean per-task score difference' };
    case 'confidence':
      return {
        name: check.name,
        passed: check.passed,
        value: `p = ${formatNumber(check.value)}`,
        threshold: `< ${formatNumber(check.threshold)}`,
        detail: `${check.test === 'mcnemar' ? 'exact McNemar' : 'sign-flip permutation'}, Holm rank ${check.rank} of ${check.m}`,
      };
  }
}

/** All six checks in gate order: the ones never run say so. */
export function sixChecks(checks: readonly CheckDescription[]): CheckDescription[] {
  return CHECK_ORDER.map((name) => checks.find((c) => c.name === name) ?? { name, value: 'not run', threshold: '' });
}

/** Checks as stored in the registry (JSON): anything that does not look like a gate check is left out. */
export function checksFromJson(value: unknown): CheckDescription[] {
  if (!Array.isArray(value)) return [];
  const out: CheckDescription[] = [];
  for (const item of value) {
    if (!isGateCheck(item)) continue;
    try {
      out.push(describeCheck(item));
    } catch {
      // a malformed stored check is skipped, never shown half-read
    }
  }
  return out;
}

function isGateCheck(x: unknown): x is GateCheck {
  if (x === null || typeof x !== 'object') return false;
  const c = x as Record<string, unknown>;
  if (typeof c.passed !== 'boolean') return false;
  const num = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
  const counts = (v: unknown): boolean => v !== null && typeof v === 'object' && num((v as Record<string, unknown>).tasks) && num((v as Record<string, unknown>).discordant);
  switch (c.name) {
    case 'frozen_sections': {
      const f = c.frozen as Record<string, unknown> | null | undefined;
      return num(c.value) && f !== null && typeof f === 'object' && ['ok', 'count', 'reordered', 'changed'].includes(String(f.kind));
    }
    case 'edit_distance':
    case 'drift':
    case 'effect_size':
      return num(c.value) && num(c.threshold);
    case 'sample_floor':
      return counts(c.value) && counts(c.threshold);
    case 'confidence':
      return num(c.value) && num(c.threshold) && num(c.rank) && num(c.m) && (c.test === 'mcnemar' || c.test === 'sign-flip');
    default:
      return false;
  }
}

/** One terminal line per check: ✓/✗/· name value (threshold) — detail. */
export function checkLine(check: CheckDescription): string {
  const mark = check.passed === undefined ? '·' : check.passed ? '✓' : '✗';
  const rule = check.threshold ? ` (${check.threshold})` : '';
  const detail = check.detail ? ` — ${check.detail}` : '';
  return `${mark} ${check.name.padEnd(15)} ${check.value}${rule}${detail}`;
}

/** A unified line diff, trailing CRs ignored, three lines of context. */
export function diffHunks(before: string, after: string): DiffHunk[] {
  const patch = structuredPatch('prompt.md', 'prompt.md', before, after, '', '', { context: 3, stripTrailingCr: true });
  return patch.hunks.map((hunk) => ({
    header: `@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`,
    lines: hunk.lines.map((line) => {
      const mark = line[0];
      const text = line.slice(1);
      if (mark === '+') return { kind: 'added' as const, text };
      if (mark === '-') return { kind: 'removed' as const, text };
      if (mark === '\\') return { kind: 'note' as const, text: line };
      return { kind: 'context' as const, text };
    }),
  }));
}

/** "+2 −1" for a diff. */
export function diffStat(hunks: readonly DiffHunk[]): string {
  let added = 0;
  let removed = 0;
  for (const hunk of hunks) {
    for (const line of hunk.lines) {
      if (line.kind === 'added') added++;
      if (line.kind === 'removed') removed++;
    }
  }
  return `+${added} −${removed}`;
}

export function statsLine(stats: PairedStats): string {
  return `N=${stats.n} b=${stats.b} c=${stats.c} effect ${signed(stats.effect)} p=${formatNumber(stats.p)} adjusted α=${formatNumber(stats.adjustedAlpha)}`;
}

export function lineageLine(lineage: Lineage): string {
  return `${statsLine(lineage)} edit ${lineage.editDistance} line(s) drift ${lineage.drift.toFixed(3)} model ${lineage.model}`;
}

/** What a progress event says, or undefined for events the caller shows otherwise (A/B counts). */
export function progressLine(progress: EvolveProgress, retest: boolean): string | undefined {
  switch (progress.stage) {
    case 'propose':
      return retest ? 'Re-testing the given candidate…' : 'Asking the model for candidate edits…';
    case 'cheap-checks':
      return 'Cheap checks: frozen sections, edit distance, drift (no A/B request yet)…';
    case 'ab-test':
      return undefined;
    case 'gate':
      return 'The gate: sample floor, effect size, confidence (Holm)…';
    case 'record':
      return 'Recording every candidate in the registry…';
  }
}

export function abProgressLine(progress: { done: number; total: number; failed: number }): string {
  return `A/B test: ${progress.done}/${progress.total} requests${progress.failed > 0 ? `, ${progress.failed} failed` : ''}`;
}

export function verdictLine(verdict: Pick<CandidateVerdict, 'kind' | 'failed'>): string {
  switch (verdict.kind) {
    case 'pass':
      return 'passed all six checks';
    case 'near-miss':
      return `near-miss: ahead, but ${verdict.failed ?? 'a check'} fell short (kept in the review queue)`;
    case 'reject':
      return `rejected by ${verdict.failed ?? 'the gate'}`;
  }
}

/** Every candidate with its six checks, then a one-line summary per candidate. */
export function candidateLines(result: DecidedResult, current: string): string[] {
  const verdicts = result.decision.verdicts;
  const lines: string[] = [`${verdicts.length} candidate(s):`];
  for (const verdict of verdicts) {
    const candidate = result.candidates.find((c) => c.id === verdict.id);
    lines.push('', `${verdict.id} (${diffStat(diffHunks(current, candidate?.text ?? current))})${candidate?.rationale ? ` — ${candidate.rationale}` : ''}`);
    for (const check of sixChecks(verdict.checks.map(describeCheck))) lines.push(`  ${checkLine(check)}`);
    lines.push(`  → ${verdictLine(verdict)}`);
  }
  lines.push('', `Summary: ${verdicts.map((v) => `${v.id} ${v.kind}${v.failed ? ` (${v.failed})` : ''}`).join(' · ')}`);
  return lines;
}

/** Lines for the results that are not a gate decision. */
export function undecidedLines(result: Exclude<EvolveResult, { kind: 'decided' }>): string[] {
  switch (result.kind) {
    case 'no-tasks':
      return [`Nothing to test: ${result.detail}.`, NO_TASKS_NEXT_STEP];
    case 'no-candidates':
      return [
        `Outcome: no candidate to test (${result.reason}): ${result.detail}`,
        result.reason === 'model-error' ? 'Next step: check the provider (Candor: Show Log) and run again.' : 'Next step: run again; the proposer must reply with a JSON list of complete prompts.',
      ];
    case 'cancelled':
      return [`Outcome: cancelled during ${result.stage}. Nothing was promoted.`];
  }
}

export const NO_TASKS_NEXT_STEP =
  'Next step: add .candor/evals/tasks.jsonl to the workspace, one task per line, e.g. {"id":"t1","input":"What is 2+2? Reply with the number only.","expected":"4","scorer":"exact"} (scorers: exact, json, judge with a "rubric"). At least 20 tasks are needed to pass the gate.';

export function skippedLines(skipped: readonly { file: string; lineNumber: number; reason: string; detail: string }[], limit = 5): string[] {
  if (skipped.length === 0) return [];
  const lines = skipped.slice(0, limit).map((s) => `  skipped ${s.file}:${s.lineNumber} (${s.reason}): ${s.detail}`);
  if (skipped.length > limit) lines.push(`  … and ${skipped.length - limit} more`);
  return [`${skipped.length} task line(s) skipped:`, ...lines];
}

/** The outcome in one line (the caller adds what happened to the prompt file). */
export function outcomeLine(result: DecidedResult): string {
  const decision = result.decision;
  switch (decision.outcome) {
    case 'promote': {
      const stats = decision.winner.stats;
      return `Outcome: promote ${decision.winner.id}${result.promoted ? ` as a new registry version ${result.promoted.id}` : ''}${stats ? ` (${statsLine(stats)})` : ''}`;
    }
    case 'near-miss':
      return `Outcome: near-miss — ${decision.nearMisses.map((v) => `${v.id} fell short on ${v.failed ?? '?'}`).join('; ')}. Nothing promoted; see the review queue.`;
    case 'reject':
      return 'Outcome: reject — no candidate passed. The prompt is unchanged.';
  }
}
