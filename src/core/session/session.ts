import * as fs from 'node:fs';
import * as path from 'node:path';
import { appendQueue, isoNow, readJsonLines } from '../jsonl';
import { newId } from '../ids';
import { contentText, type ChatMessage } from '../messages';
import { isSessionRecord, type SessionRecord } from './records';

type Draft<T> = T extends unknown ? Omit<T, 'v' | 'ts'> : never;

export interface SessionSummary {
  readonly id: string;
  readonly title: string;
  readonly updated: string;
  readonly file: string;
}

/**
 * One chat session on disk. The history the model sees is derived from the
 * records: messages in order, minus those a compaction replaced, plus the
 * compaction summaries in their place.
 *
 * A record is in memory (and told to listeners) when `append` returns, and
 * on disk once `flushed()` resolves: the write and its fsync happen off the
 * caller's thread, in order (docs/architecture.md, "Sessions").
 */
export class Session {
  private readonly records: SessionRecord[] = [];
  private readonly listeners = new Set<(record: SessionRecord) => void>();
  /** Lines that could not be read when the session was opened. */
  readonly skippedLines: number;

  private constructor(
    readonly id: string,
    readonly file: string,
    records: SessionRecord[],
    skipped: number,
    private readonly clock: () => Date,
  ) {
    this.records = records;
    this.skippedLines = skipped;
  }

  static create(dir: string, project: string | undefined, clock: () => Date = () => new Date()): Session {
    const id = newId();
    const session = new Session(id, path.join(dir, `${id}.jsonl`), [], 0, clock);
    session.append({ type: 'meta', id, project });
    return session;
  }

  static open(file: string, clock: () => Date = () => new Date()): Session {
    const { records, skipped } = readJsonLines(file);
    const valid: SessionRecord[] = records.filter((r): r is SessionRecord & Record<string, unknown> => isSessionRecord(r));
    const id = path.basename(file, '.jsonl');
    return new Session(id, file, valid, skipped.length + (records.length - valid.length), clock);
  }

  append(draft: Draft<SessionRecord>): SessionRecord {
    const record = { v: 1, ts: isoNow(this.clock), ...draft } as SessionRecord;
    appendQueue.append(this.file, record);
    this.records.push(record);
    for (const listener of this.listeners) listener(record);
    return record;
  }

  /** Calls `listener` with every record appended from now on, in order. Returns the unsubscribe. */
  onAppend(listener: (record: SessionRecord) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves when every record appended so far is on disk; rejects if a write failed. */
  flushed(): Promise<void> {
    return appendQueue.flushed(this.file);
  }

  addMessage(turn: string, message: ChatMessage, id = newId()): string {
    this.append({ type: 'message', id, turn, message });
    return id;
  }

  all(): readonly SessionRecord[] {
    return this.records;
  }

  /** The messages to send after the system prompt. */
  history(): ChatMessage[] {
    return this.historyEntries().map((entry) => entry.message);
  }

  /** History with the record id of each message (summaries carry the compaction id). */
  historyEntries(): Array<{ id: string; message: ChatMessage }> {
    let out: Array<{ id: string; message: ChatMessage }> = [];
    for (const record of this.records) {
      if (record.type === 'message') out.push({ id: record.id, message: record.message });
      if (record.type === 'compaction') {
        // The summary takes the place of the oldest entry it replaces (an
        // earlier summary may be among them).
        const replaced = new Set(record.replaces);
        const at = Math.max(0, out.findIndex((entry) => replaced.has(entry.id)));
        out = out.filter((entry) => !replaced.has(entry.id));
        out.splice(Math.min(at, out.length), 0, { id: record.id, message: record.summary });
      }
    }
    return out;
  }

  lastGateState(): unknown {
    for (let i = this.records.length - 1; i >= 0; i--) {
      const record = this.records[i];
      if (record?.type === 'gate') return record.state;
    }
    return undefined;
  }

  /** The user message of the newest turn that ended in a retryable error, if it is the last thing that happened. */
  retryableTurn(): string | undefined {
    for (let i = this.records.length - 1; i >= 0; i--) {
      const record = this.records[i];
      if (!record || record.type === 'gate' || record.type === 'partial') continue;
      if (record.type === 'notice' && record.retryable && record.turn) return record.turn;
      return undefined;
    }
    return undefined;
  }

  title(): string {
    const meta = this.records.find((r) => r.type === 'meta');
    if (meta?.type === 'meta' && meta.title) return meta.title;
    const firstUser = this.records.find((r) => r.type === 'message' && r.message.role === 'user');
    const text = firstUser?.type === 'message' ? contentText(firstUser.message) : '';
    return text.replace(/\s+/g, ' ').trim().slice(0, 60) || 'New session';
  }
}

export function listSessions(dir: string): SessionSummary[] {
  let names: string[];
  try {
    names = fs.readdirSync(dir).filter((n) => n.endsWith('.jsonl'));
  } catch {
    return [];
  }
  return names
    .map((name) => {
      const file = path.join(dir, name);
      const session = Session.open(file);
      const last = session.all()[session.all().length - 1];
      return { id: session.id, title: session.title(), updated: last?.ts ?? '', file };
    })
    .sort((a, b) => b.updated.localeCompare(a.updated));
}
