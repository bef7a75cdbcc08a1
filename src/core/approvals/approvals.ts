import { newId } from '../ids';
import type { ApprovalAsk, ApprovalDecision, ApprovalRecord } from '../session/records';
import type { Session } from '../session/session';

/** The user's answer, as the chat's buttons give it: Run (or Allow), Deny, Always Allow (maybe with an edited prefix), Run in Terminal. */
export interface ApprovalAnswer {
  readonly decision: 'run' | 'deny' | 'always' | 'terminal';
  readonly prefix?: string;
}

/** How a wait ended: an answer, or the turn stopped first. */
export type ApprovalOutcome = ApprovalAnswer | { readonly decision: 'stopped' };

/** What a record of the call may change after it was asked. */
export type ApprovalUpdate = Partial<Pick<ApprovalRecord, 'decision' | 'auto' | 'output' | 'outcome'>>;

interface Waiting {
  readonly session: Session;
  readonly resolve: (outcome: ApprovalOutcome) => void;
}

/**
 * Calls that wait for the user (docs/architecture.md, "Approvals"). Each
 * is a record in its session, written again under the same id as it is
 * answered, runs and ends, so a reload shows what happened. An answer names
 * the id; one that waits no more (its turn stopped, the window reloaded)
 * is refused, never applied to something else.
 */
export class Approvals {
  readonly #waiting = new Map<string, Waiting>();
  /** The newest record of each call this broker wrote, to write the next from. */
  readonly #latest = new Map<string, ApprovalRecord>();

  /** Writes the call as pending, and waits for the user's answer or the turn's end. */
  ask(session: Session, turn: string, ask: ApprovalAsk, signal: AbortSignal): { readonly id: string; readonly outcome: Promise<ApprovalOutcome> } {
    const id = newId();
    this.#write(session, { type: 'approval', id, turn, ask, decision: 'pending' });
    const outcome = new Promise<ApprovalOutcome>((resolve) => {
      if (signal.aborted) return resolve({ decision: 'stopped' });
      const onAbort = (): void => {
        this.#waiting.delete(id);
        this.update(session, id, { decision: 'stopped' });
        resolve({ decision: 'stopped' });
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#waiting.set(id, {
        session,
        resolve: (answer) => {
          signal.removeEventListener('abort', onAbort);
          resolve(answer);
        },
      });
    });
    return { id, outcome };
  }

  /** A call allowed without asking (what allowed it in `auto`): written as allowed from the start. */
  allowed(session: Session, turn: string, ask: ApprovalAsk, auto: string): string {
    const id = newId();
    this.#write(session, { type: 'approval', id, turn, ask, decision: 'allowed', auto });
    return id;
  }

  /** The user answered in the chat. False when that call waits no more. */
  answer(id: string, answer: ApprovalAnswer): boolean {
    const waiting = this.#waiting.get(id);
    if (!waiting) return false;
    this.#waiting.delete(id);
    const decision: ApprovalDecision = answer.decision === 'deny' ? 'denied' : answer.decision === 'terminal' ? 'terminal' : 'allowed';
    const prefix = answer.prefix;
    this.update(waiting.session, id, { decision, ...(answer.decision === 'always' ? { auto: `Always Allow ${JSON.stringify(prefix ?? this.#commandOf(id))}` } : {}) });
    waiting.resolve(answer);
    return true;
  }

  /** Writes the call's record again with `update` applied. */
  update(session: Session, id: string, update: ApprovalUpdate): void {
    const last = this.#latest.get(id);
    if (!last) return;
    const { v: _v, ts: _ts, ...draft } = last;
    this.#write(session, { ...draft, ...update });
  }

  /**
   * A session opened: calls it shows as pending wait for no one (the window
   * that asked is gone). Each is written as stopped, so the chat shows no
   * button that does nothing.
   */
  settleOrphans(session: Session): void {
    const latest = new Map<string, ApprovalRecord>();
    for (const record of session.all()) if (record.type === 'approval') latest.set(record.id, record);
    for (const record of latest.values()) {
      if (record.decision !== 'pending' || this.#waiting.has(record.id)) continue;
      const { v: _v, ts: _ts, ...draft } = record;
      this.#write(session, { ...draft, decision: 'stopped', outcome: 'Not answered before the window closed; the model was told it did not run.' });
    }
  }

  #commandOf(id: string): string {
    const ask = this.#latest.get(id)?.ask;
    return ask?.kind === 'command' ? ask.command : ask?.kind === 'mcp' ? `${ask.server} ${ask.tool}` : '';
  }

  #write(session: Session, draft: Omit<ApprovalRecord, 'v' | 'ts'>): void {
    const record = session.append(draft) as ApprovalRecord;
    this.#latest.set(record.id, record);
  }
}
