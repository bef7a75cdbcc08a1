import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DriftLog, readDriftFile } from '../../../src/core/context/driftLog';
import type { DriftRecord, Identity } from '../../../src/core/context/driftEvents';
import { ContextGate } from '../../../src/core/context/gate';
import type { GateState } from '../../../src/core/context/gateState';

export const OPENAI: Identity = { provider: 'api-openai-com', model: 'gpt-4o' };
export const LOCAL: Identity = { provider: '127-0-0-1-11434', model: 'qwen2.5-coder' };

/** A fresh temp folder per test, removed afterwards. */
export function useTempDir(): () => string {
  let dir = '';
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-gate-'));
  });
  afterEach(() => {
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return () => dir;
}

/** A clock that advances one second per reading, from a fixed instant. */
export function steppingClock(start = Date.UTC(2026, 0, 2, 3, 4, 5)): () => Date {
  let now = start;
  return () => new Date((now += 1000));
}

export interface GateRig {
  readonly gate: ContextGate;
  readonly log: DriftLog;
  readonly file: string;
  events(): DriftRecord[];
}

export function gateRig(dir: string, session = 's1', state?: GateState): GateRig {
  const file = path.join(dir, 'drift.jsonl');
  const log = new DriftLog(file, steppingClock());
  const gate = new ContextGate({ session, sink: log, ...(state ? { state } : {}) });
  return { gate, log, file, events: () => readDriftFile(file).events };
}

/** One completed request; usage reported unless real is undefined. */
export function complete(gate: ContextGate, identity: Identity, est: number, real?: number) {
  const projection = gate.beforeRequest(identity, est);
  const outcome = gate.afterRequest({ completed: true, estSent: est, ...(real === undefined ? {} : { promptTokens: real }) });
  return { projection, outcome };
}
