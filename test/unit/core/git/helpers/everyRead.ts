import type { ReadOnlyGit } from '../../../../../src/core/git/guard';
import type { UnsavedBufferSource } from '../../../../../src/core/git/unsaved';
import { gitDiffTool, gitLogTool, gitStatusTool } from '../../../../../src/core/workspace/gitTools';
import { listFiles } from '../../../../../src/core/workspace/listFiles';
import { readFile } from '../../../../../src/core/workspace/readFile';
import { searchText } from '../../../../../src/core/workspace/searchText';

/** Runs every read of the guard and every agent tool once; returns how many ran. */
export async function runEveryRead(repo: ReadOnlyGit, unsaved: UnsavedBufferSource, readablePaths: readonly string[]): Promise<number> {
  const head = await repo.headCommit();
  const calls: Array<Promise<unknown>> = [
    repo.status(),
    repo.inProgress(),
    repo.diffUnstaged(),
    repo.diffStaged(),
    repo.log(5),
    repo.revParse('HEAD'),
    repo.topCommitTrailers(),
    repo.dirtyState(unsaved),
    repo.overview(unsaved),
    repo.ignoredAmong(['debug.log', 'src/a.txt']),
    repo.listFiles('work'),
    repo.listFiles('ignored'),
    repo.listFiles('staged'),
    gitStatusTool(repo, { unsaved }),
    gitDiffTool(repo),
    gitLogTool(repo),
    ...readablePaths.map((p) => readFile([repo.root], p)),
    listFiles([repo.root], '.', { recursive: true }),
    searchText([repo.root], 'a'),
  ];
  // A blob's bytes, as the command view reads HEAD's version of a changed file.
  const oid = head !== undefined && readablePaths[0] !== undefined ? await repo.revParse(`HEAD:${readablePaths[0]}`).catch(() => undefined) : undefined;
  if (oid !== undefined) calls.push(repo.blob(oid));
  if (head !== undefined) calls.push(repo.show('HEAD'), ...readablePaths.map((p) => repo.show(`${head}:${p}`).catch(() => 'not in HEAD')));
  await Promise.all(calls);
  return calls.length;
}
