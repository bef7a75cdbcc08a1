import * as path from 'node:path';
import { Session, type SessionOptions } from './session';
import { TranscriptPages, type FindDirection } from './pages';
import { newestEntries, PAGE_ENTRIES, readSessionTail, type TranscriptPage } from './tail';
import { sessionTitle } from './listing';
import type { TranscriptEntry } from './transcript';

/** Entries shown above a found one, so that it does not sit at the very top of what was loaded. */
const FIND_CONTEXT = 20;

/** What the chat shows first of a session. */
export interface FirstPage extends TranscriptPage {
  readonly title: string;
}

export interface FindAnswer {
  readonly hit: string | null;
  readonly ordinal: number;
  readonly total: number;
  /** The entries between the hit and the oldest one the view has, to put before it. */
  readonly older: readonly TranscriptEntry[];
  readonly more: boolean;
}


/**
 * A session as the chat opens it (docs/architecture.md, "Sessions"). Its
 * newest entries come from the end of the file at once; the whole file is
 * parsed in the background, for the history the model needs. The whole
 * transcript is mapped once the file is, at the first need, and kept
 * current after: the one live mapping. Nothing waits for more than it needs.
 */
export class OpenedSession {
  /** Settles when every record is in memory; rejects if the file cannot be read. */
  readonly loaded: Promise<{ readonly session: Session }>;
  private done: Session | undefined;
  private pagesOf: TranscriptPages | undefined;
  private disposed = false;

  private constructor(
    readonly id: string,
    readonly file: string,
    load: Promise<Session>,
  ) {
    this.loaded = load.then((session) => {
      this.done = session;
      return { session };
    });
  }

  /** Opens a session file: its records load in the background. */
  static open(file: string, options: SessionOptions = {}, clock?: () => Date): OpenedSession {
    const session = Session.load(file, clock, options);
    return new OpenedSession(path.basename(file, '.jsonl'), file, session);
  }

  /** A session already in memory (a new one). */
  static of(session: Session): OpenedSession {
    return new OpenedSession(session.id, session.file, Promise.resolve(session));
  }

  /** The session, once loaded. */
  get session(): Session | undefined {
    return this.done;
  }

  /**
   * The newest entries: from memory once the session is loaded, else read
   * backwards from the end of the file, which costs the same however long
   * the session is.
   */
  firstPage(count = PAGE_ENTRIES): FirstPage & { readonly skippedLines: number } {
    // In memory, appends not yet on disk included.
    if (this.done) return { ...newestEntries(this.done.all(), count), title: this.done.title(), skippedLines: 0 };
    const tail = readSessionTail(this.file, count);
    return { entries: tail.entries, more: tail.more, title: sessionTitle(this.file) ?? 'New session', skippedLines: tail.skippedLines };
  }

  /** The page before the entry `before`; none older when the session has no such entry. */
  async older(before: string, count = PAGE_ENTRIES): Promise<TranscriptPage> {
    const pages = await this.pages();
    return pages.before(before, count) ?? { entries: [], more: false };
  }

  /**
   * Finds the next entry holding `query`; `shown` gives an entry's text as
   * the chat shows it (redacted). The answer carries the entries from a
   * little above the hit up to `oldest`, the oldest entry the view has.
   */
  async find(query: string, from: string | undefined, direction: FindDirection, oldest: string | undefined, shown: (text: string) => string): Promise<FindAnswer> {
    const pages = await this.pages();
    const result = pages.find(query, from, direction, shown);
    if (!result.hit) return { hit: null, ordinal: 0, total: 0, older: [], more: false };
    const viewStart = (oldest === undefined ? undefined : pages.indexOf(oldest)) ?? pages.size;
    const page = result.hit.index < viewStart ? pages.range(Math.max(0, result.hit.index - FIND_CONTEXT), viewStart) : { entries: [], more: false };
    return { hit: result.hit.id, ordinal: result.ordinal, total: result.total, older: page.entries, more: page.more };
  }

  /**
   * The whole transcript: the one live mapping of the session's records to
   * what the chat shows, mapped at the first need (the chat view following
   * it, a page back, a find) and kept current after. None before the session
   * is loaded, or once it is closed.
   */
  liveTranscript(): TranscriptPages | undefined {
    if (!this.done || this.disposed) return undefined;
    this.pagesOf ??= new TranscriptPages(this.done);
    return this.pagesOf;
  }

  private async pages(): Promise<TranscriptPages> {
    await this.loaded;
    const pages = this.liveTranscript();
    if (!pages) throw new Error(`session ${this.id} is no longer open`);
    return pages;
  }

  /** Stops following the session's appends. */
  dispose(): void {
    this.disposed = true;
    this.pagesOf?.dispose();
  }
}

