/** The agent's read tools over the workspace folders and its git repositories. */
export { readFile } from './readFile';
export { listFiles, type ListFilesOptions } from './listFiles';
export { searchText, type SearchTextOptions } from './searchText';
export { gitStatusTool, gitDiffTool, gitLogTool, type GitStatusToolOptions, type GitDiffToolOptions, type GitLogToolOptions } from './gitTools';
export { confine, type ConfinedPath } from './confine';
export { type WorkspaceToolErrorKind } from './errors';
export type { ToolOutput } from './bounded';
