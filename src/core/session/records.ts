import type { ChatMessage } from '../messages';

/**
 * A session is a JSON-lines file, `<dataDir>/sessions/<id>.jsonl`, appended
 * record by record so a crash or a second window never loses what was written.
 * Every record carries `v: 1` and an ISO `ts`.
 */

export interface MetaRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'meta';
  readonly id: string;
  readonly title?: string;
  readonly project?: string;
}

/** A message in the history sent to the model. */
export interface MessageRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'message';
  readonly id: string;
  readonly turn: string;
  readonly message: ChatMessage;
}

/** A reply that failed part-way: shown in the transcript, never sent again. */
export interface PartialRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'partial';
  readonly id: string;
  readonly turn: string;
  readonly text: string;
}

/** Something the user should see in the transcript: an error, a retry, a warning. */
export interface NoticeRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'notice';
  readonly id: string;
  readonly turn?: string;
  readonly level: 'info' | 'warning' | 'error';
  readonly text: string;
  /** Set on the error of a turn that can be sent again. */
  readonly retryable?: boolean;
}

/** The older messages listed were replaced by `summary`. */
export interface CompactionRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'compaction';
  readonly id: string;
  readonly replaces: readonly string[];
  readonly summary: ChatMessage;
}

/** The context gate's state after a request, so a reload keeps the anchor. */
export interface GateRecord {
  readonly v: 1;
  readonly ts: string;
  readonly type: 'gate';
  readonly state: unknown;
}

export type SessionRecord = MetaRecord | MessageRecord | PartialRecord | NoticeRecord | CompactionRecord | GateRecord;

const TYPES = new Set(['meta', 'message', 'partial', 'notice', 'compaction', 'gate']);

export function isSessionRecord(value: unknown): value is SessionRecord {
  if (value === null || typeof value !== 'object') return false;
  const record = value as { v?: unknown; type?: unknown; id?: unknown };
  return record.v === 1 && typeof record.type === 'string' && TYPES.has(record.type);
}
