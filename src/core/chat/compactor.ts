import type { Session } from '../session/session';
import { compactHistory, type Summarize } from '../context/compaction';
import { newId } from '../ids';

/** Compaction as the chat loop asks for it: on the send path past the threshold, and on demand. */
export interface Compactor {
  /** Replaces older turns by a summary; throws and leaves the session as it was on failure. */
  compact(session: Session, keepTurns: number, signal: AbortSignal): Promise<{ replaced: number }>;
}

/**
 * Compaction of a session on disk: the summary is recorded as a compaction
 * record naming the messages it replaces. The records of the replaced
 * messages stay in the file (the transcript still shows them); only the
 * history sent to the model changes. A failed summary writes nothing.
 */
export function sessionCompactor(summarize: Summarize): Compactor {
  return {
    async compact(session: Session, keepTurns: number, signal: AbortSignal) {
      // A copy: the session's list is live, and the summary takes a while.
      const entries = [...session.historyEntries()];
      const result = await compactHistory(entries.map((e) => e.message), keepTurns, summarize, signal);
      const replaces = entries.slice(0, result.summarizedCount).map((e) => e.id);
      const summary = result.history[0];
      if (!summary || replaces.length === 0) return { replaced: 0 };
      session.append({ type: 'compaction', id: newId(), replaces, summary });
      return { replaced: replaces.length };
    },
  };
}
