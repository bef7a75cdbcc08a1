import * as fs from 'node:fs';
import * as path from 'node:path';
import { describeType } from '../boundedRead';
import { removeEntriesNamed } from '../process/removeTree';
import { EvolutionError } from './errors';
import { isInside } from '../realPath';
import { checkScratchPath, scratchGit, type Scratch, type ScratchGitOptions } from './scratchGit';

/**
 * Host git never enters a repository the model could have made
 * (docs/architecture.md, "Evolution"). A `.git` folder or gitfile planted
 * in a submodule's folder makes the host's git start a child git there,
 * with `GIT_DIR` set (so no ownership check), reading that repository's
 * config: its filter, fsmonitor and hooks run as Candor's user; a gitfile
 * pointing at the agent repository makes that child rewrite its index. Git
 * recurses only through a `.git` entry, so every one below the clone's top
 * is removed (at any depth, whatever it is) at each run's start and after
 * every command, before any host git runs in the clone.
 */

/**
 * Removes every `.git` below the clone's top; returns their paths relative
 * to the clone (`sub/.git`). Throws `scratch-git` when the clone's own
 * `.git` is not a real folder (a gitfile or link in its place would aim
 * every git command elsewhere): the next run clones afresh.
 */
export async function removeNestedRepositories(scratch: Scratch): Promise<string[]> {
  const dir = checkScratchPath(scratch);
  const own = await fs.promises.lstat(path.join(dir, '.git')).catch(() => undefined);
  if (own === undefined) return [];
  if (!own.isDirectory()) throw new EvolutionError('scratch-git', `the scratch clone's .git is ${describeType(own)}, not Candor's own folder; it is cloned afresh`);
  return removeEntriesNamed(dir, '.git');
}

/**
 * Of the `.git` entries a command left (and that were removed), those git
 * would have reported as part of a change: in a submodule's folder (a gitlink
 * of `base`) or in a folder git would add (not ignored). One in an ignored
 * folder (a fixture a test suite builds) is not the change's.
 */
export async function repositoriesInChange(scratch: Scratch, removed: readonly string[], gitlinks: readonly string[], options: ScratchGitOptions = {}): Promise<string[]> {
  const inChange: string[] = [];
  const ask: string[] = [];
  for (const entry of new Set(removed)) {
    const folder = path.posix.dirname(entry);
    const inGitlink = gitlinks.some((link) => isInside(path.join(scratch.dir, link), path.join(scratch.dir, folder)));
    if (folder === '.' || inGitlink) inChange.push(entry);
    else ask.push(entry);
  }
  if (ask.length === 0) return inChange;
  let ignored: Set<string>;
  try {
    const input = `${ask.map((entry) => path.posix.dirname(entry)).join('\0')}\0`;
    const out = await scratchGit(scratch, ['check-ignore', '-z', '--stdin'], { ...options, input, answerCodes: [1] });
    ignored = new Set(out.split('\0').filter((entry) => entry !== ''));
  } catch {
    // A path git cannot judge (deeper than it can read) is counted in: refusing is the safe side.
    ignored = new Set();
  }
  return [...inChange, ...ask.filter((entry) => !ignored.has(path.posix.dirname(entry)))];
}
