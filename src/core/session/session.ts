import * as path from 'node:path';
import { appendQueue, isoNow, readJsonLines } from '../jsonl';
import { newId } from '../ids';
import { contentText, type ChatMessage } from '../messages';
import { redact } from '../redact';
import { isSessionRecord, type SessionRecord } from './records';
import { titleFromText } from './listing';
import { loadSessionRecords } from './load';
import { History, type HistoryEntry } from './history';
import { Listeners, type Subscription } from '../subscription';

type Draft<T> = T extends unknown ? Omit<T, 'v' | 'ts'> : never;

export interface SessionOptions {
  /**
   * Redacts the title written from the first user message (the session file
   * keeps the message as typed; the title is Candor's own record). Default:
   * credential patterns only.
   */
  readonly redactTitle?: (text: string) => string;
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
  private readonly listeners = new Listeners<SessionRecord>();
  /** The history the model sees, kept as records arrive (history.ts). */
  private readonly historyList = new History();
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
    for (const record of records) this.historyList.add(record);
  }

  static create(dir: string, project: string | undefined, clock: () => Date = () => new Date(), options: SessionOptions = {}): Session {
    const id = newId();
    const session = new Session(id, path.join(dir, `${id}.jsonl`), [], 0, clock).configure(options);
    session.append({ type: 'meta', id, project });
    return session;
  }

  static open(file: string, clock: () => Date = () => new Date(), options: SessionOptions = {}): Session {
    const { records, skipped } = readJsonLines(file);
    const valid: SessionRecord[] = records.filter((r): r is SessionRecord & Record<string, unknown> => isSessionRecord(r));
    const id = path.basename(file, '.jsonl');
    return new Session(id, file, valid, skipped.length + (records.length - valid.length), clock).configure(options);
  }

  /** `open`, with the file read off the caller's thread and parsed in slices (docs/architecture.md, "Sessions"). */
  static async load(file: string, clock: () => Date = () => new Date(), options: SessionOptions = {}): Promise<Session> {
    const { records, skipped } = await loadSessionRecords(file);
    return new Session(path.basename(file, '.jsonl'), file, records, skipped, clock).configure(options);
  }

  private redactTitle: (text: string) => string = (text) => redact(text);
  /** Whether the session has its title, or a user message to take it from; known once asked. */
  private titled: boolean | undefined;

  private configure(options: SessionOptions): this {
    if (options.redactTitle) this.redactTitle = options.redactTitle;
    return this;
  }

  append(draft: Draft<SessionRecord>): SessionRecord {
    if (draft.type === 'message' && draft.message.role === 'user' && !this.hasTitle()) this.writeTitle(contentText(draft.message));
    const record = { v: 1, ts: isoNow(this.clock), ...draft } as SessionRecord;
    appendQueue.append(this.file, record);
    this.records.push(record);
    this.historyList.add(record);
    this.listeners.emit(record);
    return record;
  }

  /**
   * The title is a record of its own, written just before the first user
   * message: near the start of the file, where listing sessions reads it
   * without reading the rest (docs/architecture.md, "Sessions").
   */
  private writeTitle(text: string): void {
    this.titled = true;
    const title = titleFromText(this.redactTitle(text));
    if (title !== '') this.append({ type: 'meta', id: this.id, title });
  }

  private hasTitle(): boolean {
    this.titled ??= this.records.some((r) => (r.type === 'meta' && !!r.title) || (r.type === 'message' && r.message.role === 'user'));
    return this.titled;
  }

  /** Calls `listener` with every record appended from now on, in order, until the subscription is disposed. */
  onAppend(listener: (record: SessionRecord) => void): Subscription {
    return this.listeners.add(listener);
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

  /** The messages to send after the system prompt: the live list, kept as records arrive. */
  history(): readonly ChatMessage[] {
    return this.historyList.messageList;
  }

  /** History with the record id of each message (summaries carry the compaction id). */
  historyEntries(): readonly HistoryEntry[] {
    return this.historyList.list;
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
    const meta = this.records.find((r) => r.type === 'meta' && !!r.title);
    if (meta?.type === 'meta' && meta.title) return meta.title;
    const firstUser = this.records.find((r) => r.type === 'message' && r.message.role === 'user');
    const text = firstUser?.type === 'message' ? contentText(firstUser.message) : '';
    return titleFromText(text) || 'New session';
  }
}
