import { ContextGate, isGateState, textModelSummarizer, type DriftLog } from '../context';
import type { TextModel } from '../provider/chatModel';
import type { Session } from '../session/session';
import { sessionCompactor } from './compactor';
import { Conversation } from './conversation';
import type { ConversationDeps } from './ports';

/** What a conversation takes from outside the core; the gate and the compactor it builds itself. */
export interface ConversationPorts extends Omit<ConversationDeps, 'session' | 'gate' | 'driftTotals' | 'compactor' | 'recordOverflow'> {
  /**
   * `drift.jsonl` of the data folder: where the gate writes anchor losses and
   * drifts, and whose totals the gauge shows. One for every session of a
   * window, so the file is read whole once.
   */
  readonly driftLog: DriftLog;
  /** The model compaction asks for its summaries. */
  readonly summaryModel: TextModel;
}

/**
 * A session's conversation, wired as production runs it (docs/architecture.md,
 * "Context gate"): the gate restored from the session's last gate record (a
 * state it cannot read starts afresh) and writing to the drift log, and
 * compaction recorded in the session, summarized by `summaryModel`.
 */
export function openConversation(session: Session, ports: ConversationPorts): Conversation {
  const { driftLog, summaryModel, ...deps } = ports;
  const stored = session.lastGateState();
  return new Conversation({
    ...deps,
    session,
    gate: new ContextGate({ session: session.id, sink: driftLog, state: isGateState(stored) ? stored : undefined }),
    driftTotals: () => driftLog.readDrift().summary,
    recordOverflow: (event) => driftLog.record(event),
    // A summary's reply is bounded by the window in force when it is asked for (summarizer.ts).
    compactor: sessionCompactor(textModelSummarizer(summaryModel, () => deps.settings().contextWindow)),
  });
}
