/** Queries of `traces.sqlite`, and its rows read back as the registry's types. */
import type { Database, SqlValue } from 'sql.js';
import type { Evaluation, Lineage, PromptVersion, Signal, StoredTrace, VersionKind } from './registry';

type Row = Record<string, SqlValue>;

export function all<T>(db: Database, sql: string, params: SqlValue[], map: (row: Row) => T): T[] {
  const statement = db.prepare(sql, params);
  try {
    const rows: T[] = [];
    while (statement.step()) rows.push(map(statement.getAsObject()));
    return rows;
  } finally {
    statement.free();
  }
}

export function one<T>(db: Database, sql: string, params: SqlValue[], map: (row: Row) => T): T | undefined {
  return all(db, sql, params, map)[0];
}

const str = (v: SqlValue | undefined): string => (typeof v === 'string' ? v : String(v ?? ''));
const strOrNull = (v: SqlValue | undefined): string | null => (v === null || v === undefined ? null : str(v));
const num = (v: SqlValue | undefined): number => Number(v ?? 0);
const numOrUndefined = (v: SqlValue | undefined): number | undefined => (v === null || v === undefined ? undefined : Number(v));

export function toVersion(r: Row): PromptVersion {
  const override = strOrNull(r.human_override);
  const lineage: Lineage | null =
    r.kind === 'promotion'
      ? {
          n: num(r.n), b: num(r.b), c: num(r.c), effect: num(r.effect), p: num(r.p), adjustedAlpha: num(r.adjusted_alpha), editDistance: num(r.edit_distance), drift: num(r.drift), taskSetHash: str(r.task_set_hash), model: str(r.model),
          ...(override !== null ? { humanOverride: { failedCheck: override } } : {}),
        }
      : null;
  return { id: str(r.id), kind: str(r.kind) as VersionKind, parent: strOrNull(r.parent), root: str(r.root), restores: strOrNull(r.restores), text: str(r.text), created: str(r.created), lineage };
}

export function toTrace(r: Row): StoredTrace {
  return {
    session: str(r.session),
    replyId: strOrNull(r.reply_id) ?? undefined,
    promptVersion: strOrNull(r.prompt_version) ?? undefined,
    model: str(r.model),
    provider: str(r.provider),
    promptTokens: numOrUndefined(r.prompt_tokens),
    completionTokens: numOrUndefined(r.completion_tokens),
    toolCalls: num(r.tool_calls),
    durationMs: num(r.duration_ms),
    ts: str(r.ts),
  };
}

export function toSignal(r: Row): Signal {
  if (r.kind === 'rant') return { kind: 'rant', rantId: str(r.rant_id), session: strOrNull(r.session), ts: str(r.ts) };
  const session = strOrNull(r.session);
  return { kind: r.kind === 'up' ? 'up' : 'down', replyId: str(r.reply_id), ...(session === null ? {} : { session }), ts: str(r.ts) };
}

export function toEvaluation(r: Row): Evaluation {
  const p = numOrUndefined(r.p);
  return {
    run: str(r.run),
    candidateId: str(r.candidate_id),
    baselineVersion: str(r.baseline_version),
    text: str(r.text),
    verdict: str(r.verdict) as Evaluation['verdict'],
    failed: strOrNull(r.failed) ?? undefined,
    tested: r.tested === 1,
    taskIds: parseIds(r.task_ids),
    checks: JSON.parse(str(r.checks)) as unknown,
    stats: p === undefined ? undefined : { n: num(r.n), b: num(r.b), c: num(r.c), effect: num(r.effect), p, adjustedAlpha: num(r.adjusted_alpha) },
    taskSetHash: strOrNull(r.task_set_hash) ?? undefined,
    model: strOrNull(r.model) ?? undefined,
    ts: str(r.ts),
  };
}

export function parseIds(value: SqlValue | undefined): string[] {
  try {
    const parsed = JSON.parse(str(value)) as unknown;
    return Array.isArray(parsed) ? parsed.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
