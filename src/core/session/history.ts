import { withSendableCalls, type ChatMessage } from '../messages';
import type { SessionRecord } from './records';

/** A message of the history and the record it came from (a summary carries its compaction's id). */
export interface HistoryEntry {
  readonly id: string;
  readonly message: ChatMessage;
}

/**
 * The history the model sees, kept as records arrive instead of rebuilt on
 * every call: messages in order, minus those a compaction replaced, with the
 * summary in the place of the oldest entry it replaces (an earlier summary
 * may be among them). A message costs a push; only a compaction walks the
 * history, once, when its record arrives. A tool call whose arguments are
 * not a JSON object (cut at the output limit, written by a version that
 * kept it as it came) is repaired here, as it is read.
 */
export class History {
  private entries: HistoryEntry[] = [];
  private messages: ChatMessage[] = [];

  add(record: SessionRecord): void {
    if (record.type === 'message') {
      // A call a session of an older version kept malformed goes back as a cut call: no server takes it as it came.
      const message = withSendableCalls(record.message);
      this.entries.push({ id: record.id, message });
      this.messages.push(message);
    } else if (record.type === 'compaction') {
      const replaced = new Set(record.replaces);
      const at = Math.max(0, this.entries.findIndex((entry) => replaced.has(entry.id)));
      const kept = this.entries.filter((entry) => !replaced.has(entry.id));
      kept.splice(Math.min(at, kept.length), 0, { id: record.id, message: record.summary });
      this.entries = kept;
      this.messages = kept.map((entry) => entry.message);
    }
  }

  /** The live list, not a copy: read it, do not keep it across appends. */
  get list(): readonly HistoryEntry[] {
    return this.entries;
  }

  get messageList(): readonly ChatMessage[] {
    return this.messages;
  }
}

/** The id of the compaction the history descends from ('' before the first): names its epoch for the context ledger. */
export function lastCompaction(records: readonly SessionRecord[]): string {
  for (let i = records.length - 1; i >= 0; i--) {
    const record = records[i];
    if (record?.type === 'compaction') return record.id;
  }
  return '';
}
