/** The agent's read tools over the workspace folders and its git repositories. */
export { readFile } from './readFile';
export { listFiles } from './listFiles';
export { searchText } from './searchText';
export { gitStatusTool, gitDiffTool, gitLogTool } from './gitTools';
export { confine, confineTarget } from './confine';
