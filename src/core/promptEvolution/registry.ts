import type { Database } from 'sql.js';
import { newId } from '../ids';
import { environmentSecrets, type SecretSet } from '../redact';
import type { CandidateHistory } from './promotionGate';
import { SqliteFile, type SqliteFileOptions } from './sqliteFile';
import { SCHEMA, SCHEMA_VERSION, migrate } from './registrySchema';
import { all, one, parseIds, toEvaluation, toSignal, toTrace, toVersion } from './registryRows';
import { KindError } from '../kindError';

/**
 * `<dataDir>/traces.sqlite`: the prompt registry (every version with its
 * lineage), the chat's traces, the user's signals, and every candidate the
 * gate evaluated (the review queue and the re-test history).
 *
 * One file serves every workspace that shares the data folder, so each row
 * carries a `scope`: the workspace it belongs to (`workspaceIdFor` of the
 * first workspace folder, from the caller). A registry is opened for one
 * scope and sees only that scope's prompt versions and evaluations: its own
 * root (drift is measured from it), version in force, lineage, rollback list,
 * review queue and re-test history. Traces and signals record their scope
 * too but are read across scopes (the chat's evidence is per session anyway).
 *
 * Schema 2 added `scope`. Rows written before it are kept with scope `''`
 * (LEGACY_SCOPE) and are never shown to a named workspace: they may mix
 * several workspaces' lineages, so adopting them into whichever workspace
 * opens first could hand one project another's prompt history, drift root
 * and near-misses. A workspace upgrading simply starts a fresh root from its
 * prompt in force; the legacy rows stay in the file, readable by opening the
 * registry with `scope: LEGACY_SCOPE`.
 *
 * Every text written here is redacted first (docs/architecture.md,
 * "Secrets"): a prompt, a candidate, a model name, a failure.
 */

/** The scope of rows written before schema 2 (no workspace recorded). @internal */
export const LEGACY_SCOPE = '';

/** The numbers that justify a promotion. */
export interface Lineage {
  readonly n: number;
  readonly b: number;
  readonly c: number;
  readonly effect: number;
  readonly p: number;
  readonly adjustedAlpha: number;
  readonly editDistance: number;
  readonly drift: number;
  readonly taskSetHash: string;
  readonly model: string;
  /**
   * Set when a person promoted a near-miss the gate had stopped (Promote
   * Anyway), with the check that stopped it; absent when the gate promoted.
   */
  readonly humanOverride?: { readonly failedCheck: string };
}

/** root: a starting point (the built-in prompt, or a hand edit); promotion: passed the gate; rollback: restores an older text. */
export type VersionKind = 'root' | 'promotion' | 'rollback';

export interface PromptVersion {
  readonly id: string;
  readonly kind: VersionKind;
  readonly parent: string | null;
  readonly root: string;
  /** rollback: the version whose text it restores. */
  readonly restores: string | null;
  readonly text: string;
  readonly created: string;
  /** promotion only. */
  readonly lineage: Lineage | null;
}

export interface Trace {
  readonly session: string;
  readonly replyId?: string;
  readonly promptVersion?: string;
  readonly model: string;
  readonly provider: string;
  readonly promptTokens?: number;
  readonly completionTokens?: number;
  readonly toolCalls: number;
  readonly durationMs: number;
  readonly ts?: string;
}

/** A trace as read back: its timestamp is always set. */
export type StoredTrace = Trace & { readonly ts: string };

export type Signal =
  | { readonly kind: 'up' | 'down'; readonly replyId: string; readonly session?: string; readonly ts?: string }
  | { readonly kind: 'rant'; readonly rantId: string; readonly session: string | null; readonly ts?: string };

export interface Evaluation {
  readonly run: string;
  readonly candidateId: string;
  /** The version the candidate was compared with. */
  readonly baselineVersion: string;
  readonly text: string;
  readonly verdict: 'pass' | 'near-miss' | 'reject';
  readonly failed?: string;
  /** Reached the A/B test: a hypothesis. */
  readonly tested: boolean;
  readonly taskIds: readonly string[];
  /** The gate's checks as shown to the user (JSON). */
  readonly checks: unknown;
  readonly stats?: { readonly n: number; readonly b: number; readonly c: number; readonly effect: number; readonly p: number; readonly adjustedAlpha: number };
  readonly taskSetHash?: string;
  readonly model?: string;
  readonly ts?: string;
}

