import * as path from 'node:path';
import { appendJsonLine, isoNow, readJsonLines } from '../jsonl';
import type { TextModel } from '../provider/chatModel';
import { readRants, type Rant } from '../rants';
import { classifyRants, type RantClass } from './classify';
import { TRIAGE_FILE, EVOLUTION_FILE } from './paths';
import { tokens, jaccard, DUPLICATE_THRESHOLD } from './similarity';

/** What a line of triage.jsonl says about a rant; the newest line per rant wins. */
export type DecisionStatus = 'triaged' | 'duplicate' | 'acted' | 'dismissed';

export interface TriageDecision {
  readonly v: 1;
  readonly rant: string;
  readonly ts: string;
  readonly class: RantClass | null;
  readonly duplicateOf: string | null;
  readonly status: DecisionStatus;
  /** Where `class` came from; null when the rant was never classified. */
  readonly source: 'model' | 'fallback' | null;
  readonly note?: string;
  /** On `acted`: the run, its branch and commit in the scratch clone. */
  readonly run?: string;
  readonly branch?: string;
  readonly commit?: string;
}

export type RantStatus = 'new' | 'duplicate' | 'triaged' | 'acted' | 'dismissed';

export interface RantState {
  readonly rant: Rant;
  readonly status: RantStatus;
  readonly class: RantClass | null;
  readonly source: 'model' | 'fallback' | null;
  readonly duplicateOf: string | null;
  readonly note: string | null;
  readonly branch: string | null;
  readonly commit: string | null;
}

export interface TriageResult {
  /** Decisions appended by this triage (new rants only). */
  readonly decisions: readonly TriageDecision[];
  /** The rant to act on, if any. */
  readonly picked: RantState | undefined;
  readonly states: readonly RantState[];
}

export interface TriageOptions {
  /** Only rants of this project (rants.jsonl `project`) are picked. Undefined = any. */
  readonly project?: string;
  readonly model?: TextModel;
  readonly signal?: AbortSignal;
  readonly clock?: () => Date;
  /** A rant whose runs ended without a change this many times is not picked again. Default 2. */
  readonly maxAttempts?: number;
}

const CLASS_PRIORITY: Readonly<Record<RantClass, number>> = { bug: 0, confusion: 1, request: 2, noise: 3 };

export function readDecisions(dataDir: string): TriageDecision[] {
  return readJsonLines<TriageDecision>(path.join(dataDir, TRIAGE_FILE)).records.filter(
    (d) => d.v === 1 && typeof d.rant === 'string' && typeof d.status === 'string',
  );
}

export function appendDecision(dataDir: string, decision: TriageDecision): void {
  appendJsonLine(path.join(dataDir, TRIAGE_FILE), decision);
}

/** Every rant with its current status, oldest first. */
export function rantStatuses(dataDir: string): RantState[] {
  const { rants } = readRants(dataDir);
  return statesOf(sortRants(rants), readDecisions(dataDir));
}

/** Appends a `dismissed` decision; rants.jsonl is never rewritten. False when there is no such rant. */
export function dismissRant(dataDir: string, id: string, clock: () => Date = () => new Date()): boolean {
  const state = rantStatuses(dataDir).find((s) => s.rant.id === id);
  if (state === undefined) return false;
  appendDecision(dataDir, {
    v: 1,
    rant: id,
    ts: isoNow(clock),
    class: state.class,
    duplicateOf: state.duplicateOf,
    status: 'dismissed',
    source: state.source,
  });
  return true;
}

/**
 * Dedupes and classifies the rants nobody triaged yet, appends one decision
 * per rant, and picks at most one to act on: triaged (not noise, not acted on
 * or dismissed), of the project, bug before confusion before request, oldest
 * first.
 */
