/** The read-only git guard: the only door from Candor to a workspace repository. */
export { ReadOnlyGit, openWorkspaceRepo, type GuardOptions, type HandOffResult } from './guard';
export { type HistoryEntry } from './parse';
export { isGitGuardError } from './errors';
export { readOnlyReason } from './dirty';
export { noUnsavedBuffers, type UnsavedBufferSource } from './unsaved';
export { findRepositories, type RepositoryEntry } from './repositories';
export { type ParentFolderRule } from './parents';
export { isHandoffBranchName } from './allowList';
