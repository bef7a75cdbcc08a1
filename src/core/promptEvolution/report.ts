import { structuredPatch } from 'diff';
import type { EvolveProgress, EvolveResult } from './evolve';
import type { CandidateVerdict, GateCheck } from './promotionGate';
import type { Evaluation, Lineage, PromptVersion } from './registry';
import {
  CHECK_ORDER, type CandidateView, type CheckView, type DiffHunk, type LineageView, type NearMissView, type RunView, type StatsView, type VersionView,
} from '../../protocol/review';

/**
 * A prompt-evolution run described for people: the lines the task terminal
 * and the CLI print, and the views the review panel shows. Both say the same
 * numbers the same way.
 */

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

export function checkView(check: GateCheck): CheckView {
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
export function sixChecks(checks: readonly CheckView[]): CheckView[] {
  return CHECK_ORDER.map((name) => checks.find((c) => c.name === name) ?? { name, value: 'not run', threshold: '' });
}

/** Checks as stored in the registry (JSON): anything that does not look like a gate check is left out. */
export function checksFromJson(value: unknown): CheckView[] {
  if (!Array.isArray(value)) return [];
  const out: CheckView[] = [];
  for (const item of value) {
    if (!isGateCheck(item)) continue;
    try {
      out.push(checkView(item));
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
export function checkLine(check: CheckView): string {
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

export function statsView(stats: { n: number; b: number; c: number; effect: number; p: number; adjustedAlpha: number } | undefined): StatsView | undefined {
  return stats ? { n: stats.n, b: stats.b, c: stats.c, effect: stats.effect, p: stats.p, adjustedAlpha: stats.adjustedAlpha } : undefined;
}

export function statsLine(stats: StatsView): string {
  return `N=${stats.n} b=${stats.b} c=${stats.c} effect ${signed(stats.effect)} p=${formatNumber(stats.p)} adjusted α=${formatNumber(stats.adjustedAlpha)}`;
}

export function lineageLine(lineage: Lineage | LineageView): string {
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

export function candidateViews(result: Extract<EvolveResult, { kind: 'decided' }>, current: string): CandidateView[] {
  return result.decision.verdicts.map((verdict) => {
    const candidate = result.candidates.find((c) => c.id === verdict.id);
    return {
      id: verdict.id,
      ...(candidate?.rationale ? { rationale: candidate.rationale } : {}),
      verdict: verdict.kind,
      ...(verdict.failed ? { failed: verdict.failed } : {}),
      checks: sixChecks(verdict.checks.map(checkView)),
      ...(verdict.stats ? { stats: statsView(verdict.stats) } : {}),
      diff: diffHunks(current, candidate?.text ?? current),
    };
  });
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
export function candidateLines(views: readonly CandidateView[]): string[] {
  const lines: string[] = [`${views.length} candidate(s):`];
  for (const view of views) {
    lines.push('', `${view.id} (${diffStat(view.diff)})${view.rationale ? ` — ${view.rationale}` : ''}`);
    for (const check of view.checks) lines.push(`  ${checkLine(check)}`);
    lines.push(`  → ${verdictLine({ kind: view.verdict, failed: view.failed })}`);
  }
  lines.push('', `Summary: ${views.map((v) => `${v.id} ${v.verdict}${v.failed ? ` (${v.failed})` : ''}`).join(' · ')}`);
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

/** The registry's versions for the panel, newest first, labelled v1… in the order they were recorded. */
export function versionViews(versions: readonly PromptVersion[], inForceText: string | undefined): VersionView[] {
  const byId = new Map(versions.map((v) => [v.id, v]));
  const labels = new Map(versions.map((v, i) => [v.id, `v${i + 1}`]));
  const inForce = inForceText === undefined ? undefined : [...versions].reverse().find((v) => v.text === inForceText)?.id;
  return versions
    .map((v): VersionView => {
      const parent = v.parent ? byId.get(v.parent) : undefined;
      return {
        id: v.id,
        label: labels.get(v.id) ?? v.id,
        kind: v.kind,
        ...(v.parent ? { parent: v.parent } : {}),
        root: v.root,
        ...(v.restores ? { restores: v.restores } : {}),
        created: v.created,
        inForce: v.id === inForce,
        ...(v.lineage ? { lineage: { ...v.lineage } } : {}),
        diff: parent ? diffHunks(parent.text, v.text) : [],
      };
    })
    .reverse();
}

/** How a version is described in the rollback quick pick. */
export function versionDescription(view: VersionView, labels: ReadonlyMap<string, string>): string {
  switch (view.kind) {
    case 'promotion':
      return view.lineage ? `promotion of ${labels.get(view.parent ?? '') ?? '?'} · ${lineageLine(view.lineage)}` : 'promotion';
    case 'rollback':
      return `rollback, restores ${labels.get(view.restores ?? '') ?? '?'}`;
    case 'root':
      return view.parent ? `root: a hand edit after ${labels.get(view.parent) ?? '?'}` : 'root: the first prompt recorded';
  }
}

/**
 * The review queue: the newest near-miss of each candidate, unless that text
 * has since become a registry version.
 */
export function nearMissViews(evaluations: readonly Evaluation[], versions: readonly PromptVersion[], inForceVersion: string | undefined): NearMissView[] {
  const versionTexts = new Set(versions.map((v) => v.text));
  const textOf = new Map(versions.map((v) => [v.id, v.text]));
  const seen = new Set<string>();
  const out: NearMissView[] = [];
  for (const e of evaluations) {
    if (seen.has(e.candidateId) || versionTexts.has(e.text)) continue;
    seen.add(e.candidateId);
    const stats = statsView(e.stats);
    out.push({
      candidateId: e.candidateId,
      run: e.run,
      ts: e.ts ?? '',
      baselineVersion: e.baselineVersion,
      stale: inForceVersion !== undefined && e.baselineVersion !== inForceVersion,
      ...(e.failed ? { failed: e.failed } : {}),
      checks: sixChecks(checksFromJson(e.checks)),
      ...(stats ? { stats } : {}),
      diff: diffHunks(textOf.get(e.baselineVersion) ?? '', e.text),
    });
  }
  return out;
}

export function runView(input: {
  result: Extract<EvolveResult, { kind: 'decided' }>;
  current: string;
  summary: string;
  model: string;
  tasks: number;
  taskSetHash: string;
  finished: string;
}): RunView {
  return {
    run: input.result.run,
    finished: input.finished,
    outcome: input.result.outcome,
    summary: input.summary,
    model: input.model,
    tasks: input.tasks,
    taskSetHash: input.taskSetHash,
    candidates: candidateViews(input.result, input.current),
  };
}

/** The outcome in one line (the caller adds what happened to the prompt file). */
export function outcomeLine(result: Extract<EvolveResult, { kind: 'decided' }>): string {
  const decision = result.decision;
  switch (decision.outcome) {
    case 'promote': {
      const stats = statsView(decision.winner.stats);
      return `Outcome: promote ${decision.winner.id}${result.promoted ? ` as a new registry version ${result.promoted.id}` : ''}${stats ? ` (${statsLine(stats)})` : ''}`;
    }
    case 'near-miss':
      return `Outcome: near-miss — ${decision.nearMisses.map((v) => `${v.id} fell short on ${v.failed ?? '?'}`).join('; ')}. Nothing promoted; see the review queue.`;
    case 'reject':
      return 'Outcome: reject — no candidate passed. The prompt is unchanged.';
  }
}
