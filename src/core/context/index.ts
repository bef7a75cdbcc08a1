/** The anchored compaction gate: estimators, projection, drift log, compaction (docs/architecture.md, "Context gate"). */
export * from './estimator';
export { ContextGate } from './gate';
export { isGateState } from './gateState';
export * from './driftEvents';
export { DriftLog } from './driftLog';
export * from './compaction';
export { textModelSummarizer } from './summarizer';
