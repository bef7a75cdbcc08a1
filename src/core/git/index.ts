/** The read-only git guard: the only door from Candor to a workspace repository. */
export { ReadOnlyGit, openWorkspaceRepo, type GuardOptions, type HandOffOptions, type HandOffResult, type RepositoryOverview } from './guard';
export { GitGuardError, isGitGuardError, type GitGuardErrorKind } from './errors';
export { computeDirtyState, readOnlyReason, type DirtyKind, type DirtyReason, type DirtyState, type InProgress, type InProgressOperation } from './dirty';
export { noUnsavedBuffers, type UnsavedBufferSource } from './unsaved';
export { findRepositories, type RepositoryEntry } from './repositories';
export { parentRepository, type ParentFolderRule } from './parents';
export { isHandoffBranchName } from './allowList';
export { candorRantIds, type CommitSummary, type Trailer } from './parse';
export type { GitStatus, StatusChange, ConflictEntry, RenameEntry, BranchState, ChangeKind, SubmoduleState } from './status';