export class RegistryError extends KindError<'not-found' | 'stale-parent'> {
  override readonly name = 'RegistryError';
}

export type RegistryOptions = Omit<SqliteFileOptions, 'schema' | 'schemaVersion' | 'migrate'> & {
  /** The workspace whose prompt history this registry reads and writes: `workspaceIdFor(first folder)`. */
  readonly scope: string;
  /** Removed from every text written. Default: the environment's key, and credential patterns. */
  readonly secrets?: SecretSet;
};

export class PromptRegistry {
  private constructor(
    private readonly store: SqliteFile,
    private readonly clock: () => Date,
    /** Every prompt version and evaluation read or written here belongs to it. */
    readonly scope: string,
    private readonly secrets: SecretSet,
  ) {}

  /** Opens `traces.sqlite` for one workspace scope; a corrupt file throws SqliteFileError 'corrupt' after being moved aside (open again for a fresh one). */
  static async open(options: RegistryOptions): Promise<PromptRegistry> {
    if (typeof options.scope !== 'string') throw new TypeError('PromptRegistry.open: a scope (the workspace id) is required');
    const store = await SqliteFile.open({ ...options, schema: SCHEMA, schemaVersion: SCHEMA_VERSION, migrate });
    return new PromptRegistry(store, options.clock ?? (() => new Date()), options.scope, options.secrets ?? environmentSecrets());
  }

  get file(): string {
    return this.store.file;
  }

  /** Frees the in-memory copy of the database. */
  close(): void {
    this.store.close();
  }

  /** The version in force (the newest), if any. */
  current(): Promise<PromptVersion | undefined> {
    return this.store.read((db) => headOf(db, this.scope));
  }

  /** A version of this scope (another workspace's id is not found). */
  version(id: string): Promise<PromptVersion | undefined> {
    return this.store.read((db) => versionOf(db, this.scope, id));
  }

  /** The newest version of this scope with this text (compared as stored, redacted): what a trace of a request built from it is tagged with. */
  versionWithText(text: string): Promise<PromptVersion | undefined> {
    const stored = this.secrets.redact(text);
    return this.store.read((db) => one(db, 'SELECT * FROM prompt_versions WHERE scope = ? AND text = ? ORDER BY seq DESC LIMIT 1', [this.scope, stored], toVersion));
  }

  /** This scope's versions, oldest first. */
  versions(): Promise<PromptVersion[]> {
    return this.store.read((db) => all(db, 'SELECT * FROM prompt_versions WHERE scope = ? ORDER BY seq', [this.scope], toVersion));
  }

  /** The version and its parents, newest first, back to a root. */
  lineage(id: string): Promise<PromptVersion[]> {
    return this.store.read((db) => {
      const chain: PromptVersion[] = [];
      const seen = new Set<string>();
      for (let at: string | null = id; at !== null && !seen.has(at); ) {
        seen.add(at);
        const version: PromptVersion | undefined = versionOf(db, this.scope, at);
        if (!version) break;
        chain.push(version);
        at = version.kind === 'root' ? null : version.parent;
      }
      return chain;
    });
  }

  /**
   * The version whose text is `text`, registered if the head differs: an
   * empty registry gets its root; a prompt edited by hand becomes a new root
   * (drift is measured from what the user wrote, not from what they replaced).
   */
  ensureCurrent(prompt: string): Promise<PromptVersion> {
    // Compared as stored: a prompt holding a key is kept without it, and is still the same version.
    const text = this.secrets.redact(prompt);
    return this.store.write((db) => {
      const head = headOf(db, this.scope);
      if (head && head.text === text) return head;
      const id = newId();
      insertVersion(db, this.scope, { id, kind: 'root', parent: head?.id ?? null, root: id, restores: null, text, created: this.now(), lineage: null });
      return headOf(db, this.scope) as PromptVersion;
    });
  }

