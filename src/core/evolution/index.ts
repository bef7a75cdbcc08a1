/** Rant triage and evolution runs (docs/architecture.md, "Evolution"): the pure core the host's task and the CLI share. */
export { runEvolution, REPOSITORY_HINT } from './pipeline';
export { rantStatuses, dismissRant } from './triage';
export { branchDiff, handOff } from './handOff';
export { readRuns } from './record';
export { type SandboxMode } from '../sandbox/sandbox';
export {
  followRecordedCi,
  isPullRequestRefusal,
  openPullRequestRuns,
  previewPullRequest,
  pushAndOpen,
  readCiCulprit,
  readOpenPullRequestsCi,
  type PullRequestContext,
  type PullRequestPreview,
} from './pullRequestFlow';
