/** Rant triage and evolution runs (docs/architecture.md, "Evolution"): the pure core the host's task and the CLI share. */
export { runEvolution, type EvolutionOptions, type EvolutionIO, type EvolutionPhase } from './pipeline';
export { triage, rantStatuses, dismissRant, readDecisions, type RantState, type RantStatus, type TriageDecision, type TriageResult } from './triage';
export { classifyByRules, parseTriageReply, TRIAGE_SYSTEM_PROMPT, type RantClass, type Classification } from './classify';
export { branchDiff, handOff, rantBranch, revertBranch, RANT_TRAILER } from './ship';
export { readRuns, type EvolutionRecord, type EvolutionOutcome, type GateSummary } from './record';
export { repoId, repoPaths, TRIAGE_FILE, EVOLUTION_FILE } from './paths';
export { EvolutionError, isEvolutionError, type EvolutionErrorKind } from './errors';
export { detectSandbox, isSandboxUnavailable, type Sandbox, type SandboxKind, type SandboxMode, type SandboxUnavailable } from './sandbox';
