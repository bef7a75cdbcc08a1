import * as path from 'node:path';
import { DriftLog } from '../../../../src/core/context/driftLog';
import { tempFolderPerTest } from '../../../helpers/tempFolder';
import type { Identity } from '../../../../src/core/modelIdentity';
import type { DriftRecord } from '../../../../src/core/context/driftEvents';
import { ContextGate } from '../../../../src/core/context/gate';
import type { GateState } from '../../../../src/core/context/gateState';
import { zeroFeatures } from '../../../../src/core/context/heuristic';
import type { PayloadMark, PayloadMeasure } from '../../../../src/core/context/ledger';

export const OPENAI: Identity = { provider: 'api-openai-com', model: 'gpt-4o' };
export const LOCAL: Identity = { provider: '127-0-0-1-11434', model: 'qwen2.5-coder' };

/** A fresh temp folder per test, removed afterwards (after the lines a session still has on their way to disk). */
export function useTempDir(): () => string {
  return tempFolderPerTest('candor-context-');
}

/** A clock that advances one second per reading, from a fixed instant. */
export function steppingClock(start = Date.UTC(2026, 0, 2, 3, 4, 5)): () => Date {
  let now = start;
  return () => new Date((now += 1000));
}

/** Window ids w1, w2, … in the order the gate opens them. */
export function windowIds(prefix = 'w'): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}

/**
 * A payload known only by its total, counted by a tokenizer: the state
 * machine's tests need numbers, not messages. What changed since an earlier
 * one is the difference of the totals, as the ledger would measure it.
 */
export function est(tokens: number, counter = 'o200k_base'): PayloadMeasure {
  const mark: PayloadMark = {
    epoch: '',
    messages: 0,
    system: { key: `total-${tokens}`, tokens, features: zeroFeatures() },
    tools: { key: '', tokens: 0, features: zeroFeatures() },
  };
  return {
    tokens,
    features: zeroFeatures(),
    counter,
    pending: 0,
    rough: 0,
    mark,
    since: (earlier) => ({ tokens: tokens - earlier.system.tokens, features: zeroFeatures(), parts: [] }),
  };
}

export interface GateRig {
  readonly gate: ContextGate;
  readonly log: DriftLog;
  readonly file: string;
  events(): DriftRecord[];
}

export function gateRig(dir: string, session = 's1', state?: GateState, ids = windowIds()): GateRig {
  const file = path.join(dir, 'drift.jsonl');
  const log = new DriftLog(file, steppingClock());
  const gate = new ContextGate({ session, sink: log, newWindowId: ids, clock: steppingClock(), ...(state ? { state } : {}) });
  return { gate, log, file, events: () => new DriftLog(file).readDrift().events };
}

/** One completed request; usage reported unless real is undefined. */
export function complete(gate: ContextGate, identity: Identity, tokens: number, real?: number) {
  const projection = gate.beforeRequest(identity, est(tokens));
  const outcome = gate.afterRequest({ completed: true, ...(real === undefined ? {} : { promptTokens: real }) });
  return { projection, outcome };
}
