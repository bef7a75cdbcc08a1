import * as path from 'node:path';
import { appendJsonLine, isoNow, readJsonLines } from '../jsonl';
import type { TextModel } from '../provider/chatModel';
import { readRants, type Rant } from '../rants';
import { classifyWithModel, RANT_CLASSES, type Classification, type RantClass } from './classify';
import { classifyByRules } from './fallback';
import { TRIAGE_FILE, EVOLUTION_FILE } from './paths';
import { tokens, jaccard, DUPLICATE_THRESHOLD } from './similarity';

/**
 * Where each rant is routed (docs/architecture.md, "Evolution"). Every rant
 * starts `new`; `agent-code` waits `queued` (or `waiting-for-repository`
 * while no agent repository is set) until a run ships a change (`acted`).
 */
export type RantStatus = 'new' | 'queued' | 'acted' | 'waiting-for-repository' | 'routed-to-prompt' | 'out-of-scope' | 'answered' | 'duplicate' | 'dismissed';
export const RANT_STATUSES: readonly RantStatus[] = ['new', 'queued', 'acted', 'waiting-for-repository', 'routed-to-prompt', 'out-of-scope', 'answered', 'duplicate', 'dismissed'];

/** What a line of triage.jsonl says about a rant; the newest line per rant wins. */
export interface TriageDecision {
  readonly v: 1;
  readonly rant: string;
  readonly ts: string;
  /** A class of an older Candor (`bug`, `request`, `noise`) is read as none: that rant is triaged again. */
  readonly class: RantClass | null;
  readonly duplicateOf: string | null;
  readonly status: RantStatus;
  /** Where `class` came from: the model, or the rules (duplicates, the fallback). */
  readonly source: 'model' | 'fallback' | null;
  readonly note?: string;
  /** `confusion`: the explanation shown with the rant. */
  readonly answer?: string;
  /** On `acted`: the run, its branch and commit in the scratch clone. */
  readonly run?: string;
  readonly branch?: string;
  readonly commit?: string;
}

export interface RantState {
  readonly rant: Rant;
  readonly status: RantStatus;
  readonly class: RantClass | null;
  readonly source: 'model' | 'fallback' | null;
  readonly duplicateOf: string | null;
  readonly note: string | null;
  readonly answer: string | null;
  readonly branch: string | null;
  readonly commit: string | null;
}

export interface TriageResult {
  /** Decisions appended by this triage. */
  readonly decisions: readonly TriageDecision[];
  /** Rants the model was asked about (or the rules, without a model) and did not place: still `new`, asked again next run. */
  readonly unclassified: readonly string[];
  /** The `agent-code` rant to act on, if any (only when code routing is on). */
  readonly picked: RantState | undefined;
  readonly states: readonly RantState[];
}

export interface TriageOptions {
  /** True when an agent repository is set: `agent-code` rants are `queued` and one may be picked; else they wait for it. */
  readonly codeRouting: boolean;
  readonly model?: TextModel;
  /** The agent's README: context for the model, and what the fallback answers a confusion from. */
  readonly readme?: string;
  readonly signal?: AbortSignal;
  readonly clock?: () => Date;
  /** A rant whose runs ended without a change this many times is not picked again. Default 2. */
  readonly maxAttempts?: number;
}

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
  appendDecision(dataDir, { v: 1, rant: id, ts: isoNow(clock), class: state.class, duplicateOf: state.duplicateOf, status: 'dismissed', source: state.source });
  return true;
}

export function statusOf(cls: RantClass, codeRouting: boolean): RantStatus {
  switch (cls) {
    case 'agent-code':
      return codeRouting ? 'queued' : 'waiting-for-repository';
    case 'agent-behaviour':
      return 'routed-to-prompt';
    case 'user-project':
      return 'out-of-scope';
    case 'confusion':
      return 'answered';
    case 'duplicate':
      return 'duplicate';
    case 'unclear':
      return 'new';
  }
}

/**
 * Routes every rant that needs it, from every project (the agent is the
 * same everywhere): fresh rants that repeat an earlier one become
 * duplicates; the rest, rants decided by an older Candor's classes, and
 * rants only the rules placed (when a model is there to ask) go to the
 * model, then to the rule fallback. Appends one decision per changed route
 * and picks at most one `agent-code` rant to act on, oldest first.
 */