  /** Records a promotion of `parent`; refuses if `parent` is no longer the version in force. */
  promote(parent: string, text: string, lineage: Lineage): Promise<PromptVersion> {
    return this.store.write((db) => {
      const head = headOf(db, this.scope);
      if (!head || head.id !== parent) throw new RegistryError('stale-parent', `the prompt in force is ${head?.id ?? 'none'}, not ${parent}`);
      insertVersion(db, this.scope, { id: newId(), kind: 'promotion', parent, root: head.root, restores: null, text: this.secrets.redact(text), created: this.now(), lineage: this.secrets.redactDeep(lineage) });
      return headOf(db, this.scope) as PromptVersion;
    });
  }

  /** Makes an older version's text the one in force again, as a new version (history is never rewritten). */
  rollback(versionId: string): Promise<PromptVersion> {
    return this.store.write((db) => {
      const target = versionOf(db, this.scope, versionId);
      if (!target) throw new RegistryError('not-found', `no prompt version ${versionId} in this workspace`);
      const head = headOf(db, this.scope);
      insertVersion(db, this.scope, { id: newId(), kind: 'rollback', parent: head?.id ?? null, root: target.root, restores: target.id, text: target.text, created: this.now(), lineage: null });
      return headOf(db, this.scope) as PromptVersion;
    });
  }

  addTrace(trace: Trace): Promise<void> {
    return this.addTraces([trace]);
  }

  addTraces(traces: readonly Trace[]): Promise<void> {
    return this.store.write((db) => {
      for (const t of traces) {
        db.run(
          'INSERT INTO traces (session, reply_id, prompt_version, model, provider, prompt_tokens, completion_tokens, tool_calls, duration_ms, ts, scope) VALUES (?,?,?,?,?,?,?,?,?,?,?)',
          [t.session, t.replyId ?? null, t.promptVersion ?? null, this.secrets.redact(t.model), this.secrets.redact(t.provider), t.promptTokens ?? null, t.completionTokens ?? null, t.toolCalls, t.durationMs, t.ts ?? this.now(), this.scope],
        );
      }
    });
  }

  /** Every scope's traces (each row records its scope). */
  traces(session?: string): Promise<StoredTrace[]> {
    const where = session === undefined ? '' : ' WHERE session = ?';
    return this.store.read((db) => all(db, `SELECT * FROM traces${where} ORDER BY seq`, session === undefined ? [] : [session], toTrace));
  }

  addSignal(signal: Signal): Promise<void> {
    return this.store.write((db) => {
      const ts = signal.ts ?? this.now();
      if (signal.kind === 'rant') db.run('INSERT INTO signals (kind, session, rant_id, ts, scope) VALUES (?,?,?,?,?)', ['rant', signal.session, signal.rantId, ts, this.scope]);
      else db.run('INSERT INTO signals (kind, reply_id, session, ts, scope) VALUES (?,?,?,?,?)', [signal.kind, signal.replyId, signal.session ?? null, ts, this.scope]);
    });
  }

  /** Every scope's signals (each row records its scope). */
  signals(): Promise<Signal[]> {
    return this.store.read((db) => all(db, 'SELECT * FROM signals ORDER BY seq', [], toSignal));
  }

