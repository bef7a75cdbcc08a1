import type { DecidedRun } from '../../core/promptEvolution/run';
import type { Evaluation, PromptVersion } from '../../core/promptEvolution/registry';
import { checksFromJson, describeCheck, diffHunks, lineageLine, sixChecks, type PairedStats } from '../../core/promptEvolution/report';
import type { CandidateView, NearMissView, RunView, StatsView, VersionView } from '../../protocol/review';

/**
 * The review panel's views (the shapes of src/protocol/review.ts), built in
 * the host from what the core records and the words it has for it: the core
 * never imports the protocol (docs/architecture.md, "Layout").
 */

function statsView(stats: PairedStats | undefined): StatsView | undefined {
  return stats ? { n: stats.n, b: stats.b, c: stats.c, effect: stats.effect, p: stats.p, adjustedAlpha: stats.adjustedAlpha } : undefined;
}

/** A decided run as the panel shows it; `summary` is the run's last word. */
export function runView(run: DecidedRun, summary: string): RunView {
  return {
    run: run.result.run,
    finished: run.finished,
    outcome: run.result.outcome,
    summary,
    model: run.model,
    tasks: run.tasks,
    taskSetHash: run.taskSetHash,
    candidates: candidateViews(run.result, run.current),
  };
}

function candidateViews(result: DecidedRun['result'], current: string): CandidateView[] {
  return result.decision.verdicts.map((verdict) => {
    const candidate = result.candidates.find((c) => c.id === verdict.id);
    return {
      id: verdict.id,
      ...(candidate?.rationale ? { rationale: candidate.rationale } : {}),
      verdict: verdict.kind,
      ...(verdict.failed ? { failed: verdict.failed } : {}),
      checks: sixChecks(verdict.checks.map(describeCheck)),
      ...(verdict.stats ? { stats: statsView(verdict.stats) } : {}),
      diff: diffHunks(current, candidate?.text ?? current),
    };
  });
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
