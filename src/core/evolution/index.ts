/** Rant triage and evolution runs (docs/architecture.md, "Evolution"): the pure core the host's task and the CLI share. */
export { runEvolution, REPOSITORY_HINT } from './pipeline';
export { rantStatuses, dismissRant, type RantState } from './triage';
export { branchDiff, handOff } from './handOff';
export { readRuns, type EvolutionRecord } from './record';
export { type SandboxMode } from './sandbox';