  recordEvaluations(evaluations: readonly Evaluation[]): Promise<void> {
    return this.store.write((db) => {
      for (const e of evaluations.map((one) => this.secrets.redactDeep(one))) {
        db.run(
          `INSERT INTO evaluations (run, candidate_id, baseline_version, text, verdict, failed, tested, task_ids, checks, n, b, c, effect, p, adjusted_alpha, task_set_hash, model, ts, scope)
           VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
          [
            e.run, e.candidateId, e.baselineVersion, e.text, e.verdict, e.failed ?? null, e.tested ? 1 : 0, JSON.stringify(e.taskIds), JSON.stringify(e.checks),
            e.stats?.n ?? null, e.stats?.b ?? null, e.stats?.c ?? null, e.stats?.effect ?? null, e.stats?.p ?? null, e.stats?.adjustedAlpha ?? null,
            e.taskSetHash ?? null, e.model ?? null, e.ts ?? this.now(), this.scope,
          ],
        );
      }
    });
  }

  /**
   * This scope's review queue, newest first: each candidate whose newest
   * evaluation (a re-test replaces the numbers) is a near-miss, unless a
   * person dismissed or promoted it.
   */
  nearMisses(): Promise<Evaluation[]> {
    return this.store.read((db) => all(db, `SELECT * FROM evaluations e WHERE e.scope = ? AND e.verdict = 'near-miss'
      AND e.seq = (SELECT MAX(x.seq) FROM evaluations x WHERE x.scope = e.scope AND x.candidate_id = e.candidate_id)
      AND NOT EXISTS (SELECT 1 FROM reviews r WHERE r.scope = e.scope AND r.candidate_id = e.candidate_id)
      ORDER BY e.seq DESC`, [this.scope], toEvaluation));
  }

  /** Dismiss: the candidate leaves the review queue; its evaluations stay. */
  dismissCandidate(candidateId: string): Promise<void> {
    return this.store.write((db) => {
      db.run('INSERT INTO reviews (candidate_id, action, version, ts, scope) VALUES (?,?,?,?,?)', [candidateId, 'dismissed', null, this.now(), this.scope]);
    });
  }

  /**
   * Promote Anyway: a person promotes a near-miss over the gate. Recorded as
   * a promotion of `parent` whose lineage carries the candidate's numbers
   * and `humanOverride`; the candidate leaves the review queue. Refused,
   * like `promote`, when `parent` is no longer the version in force.
   */
  promoteAnyway(candidateId: string, parent: string, text: string, lineage: Lineage & { readonly humanOverride: { readonly failedCheck: string } }): Promise<PromptVersion> {
    return this.store.write((db) => {
      const head = headOf(db, this.scope);
      if (!head || head.id !== parent) throw new RegistryError('stale-parent', `the prompt in force is ${head?.id ?? 'none'}, not ${parent}`);
      const id = newId();
      insertVersion(db, this.scope, { id, kind: 'promotion', parent, root: head.root, restores: null, text: this.secrets.redact(text), created: this.now(), lineage: this.secrets.redactDeep(lineage) });
      db.run('INSERT INTO reviews (candidate_id, action, version, ts, scope) VALUES (?,?,?,?,?)', [candidateId, 'overridden', id, this.now(), this.scope]);
      return headOf(db, this.scope) as PromptVersion;
    });
  }

  /** Earlier A/B tests in this scope of a candidate against a baseline version: the tasks used and how many tests. */
  history(candidateId: string, baselineVersion: string): Promise<CandidateHistory> {
    return this.store.read((db) => {
      const rows = all(db, 'SELECT task_ids FROM evaluations WHERE scope = ? AND candidate_id = ? AND baseline_version = ? AND tested = 1', [this.scope, candidateId, baselineVersion], (r) => parseIds(r.task_ids));
      return { scoredTaskIds: [...new Set(rows.flat())], tests: rows.length };
    });
  }

  private now(): string {
    return this.clock().toISOString();
  }
}

function headOf(db: Database, scope: string): PromptVersion | undefined {
  return one(db, 'SELECT * FROM prompt_versions WHERE scope = ? ORDER BY seq DESC LIMIT 1', [scope], toVersion);
}

function versionOf(db: Database, scope: string, id: string): PromptVersion | undefined {
  return one(db, 'SELECT * FROM prompt_versions WHERE scope = ? AND id = ?', [scope, id], toVersion);
}

function insertVersion(db: Database, scope: string, v: PromptVersion): void {
  const l = v.lineage;
  db.run(
    `INSERT INTO prompt_versions (id, kind, parent, root, restores, text, created, n, b, c, effect, p, adjusted_alpha, edit_distance, drift, task_set_hash, model, scope, human_override)
     VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
    [v.id, v.kind, v.parent, v.root, v.restores, v.text, v.created, l?.n ?? null, l?.b ?? null, l?.c ?? null, l?.effect ?? null, l?.p ?? null, l?.adjustedAlpha ?? null, l?.editDistance ?? null, l?.drift ?? null, l?.taskSetHash ?? null, l?.model ?? null, scope, l?.humanOverride?.failedCheck ?? null],
  );
}
