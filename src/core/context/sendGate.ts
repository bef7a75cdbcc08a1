import type { ChatMessage } from '../messages';
import { CompactionError, compactHistory, shouldCompact, type Summarize } from './compaction';
import type { Identity } from './driftEvents';
import type { ContextGate } from './gate';
import type { Projection } from './transitions';

export interface SendGateInput {
  readonly gate: ContextGate;
  readonly identity: Identity;
  /** History without the system prompt. */
  readonly history: readonly ChatMessage[];
  /** Estimate of the whole payload for a history (system prompt and tools included). */
  readonly estimate: (history: readonly ChatMessage[]) => number;
  readonly contextWindow: number;
  readonly thresholdPercent: number;
  readonly keepTurns: number;
  readonly summarize: Summarize;
  readonly signal?: AbortSignal;
  /** Told when a compaction starts, so the host can show progress. */
  readonly onCompacting?: () => void;
}

export interface SendGateResult {
  /** The history to send: compacted or the input itself. */
  readonly history: readonly ChatMessage[];
  /** From gate.beforeRequest on the history actually sent. */
  readonly projection: Projection;
  readonly compaction?: { readonly summarizedCount: number } | { readonly error: CompactionError };
  /** Over the threshold even after this request's one compaction: warn, do not summarize again. */
  readonly stillOver: boolean;
}

/**
 * The gate on the send path: project, compact at most once when the
 * projection passes the threshold, then commit the request to the gate. A
 * failed compaction keeps the history and sends it anyway; the error is
 * returned for the host to show. A cancelled compaction throws, because the
 * user cancelled the send along with it.
 */
export async function passSendGate(input: SendGateInput): Promise<SendGateResult> {
  const { gate, identity, contextWindow, thresholdPercent } = input;
  const over = (projected: number): boolean => shouldCompact(projected, contextWindow, thresholdPercent);
  let history = input.history;
  let compaction: SendGateResult['compaction'];
  if (over(gate.project(identity, input.estimate(history)).projected)) {
    input.onCompacting?.();
    try {
      const result = await compactHistory(history, input.keepTurns, input.summarize, input.signal);
      history = result.history;
      gate.afterCompaction();
      compaction = { summarizedCount: result.summarizedCount };
    } catch (err) {
      if (!(err instanceof CompactionError) || err.kind === 'cancelled') throw err;
      compaction = { error: err };
    }
  }
  const projection = gate.beforeRequest(identity, input.estimate(history));
  return { history, projection, ...(compaction ? { compaction } : {}), stillOver: compaction !== undefined && over(projection.projected) };
}
