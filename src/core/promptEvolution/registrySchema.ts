import type { Database } from 'sql.js';

/**
 * The tables of `traces.sqlite` (see registry.ts) and how an older file is
 * brought up to date.
 *
 * Schema 3 records the review of near-misses: `reviews` holds a person's
 * decision on a candidate (`dismissed`, or `overridden` by Promote Anyway),
 * and a promotion a person made against the gate says so in its
 * `human_override` column (the check that stopped the candidate).
 */

export const SCHEMA_VERSION = 3;

export const SCHEMA = `
CREATE TABLE IF NOT EXISTS prompt_versions (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind TEXT NOT NULL,
  parent TEXT,
  root TEXT NOT NULL,
  restores TEXT,
  text TEXT NOT NULL,
  created TEXT NOT NULL,
  n INTEGER, b INTEGER, c INTEGER, effect REAL, p REAL, adjusted_alpha REAL,
  edit_distance INTEGER, drift REAL, task_set_hash TEXT, model TEXT,
  scope TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS traces (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session TEXT NOT NULL,
  reply_id TEXT,
  prompt_version TEXT,
  model TEXT NOT NULL,
  provider TEXT NOT NULL,
  prompt_tokens INTEGER,
  completion_tokens INTEGER,
  tool_calls INTEGER NOT NULL,
  duration_ms INTEGER NOT NULL,
  ts TEXT NOT NULL,
  scope TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS traces_session ON traces(session);
CREATE TABLE IF NOT EXISTS signals (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  kind TEXT NOT NULL,
  reply_id TEXT,
  session TEXT,
  rant_id TEXT,
  ts TEXT NOT NULL,
  scope TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS evaluations (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  run TEXT NOT NULL,
  candidate_id TEXT NOT NULL,
  baseline_version TEXT NOT NULL,
  text TEXT NOT NULL,
  verdict TEXT NOT NULL,
  failed TEXT,
  tested INTEGER NOT NULL,
  task_ids TEXT NOT NULL,
  checks TEXT NOT NULL,
  n INTEGER, b INTEGER, c INTEGER, effect REAL, p REAL, adjusted_alpha REAL,
  task_set_hash TEXT, model TEXT,
  ts TEXT NOT NULL,
  scope TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS evaluations_candidate ON evaluations(candidate_id, baseline_version);
CREATE TABLE IF NOT EXISTS reviews (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  candidate_id TEXT NOT NULL,
  action TEXT NOT NULL,
  version TEXT,
  ts TEXT NOT NULL,
  scope TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS reviews_scope ON reviews(scope, candidate_id);
`;

const SCOPED_TABLES = ['prompt_versions', 'traces', 'signals', 'evaluations'] as const;

/**
 * Schema 1 → 2: adds `scope` (existing rows: LEGACY_SCOPE) where it is
 * missing, then the indexes that use it. 2 → 3: `human_override` on prompt
 * versions and the `reviews` table (made by SCHEMA). Decided from the
 * tables, so running it again, or after an older build reset user_version,
 * changes nothing.
 */
export function migrate(db: Database): void {
  const columnsOf = (table: string): unknown[] => db.exec(`PRAGMA table_info(${table})`)[0]?.values.map((row) => row[1]) ?? [];
  for (const table of SCOPED_TABLES) {
    if (!columnsOf(table).includes('scope')) db.exec(`ALTER TABLE ${table} ADD COLUMN scope TEXT NOT NULL DEFAULT ''`);
  }
  if (!columnsOf('prompt_versions').includes('human_override')) db.exec('ALTER TABLE prompt_versions ADD COLUMN human_override TEXT');
  db.exec(`
    CREATE INDEX IF NOT EXISTS prompt_versions_scope ON prompt_versions(scope, seq);
    CREATE INDEX IF NOT EXISTS evaluations_scope ON evaluations(scope, candidate_id, baseline_version);
  `);
}
