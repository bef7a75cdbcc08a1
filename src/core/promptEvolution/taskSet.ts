import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseJsonLines } from '../jsonl';
import { isRecord } from '../text';

/** `.candor/evals/*.jsonl`: one task per line. */

export type ScorerKind = 'exact' | 'json' | 'judge';

export interface EvalTask {
  readonly id: string;
  /** The user message sent under each prompt. */
  readonly input: string;
  /** exact: the reply (trimmed); json: the fields expected; judge: an optional reference answer. */
  readonly expected: unknown;
  readonly scorer: ScorerKind;
  /** judge only: what a good answer does. */
  readonly rubric?: string;
}

export type SkipReason = 'not-json' | 'not-object' | 'truncated' | 'invalid-task' | 'duplicate-id';

export interface SkippedTask {
  readonly file: string;
  readonly lineNumber: number;
  readonly reason: SkipReason;
  readonly detail: string;
}

export interface TaskSet {
  readonly tasks: readonly EvalTask[];
  readonly skipped: readonly SkippedTask[];
  /** sha256 of the normalized tasks, sorted by id: the same tasks give the same hash, whatever the files. */
  readonly hash: string;
  readonly files: readonly string[];
}

/** Reads every `*.jsonl` file of a folder (a missing folder is an empty set). */
export function readTaskSets(folder: string): TaskSet {
  let names: string[];
  try {
    names = fs.readdirSync(folder).filter((name) => name.endsWith('.jsonl')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') names = [];
    else throw err;
  }
  return parseTaskSets(names.map((name) => ({ file: path.join(folder, name), text: fs.readFileSync(path.join(folder, name), 'utf8') })));
}

/** Parses task files; corrupt lines and invalid or repeated tasks are skipped and counted. */
export function parseTaskSets(files: readonly { readonly file: string; readonly text: string }[]): TaskSet {
  const tasks: EvalTask[] = [];
  const skipped: SkippedTask[] = [];
  const ids = new Set<string>();
  for (const { file, text } of files) {
    const lineNumbers = recordLineNumbers(text);
    const read = parseJsonLines(text);
    for (const skip of read.skipped) skipped.push({ file, lineNumber: skip.lineNumber, reason: skip.reason, detail: skip.preview });
    read.records.forEach((record, index) => {
      const lineNumber = lineNumbers[index] ?? 0;
      const task = toTask(record);
      if (typeof task === 'string') skipped.push({ file, lineNumber, reason: 'invalid-task', detail: task });
      else if (ids.has(task.id)) skipped.push({ file, lineNumber, reason: 'duplicate-id', detail: task.id });
      else {
        ids.add(task.id);
        tasks.push(task);
      }
    });
  }
  return { tasks, skipped, hash: taskSetHash(tasks), files: files.map((f) => f.file) };
}

/** The line number of each record parseJsonLines returns (it skips blank and bad lines). */
function recordLineNumbers(text: string): number[] {
  const numbers: number[] = [];
  text.split('\n').forEach((raw, index) => {
    const line = raw.replace(/\r$/, '').trim();
    if (line === '') return;
    try {
      if (isRecord(JSON.parse(line))) numbers.push(index + 1);
    } catch {
      // counted as skipped by parseJsonLines
    }
  });
  return numbers;
}

/** A valid task, or why not. */
function toTask(record: Record<string, unknown>): EvalTask | string {
  const { id, input, expected, scorer, rubric } = record;
  if (typeof id !== 'string' || id.trim() === '') return 'id must be a non-empty string';
  if (typeof input !== 'string') return `${id}: input must be a string`;
  if (scorer !== 'exact' && scorer !== 'json' && scorer !== 'judge') return `${id}: scorer must be "exact", "json" or "judge"`;
  if (scorer === 'exact' && !['string', 'number', 'boolean'].includes(typeof expected)) return `${id}: exact needs a string, number or boolean expected`;
  if (scorer === 'json' && !(isRecord(expected) && Object.keys(expected).length > 0)) return `${id}: json needs an expected object with at least one field`;
  if (scorer === 'judge' && (typeof rubric !== 'string' || rubric.trim() === '')) return `${id}: judge needs a rubric`;
  if (rubric !== undefined && typeof rubric !== 'string') return `${id}: rubric must be a string`;
  return rubric === undefined ? { id, input, expected, scorer } : { id, input, expected, scorer, rubric };
}

export function taskSetHash(tasks: readonly EvalTask[]): string {
  const lines = [...tasks]
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    .map((task) => canonicalJson({ id: task.id, input: task.input, expected: task.expected ?? null, scorer: task.scorer, rubric: task.rubric ?? null }));
  return createHash('sha256').update(lines.join('\n')).digest('hex');
}

/** JSON with object keys sorted at every depth. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value).filter((k) => value[k] !== undefined).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
