import type { GateState, LossWindow } from './gateState';
import type { LoggedWindow } from './tally';

/**
 * A session reopened: its state from the session file against what
 * drift.jsonl says of its newest window. The two can disagree only when the
 * extension stopped between writing a drift event and the session's next
 * gate record. The log wins, so that a window is never opened, warned or
 * closed twice:
 *
 * - the state's window was closed by an `anchor_drift` the state never saw:
 *   the window is closed and the drift's count becomes the anchor;
 * - the log has an open window the state does not hold: the state carries
 *   it on, with the evidence its last `anchor_loss_open` wrote.
 *
 * When both agree on an open window, its estimates written at the last stop
 * are taken back, so the drift that closes it holds the whole window.
 */
export function reconcile(state: GateState, logged: LoggedWindow | undefined): { state: GateState; ests?: readonly number[] } {
  if (!logged) return { state };
  if (logged.state === 'closed') {
    if (!state.window || logged.window !== state.window.id) return { state };
    const drift = logged.drift;
    const { missing: _missing, ...rest } = state;
    return {
      state: {
        ...rest,
        window: null,
        anchor: { real: drift.real, est: drift.est, identity: { provider: drift.provider, model: drift.model } },
        established: true,
        afterCompaction: false,
        afterSwitch: false,
        afterShrink: false,
      },
    };
  }
  const open = logged.window;
  const opener = open.losses[0];
  if (open.window === undefined || !opener) return { state };
  const last = open.lastOpen;
  if (state.window?.id === open.window) return last ? { state, ests: last.window_ests } : { state };
  const window: LossWindow = {
    id: open.window,
    openedBy: { reason: opener.reason, model: opener.model, provider: opener.provider },
    reasons: [...new Set([...open.losses.map((loss) => loss.reason), ...(last?.reasons ?? [])])],
    warned: open.warned,
    maxEst: last?.window_max_est ?? Math.max(...open.losses.map((loss) => loss.est)),
    requests: last?.window_requests ?? 0,
  };
  return { state: { ...state, anchor: null, established: true, window }, ...(last ? { ests: last.window_ests } : {}) };
}
