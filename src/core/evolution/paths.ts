import * as path from 'node:path';
import { workspaceIdFor } from '../workspaceId';
import { realOrResolved } from '../realPath';

/** Where evolution keeps its files in the data folder. */

export const TRIAGE_FILE = 'triage.jsonl';
export const EVOLUTION_FILE = 'evolution.jsonl';
export const SCRATCH_DIR = 'scratch';

/**
 * The workspace id of the repository's real path: a repository reached
 * through two symlinked paths has one clone, and two repositories with the
 * same folder name never share one.
 */
export function repoId(workspaceRoot: string): string {
  return workspaceIdFor(realOrResolved(workspaceRoot));
}

export interface RepoPaths {
  /** The scratch clone: `<dataDir>/scratch/<repo-id>`. */
  readonly scratch: string;
  /** One run at a time per repository. */
  readonly lock: string;
  /** HEAD commits that passed the gate. */
  readonly gated: string;
}

export function repoPaths(dataDir: string, workspaceRoot: string): RepoPaths {
  const id = repoId(workspaceRoot);
  const scratchRoot = path.join(path.resolve(dataDir), SCRATCH_DIR);
  return {
    scratch: path.join(scratchRoot, id),
    lock: path.join(scratchRoot, `${id}.lock`),
    gated: path.join(scratchRoot, `${id}.gated.jsonl`),
  };
}