export async function triage(dataDir: string, options: TriageOptions): Promise<TriageResult> {
  const clock = options.clock ?? (() => new Date());
  const rants = sortRants(readRants(dataDir).rants);
  const known = readDecisions(dataDir);
  const latest = latestById(known);
  const fresh = rants.filter((r) => !latest.has(r.id));
  const duplicates = findDuplicates(rants, fresh, latest);
  const toClassify = rants.filter((r) => !duplicates.has(r.id) && needsClassifying(latest.get(r.id), options.model !== undefined));

  const byModel = options.model === undefined ? new Map<string, Classification>() : await classifyWithModel(toClassify, options.model, options.readme, options.signal);
  const ts = isoNow(clock);
  const decisions: TriageDecision[] = [];
  const unclassified: string[] = [];
  const decide = (rant: string, c: Classification, duplicateOf: string | null = null): void => {
    const before = latest.get(rant);
    const status = statusOf(c.class, options.codeRouting);
    if (before !== undefined && before.class === c.class && before.status === status && before.source === c.source && (before.answer ?? null) === (c.answer ?? null)) return;
    decisions.push({ v: 1, rant, ts, class: c.class, duplicateOf, status, source: c.source, ...(c.note !== '' ? { note: c.note } : {}), ...(c.answer !== undefined ? { answer: c.answer } : {}) });
  };
  for (const rant of toClassify) {
    const c = byModel.get(rant.id) ?? classifyByRules(rant.text, options.readme);
    if (c === undefined) unclassified.push(rant.id);
    else decide(rant.id, c);
  }
  for (const [id, original] of duplicates) decide(id, { class: 'duplicate', note: '', source: 'fallback' }, original);
  // An `agent-code` rant follows the repository setting: queued while one is set, waiting while none is.
  for (const d of latest.values()) {
    const flip = d.status === 'queued' && !options.codeRouting ? 'waiting-for-repository' : d.status === 'waiting-for-repository' && options.codeRouting ? 'queued' : undefined;
    if (flip !== undefined) decisions.push({ ...d, ts, status: flip });
  }
  for (const decision of decisions) appendDecision(dataDir, decision);

  const states = statesOf(rants, [...known, ...decisions]);
  const picked = options.codeRouting ? pick(states, attemptsByRant(dataDir), options.maxAttempts ?? 2) : undefined;
  return { decisions, unclassified, picked, states };
}

/**
 * A rant is (re)classified when it has no route yet, when its route came
 * from an older Candor's classes (once: the new decision replaces it), or,
 * with a model to ask, when only the rules placed it.
 */
function needsClassifying(latest: TriageDecision | undefined, hasModel: boolean): boolean {
  if (latest === undefined) return true;
  if (latest.status === 'dismissed' || latest.status === 'acted' || latest.status === 'duplicate') return false;
  if (!isCurrent(latest)) return true;
  return hasModel && latest.source !== 'model' && latest.class !== 'duplicate';
}

/** A decision in this Candor's vocabulary (class and status); an older one (`bug`, `triaged`, …) is not. */
function isCurrent(d: TriageDecision): boolean {
  return (d.class === null || (RANT_CLASSES as readonly string[]).includes(d.class)) && (RANT_STATUSES as readonly string[]).includes(d.status);
}

function pick(states: readonly RantState[], attempts: ReadonlyMap<string, number>, maxAttempts: number): RantState | undefined {
  // `states` is oldest first.
  return states.find((s) => s.status === 'queued' && s.class === 'agent-code' && (attempts.get(s.rant.id) ?? 0) < maxAttempts);
}

/**
 * Maps each fresh rant that repeats an earlier one (Jaccard ≥ 0.8, in any
 * project) to the rant it repeats; a repeat of a duplicate points at the original.
 */
function findDuplicates(all: readonly Rant[], fresh: readonly Rant[], latest: ReadonlyMap<string, TriageDecision>): Map<string, string> {
  const freshIds = new Set(fresh.map((r) => r.id));
  const originals: Array<{ rant: Rant; words: Set<string> }> = [];
  const found = new Map<string, string>();
  for (const rant of all) {
    const words = tokens(rant.text);
    if (freshIds.has(rant.id)) {
      const match = originals.find((o) => jaccard(o.words, words) >= DUPLICATE_THRESHOLD);
      if (match !== undefined) {
        found.set(rant.id, match.rant.id);
        continue;
      }
    } else if (latest.get(rant.id)?.duplicateOf != null) {
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
    const current = d !== undefined && isCurrent(d);
    // An older Candor's decision: its acted, dismissed and duplicate stand; anything else is new again.
    const status: RantStatus = d === undefined ? 'new' : current ? d.status : d.status === 'acted' || d.status === 'dismissed' || d.status === 'duplicate' ? d.status : 'new';
    return {
      rant,
      status,
      class: d !== undefined && current ? d.class : d?.status === 'duplicate' ? 'duplicate' : null,
      source: d?.source ?? null,
      duplicateOf: d?.duplicateOf ?? null,
      note: lastNote.get(rant.id) ?? null,
      answer: d?.status === 'answered' || (d?.status === 'dismissed' && d.class === 'confusion') ? lastAnswer(decisions, rant.id) : null,
      branch: d?.status === 'acted' ? d.branch ?? null : null,
      commit: d?.status === 'acted' ? d.commit ?? null : null,
    };
  });
}

function lastAnswer(decisions: readonly TriageDecision[], rant: string): string | null {
  for (let i = decisions.length - 1; i >= 0; i--) {
    const d = decisions[i];
    if (d?.rant === rant && typeof d.answer === 'string') return d.answer;
  }
  return null;
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
