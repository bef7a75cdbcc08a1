import { Transcript, type TranscriptEntry } from './transcript';
import type { SessionRecord } from './records';
import type { TranscriptPage } from './tail';
import { Listeners, type Subscription } from '../subscription';

/** What the pages read of a session: its records so far, and each one appended after. */
export interface RecordSource {
  all(): readonly SessionRecord[];
  onAppend(listener: (record: SessionRecord) => void): Subscription;
}

export type FindDirection = 'older' | 'newer';

export interface FindResult {
  /** The entry found, and where it is. */
  readonly hit?: { readonly id: string; readonly index: number };
  /** Which match the view lands on, counted from the oldest (1-based) over every occurrence, and how many there are. */
  readonly ordinal: number;
  readonly total: number;
}

/**
 * A session's whole transcript, mapped once and kept current as records are
 * appended: the one live mapping from the session's records to what the chat
 * shows (docs/architecture.md, "Sessions"). The chat view follows it
 * (`onEntry`), and pages back through it and finds in it without reading the
 * file again. The mapping is `Transcript`'s: the pages are what a reload
 * would show.
 */
export class TranscriptPages {
  private readonly transcript = new Transcript();
  private readonly listeners = new Listeners<TranscriptEntry>();
  private readonly following: Subscription;

  constructor(source: RecordSource) {
    for (const record of source.all()) this.transcript.add(record);
    this.following = source.onAppend((record) => {
      for (const entry of this.transcript.add(record)) this.listeners.emit(entry);
    });
  }

  /**
   * Calls `listener` with every entry an appended record adds or changes, in
   * order (an entry under an id already shown replaces it), until the
   * subscription is disposed.
   */
  onEntry(listener: (entry: TranscriptEntry) => void): Subscription {
    return this.listeners.add(listener);
  }

  get size(): number {
    return this.transcript.list.length;
  }

  indexOf(id: string): number | undefined {
    return this.transcript.indexOf(id);
  }

  /** The newest `count` entries. */
  newest(count: number): TranscriptPage {
    const size = this.size;
    return this.range(Math.max(0, size - count), size);
  }

  /** Up to `count` entries just older than the entry `id`; undefined when no entry has that id. */
  before(id: string, count: number): TranscriptPage | undefined {
    const at = this.indexOf(id);
    return at === undefined ? undefined : this.range(Math.max(0, at - count), at);
  }

  /** Entries from index `from` up to, not including, `to`. */
  range(from: number, to: number): TranscriptPage {
    return { entries: this.transcript.list.slice(from, to), more: from > 0 };
  }

  /**
   * The next entry whose text holds `query` (any case), going `direction`
   * from the entry `from` (from the newest end when absent), wrapping around.
   * Every occurrence counts: `total` is the number of matches in the
   * session, and `ordinal` that of the match the view lands on in the entry
   * found (its last going older, its first going newer), so that the view
   * can step through the matches of one entry by itself.
   * `shown` gives an entry's text as the chat shows it (redacted): a match
   * only in what the chat never shows is no match.
   */
  find(query: string, from: string | undefined, direction: FindDirection, shown: (text: string) => string): FindResult {
    if (query.trim() === '') return { ordinal: 0, total: 0 };
    const source = query.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const pattern = new RegExp(source, 'i');
    const every = new RegExp(source, 'gi');
    const matches: number[] = [];
    const counts: number[] = [];
    const list = this.transcript.list;
    list.forEach((entry, index) => {
      const text = searchText(entry);
      const count = pattern.test(text) ? (shown(text).match(every) ?? []).length : 0;
      if (count > 0) {
        matches.push(index);
        counts.push(count);
      }
    });
    if (matches.length === 0) return { ordinal: 0, total: 0 };
    const at = from === undefined ? undefined : this.indexOf(from);
    let pick: number;
    if (direction === 'older') {
      const older = at === undefined ? matches.length - 1 : lastBelow(matches, at);
      pick = older === -1 ? matches.length - 1 : older;
    } else {
      const newer = at === undefined ? 0 : lastBelow(matches, at + 1) + 1;
      pick = newer >= matches.length ? 0 : newer;
    }
    const index = matches[pick] as number;
    const before = counts.slice(0, pick).reduce((sum, n) => sum + n, 0);
    const ordinal = direction === 'older' ? before + (counts[pick] as number) : before + 1;
    return { hit: { id: (list[index] as TranscriptEntry).id, index }, ordinal, total: counts.reduce((sum, n) => sum + n, 0) };
  }

  /** Stops following the session: no more appends are mapped, and no listener is told. */
  dispose(): void {
    this.following.dispose();
    this.listeners.clear();
  }
}

/** The text of an entry that find looks in: what the chat shows of it, labels aside. */
export function searchText(entry: TranscriptEntry): string {
  switch (entry.kind) {
    case 'tool-call':
      return `${entry.name} ${entry.args}`;
    case 'tool-result':
      return `${entry.name} ${entry.text}`;
    case 'approval':
      return entry.ask.kind === 'command' ? `${entry.ask.command} ${entry.output ?? ''}` : `${entry.ask.server} ${entry.ask.tool} ${entry.ask.args}`;
    case 'proposal':
      return `${entry.path} ${entry.diff}`;
    default:
      return entry.text;
  }
}

/** The position in `sorted` of its last value below `limit`, or -1. */
function lastBelow(sorted: readonly number[], limit: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((sorted[mid] as number) < limit) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