export async function triage(dataDir: string, options: TriageOptions = {}): Promise<TriageResult> {
  const clock = options.clock ?? (() => new Date());
  const rants = sortRants(readRants(dataDir).rants);
  const known = readDecisions(dataDir);
  const decided = new Set(known.map((d) => d.rant));
  const fresh = rants.filter((r) => !decided.has(r.id));

  const duplicates = findDuplicates(rants, fresh, latestById(known));
  const toClassify = fresh.filter((r) => !duplicates.has(r.id));
  const classes = await classifyRants(toClassify, options.model, options.signal);
  const ts = isoNow(clock);
  const decisions: TriageDecision[] = [];
  const classOf = new Map<string, { class: RantClass | null; source: 'model' | 'fallback' | null }>();
  for (const d of known) if (d.class !== null) classOf.set(d.rant, { class: d.class, source: d.source });
  for (const rant of toClassify) {
    const c = classes.get(rant.id);
    if (c === undefined) continue;
    classOf.set(rant.id, c);
    decisions.push({ v: 1, rant: rant.id, ts, class: c.class, duplicateOf: null, status: 'triaged', source: c.source, note: c.note });
  }
  for (const rant of fresh) {
    const original = duplicates.get(rant.id);
    if (original === undefined) continue;
    const c = classOf.get(original) ?? { class: null, source: null };
    decisions.push({ v: 1, rant: rant.id, ts, class: c.class, duplicateOf: original, status: 'duplicate', source: c.source });
  }
  for (const decision of decisions) appendDecision(dataDir, decision);

  const states = statesOf(rants, [...known, ...decisions]);
  const picked = pick(states, attemptsByRant(dataDir), options);
  return { decisions, picked, states };
}

function pick(states: readonly RantState[], attempts: ReadonlyMap<string, number>, options: TriageOptions): RantState | undefined {
  const maxAttempts = options.maxAttempts ?? 2;
  const candidates = states.filter(
    (s) =>
      s.status === 'triaged' &&
      s.class !== null &&
      s.class !== 'noise' &&
      (options.project === undefined || s.rant.project === options.project) &&
      (attempts.get(s.rant.id) ?? 0) < maxAttempts,
  );
  // `states` is oldest first and the sort is stable: class, then age.
  candidates.sort((a, b) => CLASS_PRIORITY[a.class ?? 'noise'] - CLASS_PRIORITY[b.class ?? 'noise']);
  return candidates[0];
}

/**
 * Maps each fresh rant that repeats an earlier one (same project, Jaccard ≥
 * 0.8) to the rant it repeats; a repeat of a duplicate points at the original.
 */
function findDuplicates(all: readonly Rant[], fresh: readonly Rant[], latest: ReadonlyMap<string, TriageDecision>): Map<string, string> {
  const freshIds = new Set(fresh.map((r) => r.id));
  const duplicateOf = new Map<string, string>();
  for (const d of latest.values()) if (d.duplicateOf !== null) duplicateOf.set(d.rant, d.duplicateOf);
  const originals: Array<{ rant: Rant; words: Set<string> }> = [];
  const found = new Map<string, string>();
  for (const rant of all) {
    const words = tokens(rant.text);
    if (freshIds.has(rant.id)) {
      const match = originals.find((o) => o.rant.project === rant.project && jaccard(o.words, words) >= DUPLICATE_THRESHOLD);
      if (match !== undefined) {
        found.set(rant.id, match.rant.id);
        continue;
      }
    } else if (duplicateOf.has(rant.id)) {
      continue;
    }
    originals.push({ rant, words });
  }
  return found;
}

function statesOf(rants: readonly Rant[], decisions: readonly TriageDecision[]): RantState[] {
  const latest = latestById(decisions);
  const lastNote = new Map<string, string>();
  for (const d of decisions) if (typeof d.note === 'string' && d.note !== '') lastNote.set(d.rant, d.note);
  return rants.map((rant) => {
    const d = latest.get(rant.id);
    const status: RantStatus = d === undefined ? 'new' : d.status;
    return {
      rant,
      status,
      class: d?.class ?? null,
      source: d?.source ?? null,
      duplicateOf: d?.duplicateOf ?? null,
      note: lastNote.get(rant.id) ?? null,
      branch: d?.status === 'acted' ? d.branch ?? null : null,
      commit: d?.status === 'acted' ? d.commit ?? null : null,
    };
  });
}

function latestById(decisions: readonly TriageDecision[]): Map<string, TriageDecision> {
  const latest = new Map<string, TriageDecision>();
  for (const d of decisions) latest.set(d.rant, d);
  return latest;
}

/** How often each rant was worked on by a run that ended without a change shipped. */
function attemptsByRant(dataDir: string): Map<string, number> {
  const counts = new Map<string, number>();
  const runs = readJsonLines<{ rants?: unknown; outcome?: unknown }>(path.join(dataDir, EVOLUTION_FILE)).records;
  for (const run of runs) {
    if (run.outcome !== 'discarded' && run.outcome !== 'nothing-to-evolve') continue;
    if (!Array.isArray(run.rants)) continue;
    for (const id of run.rants) if (typeof id === 'string') counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

function sortRants(rants: readonly Rant[]): Rant[] {
  return [...rants].sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}
