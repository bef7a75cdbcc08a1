import { errorMessage } from '../errorMessage';
import type { Logger } from '../log';
import type { SecretSet } from '../redact';
import type { Session } from '../session/session';
import { CompactionError, planCompaction, shouldCompact } from '../context/compaction';
import type { Identity } from '../modelIdentity';
import type { ContextGate, GateProjection } from '../context/gate';
import type { PayloadMeasure } from '../context/ledger';
import type { Compactor } from './compactor';
import type { ChatSettings } from './ports';
import { isKindError } from '../kindError';

export interface SendGateDeps {
  readonly session: Session;
  readonly gate: ContextGate;
  readonly compactor: Compactor;
  readonly log: Logger;
  readonly secrets: SecretSet;
  readonly notice: (turn: string, level: 'info' | 'warning' | 'error', text: string, retryable?: boolean) => void;
  /** Writes the gate's state to the session file. */
  readonly persistGate: () => void;
}

export interface SendCheck {
  readonly turn: string;
  readonly identity: Identity;
  readonly settings: ChatSettings;
  readonly signal: AbortSignal;
  /** The payload as it stands: called again after a compaction. */
  readonly measure: () => PayloadMeasure;
}

/** `send: false`: the request must not go out, and the chat has said why. */
export type SendDecision = { readonly send: true; readonly measure: PayloadMeasure } | { readonly send: false };

/**
 * The context gate on the send path of every request (design §1,
 * "Compaction"): project; past the threshold, compact at most once, and
 * only when something older than the kept turns is left (a summary is not a
 * turn, so it takes a new turn to summarize again: one compaction per
 * growth, never one per request); still over the threshold means one
 * warning per turn; over the whole window means the request is not sent.
 */
export class SendGate {
  private warnedTurn: string | undefined;
  /** The newest count a provider stated in an overflow error, with the estimate of the payload it counted (see noteOverflow). */
  private measured: { readonly identity: Identity; readonly real: number; readonly est: number } | undefined;

  constructor(private readonly deps: SendGateDeps) {}

  async check(input: SendCheck): Promise<SendDecision> {
    const { turn, identity, settings } = input;
    // An estimate may make Candor compact early, never late: the threshold is tested against the band's upper edge,
    // and a request is refused only when even the lower edge passes the window (docs/architecture.md, "Bands").
    const over = (projection: GateProjection): boolean => shouldCompact(projection.projected + projection.band, settings.contextWindow, settings.thresholdPercent);
    let measure = input.measure();
    let projection = this.deps.gate.project(identity, measure);
    if (!over(projection)) return { send: true, measure };

    const plan = planCompaction(this.deps.session.history(), settings.keepTurns);
    if (plan.cut === 0) {
      this.warnOnce(turn, `The context is above the compaction threshold (${settings.thresholdPercent}%), but the newest ${turns(settings.keepTurns)} alone are that large: there is nothing older to summarize. Consider a new session, or lower candor.compaction.keepTurns.`);
    } else {
      await this.compact(turn, settings.keepTurns, input.signal);
      measure = input.measure();
      projection = this.deps.gate.project(identity, measure);
      // At most one compaction per request: warn, never summarize twice.
      if (over(projection)) this.warnOnce(turn, `Still above the compaction threshold right after compacting: the newest ${turns(settings.keepTurns)} alone are that large. Consider a new session, or lower candor.compaction.keepTurns.`);
    }
    const projected = projection.projected;
    const lower = Math.max(projected - projection.band, this.measuredFloor(identity, projection.estNow));
    if (settings.contextWindow > 0 && lower > settings.contextWindow) {
      this.deps.log.warn(`request not sent: at least ${lower} (projected ${projected}) > window ${settings.contextWindow}`);
      this.deps.notice(
        turn,
        'error',
        `Not sent: this request needs ${lower !== projected ? `at least ${lower.toLocaleString('en-US')}` : `about ${projected.toLocaleString('en-US')}`} tokens, more than the model's context window of ${settings.contextWindow.toLocaleString('en-US')}, even after compacting. Start a new session (Candor: New Session), or lower candor.compaction.keepTurns and run Candor: Compact Context, then press Retry.`,
        true,
      );
      return { send: false };
    }
    return { send: true, measure };
  }

  /**
   * A provider refused a payload as too large and said how many tokens it
   * counted: a measurement. Until a compaction replaces history, a later
   * payload of the same identity is at least that count plus the estimate of
   * what changed since, so a Retry of the same request is refused here, with
   * the provider's own number, rather than sent to be refused again.
   */
  noteOverflow(identity: Identity, real: number | null, est: number): void {
    this.measured = real === null ? undefined : { identity, real, est };
  }

  private measuredFloor(identity: Identity, estNow: number): number {
    const m = this.measured;
    if (!m || m.identity.provider !== identity.provider || m.identity.model !== identity.model) return 0;
    return m.real + (estNow - m.est);
  }

  private async compact(turn: string, keepTurns: number, signal: AbortSignal): Promise<void> {
    this.deps.notice(turn, 'info', 'The context passed the compaction threshold: summarizing older turns…');
    try {
      const result = await this.deps.compactor.compact(this.deps.session, keepTurns, signal);
      // Only a compaction that replaced messages makes the next request's missing anchor legitimate.
      if (result.replaced > 0) {
        this.measured = undefined;
        this.deps.gate.afterCompaction(result.replaced);
        this.deps.persistGate();
      }
      this.deps.log.info(`compaction: replaced ${result.replaced} messages`);
    } catch (err) {
      if (isKindError(err, CompactionError, 'cancelled')) return;
      // A failed summary leaves the history as it was; the request goes on.
      this.deps.log.warn(this.deps.secrets.redact(`compaction failed: ${String(err)}`));
      this.deps.notice(turn, 'warning', `Compaction failed, the history is unchanged: ${errorMessage(err)}`);
    }
  }

  /** One warning per turn, however many requests the turn makes. */
  private warnOnce(turn: string, text: string): void {
    if (this.warnedTurn === turn) return;
    this.warnedTurn = turn;
    this.deps.notice(turn, 'warning', text);
  }
}

function turns(n: number): string {
  return n === 1 ? 'turn' : `${n} turns`;
}
