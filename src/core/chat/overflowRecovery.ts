import { errorMessage } from '../errorMessage';
import type { Logger } from '../log';
import type { Session } from '../session/session';
import { planCompaction } from '../context/compaction';
import type { Identity } from '../modelIdentity';
import type { OverflowEvent } from '../context/driftEvents';
import type { ContextGate } from '../context/gate';
import type { PayloadMeasure } from '../context/ledger';
import type { Overflow } from '../provider/overflow';
import type { Compactor } from './compactor';
import type { ChatSettings } from './ports';

export interface OverflowDeps {
  readonly session: Session;
  readonly gate: ContextGate;
  readonly compactor: Compactor;
  readonly settings: () => ChatSettings;
  readonly log: Logger;
  readonly notice: (turn: string, level: 'info' | 'warning' | 'error', text: string, retryable?: boolean) => void;
  readonly persistGate: () => void;
  readonly recordOverflow?: (event: OverflowEvent) => void;
  readonly onOverflow?: (identity: Identity, overflow: Overflow) => Promise<void>;
}

export interface OverflowInput {
  readonly turn: string;
  readonly identity: Identity;
  readonly overflow: Overflow;
  /** The refused request: Candor's projection of it, and the local estimate of its payload. */
  readonly projected: number;
  readonly est: number;
  /** It was already the one retry after an overflow. */
  readonly retried: boolean;
  readonly signal: AbortSignal;
  /** The payload as it stands: measured again after the compaction. */
  readonly measure: () => PayloadMeasure;
}

const n = (x: number): string => x.toLocaleString('en-US');

/**
 * A provider refused a request as too large for its window (design §1,
 * "Real servers"): a measurement, then a recovery, never a loop. The window
 * it states is taken (the host reads the server's window again too), the
 * history is compacted once, and the request goes once more only if it now
 * fits: `real + (est_retry − est) ≤ window` with the server's count, else the
 * projection. Otherwise the chat says so with the numbers and the turn
 * stops. Either way one `overflow` event goes to drift.jsonl. Returns
 * whether to send the request again.
 */
export async function recoverFromOverflow(deps: OverflowDeps, input: OverflowInput): Promise<boolean> {
  const { overflow, identity, turn } = input;
  await deps.onOverflow?.(identity, overflow).catch((err: unknown) => deps.log.warn(`window after an overflow: ${errorMessage(err)}`));
  const settings = deps.settings();
  const window = overflow.window ?? settings.contextWindow;
  const said = whatTheServerSaid(overflow, input.projected);
  deps.log.warn(`overflow (${overflow.parser}): real ${overflow.real ?? 'not said'}, window ${overflow.window ?? 'not said'}, projected ${input.projected}, est ${input.est}`);
  const stop = (why: string): false => {
    record(deps, input, 'stopped');
    deps.notice(turn, 'error', `The provider refused the request as too large: ${said}. ${why} Start a new session (Candor: New Session), or lower candor.compaction.keepTurns and run Candor: Compact Context, then press Retry.`, true);
    return false;
  };
  if (input.retried) return stop('That was already the one retry after compacting, so it was not sent again.');
  if (planCompaction(deps.session.history(), settings.keepTurns).cut === 0) {
    return stop(`There is nothing older than the newest ${settings.keepTurns === 1 ? 'turn' : `${settings.keepTurns} turns`} to summarize, so it was not sent again.`);
  }
  deps.notice(turn, 'info', `The provider refused the request as too large: ${said}. Summarizing older turns…`);
  let replaced: number;
  try {
    replaced = (await deps.compactor.compact(deps.session, settings.keepTurns, input.signal)).replaced;
  } catch (err) {
    return stop(`Compacting failed, the history is unchanged (${errorMessage(err)}), so it was not sent again.`);
  }
  if (replaced === 0) return stop('Nothing was summarized, so it was not sent again.');
  deps.gate.afterCompaction(replaced);
  deps.persistGate();
  const after = deps.gate.project(identity, input.measure());
  // Anchored on the server's own count when it gave one: what compaction removed, by the estimate's difference.
  const need = (overflow.real !== null ? overflow.real + (after.estNow - input.est) : after.projected) + (overflow.output ?? 0);
  if (need > window) {
    return stop(`After summarizing ${replaced} older messages it still needs about ${n(need)} tokens of the ${n(window)}-token window, so it was not sent again.`);
  }
  record(deps, input, 'compacted-and-retried');
  deps.notice(turn, 'info', `Summarized ${replaced} older messages; sending the request once more (about ${n(need)} of ${n(window)} tokens).`);
  return true;
}

function record(deps: OverflowDeps, input: OverflowInput, action: OverflowEvent['action']): void {
  try {
    deps.recordOverflow?.({
      event: 'overflow',
      session: deps.session.id,
      model: input.identity.model,
      provider: input.identity.provider,
      projected: input.projected,
      est: input.est,
      real: input.overflow.real,
      window: input.overflow.window,
      parser: input.overflow.parser,
      action,
    });
  } catch (err) {
    deps.log.warn(`drift log: ${errorMessage(err)}`);
  }
}

/** The server's figures in a sentence: its count and window when it gave them, else Candor's own projection. */
export function whatTheServerSaid(overflow: Overflow, projected: number): string {
  const { real, window, parser } = overflow;
  if (real !== null && window !== null) return `it counted ${n(real)} prompt tokens against its ${n(window)}-token window (${parser})`;
  if (window !== null) return `its window is ${n(window)} tokens; Candor projected ${n(projected)} (${parser})`;
  if (real !== null) return `it counted ${n(real)} prompt tokens (${parser})`;
  return `its error gives no numbers; Candor projected ${n(projected)} tokens (${parser})`;
}
