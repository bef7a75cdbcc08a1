/** The anchored compaction gate: estimators, projection, drift log, compaction. */
export * from './estimator';
export { IncrementalEstimate } from './incremental';
export { providerSlug } from './slug';
export { ContextGate, type AfterRequestOutcome, type ContextGateOptions } from './gate';
export { initialGateState, isGateState, sameIdentity, type Anchor, type GateState, type LossWindow } from './gateState';
export type { Projection, RequestResult, Settlement, UnanchoredReason } from './transitions';
export * from './driftEvents';
export { DriftLog, readDriftFile, isDriftRecord, type DriftRead } from './driftLog';
export { ZERO_TOTALS, tallyDrift, type OpenWindow, type DriftTally } from './tally';
export * from './compaction';
export { textModelSummarizer, renderTranscript } from './summarizer';
export { passSendGate, type SendGateInput, type SendGateResult } from './sendGate';
