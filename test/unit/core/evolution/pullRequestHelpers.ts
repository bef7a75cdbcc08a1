import * as fs from 'node:fs';
import * as path from 'node:path';
import { newId } from '../../../../src/core/ids';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { appendRun } from '../../../../src/core/evolution/record';
import { commitMessage, rantBranch } from '../../../../src/core/evolution/ship';
import { saveRant } from '../../../../src/core/rants';
import { FakeGitHub, type FakeRepo } from '../../../helpers/fakeGitHub';
import { git, snapshot, tempDir, workspaceRepo, write, type Snapshot } from './helpers';

/** Shaped like a classic GitHub token, so that a pattern for one would catch it too. */
export const TOKEN = 'ghp_Candor0pr0flow0token0abcdefghijklmno';
/** A credential the rant and the commit message mention: the preview, the pull request and the records must not. */
export const SECRET = 'planted-deploy-secret-7f3a9c21e5b04d68';
export const SECRET_ENV = 'DEPLOY_PASSWORD';

export interface Shipped {
  /** The agent repository: `main`, tags v1 (light) and v1.1 (annotated), push.followTags on, a pre-push hook that leaves `hookMarker`. */
  readonly agent: string;
  /** The bare repository the pushes land in (the `origin` remote's push URL). */
  readonly bare: string;
  readonly dataDir: string;
  readonly branch: string;
  readonly commit: string;
  readonly rantId: string;
  readonly run: string;
  readonly hookMarker: string;
}

export interface ShippedOptions {
  /** origin's URL (what `ls-remote --get-url` says); default a github.com one. Null: no origin remote at all. */
  readonly remoteUrl?: string | null;
  /** The branch the run started from (the record's `base`). Default `main`. */
  readonly base?: string | null;
  /** The model's summary, written into the commit as it is (as a Candor that showed no marks would have written it). */
  readonly summary?: string;
  /** The gate's output tail in the record. */
  readonly tail?: string;
}

/**
 * A run that shipped, as the pipeline leaves it: the rant in rants.jsonl,
 * the change committed (with ship.ts's message) on candor/rant-<id> in the
 * scratch clone, and the run's line in evolution.jsonl. The agent
 * repository's origin names a GitHub repository and pushes to a local bare
 * repository, so a push is real.
 */
export function shippedRun(options: ShippedOptions = {}): Shipped {
  const agent = workspaceRepo();
  git(agent, 'tag', 'v1');
  git(agent, 'tag', '-a', '-m', 'release', 'v1.1');
  git(agent, 'config', 'push.followTags', 'true');
  const hookMarker = path.join(tempDir('candor-hook-'), 'ran');
  write(agent, '.git/hooks/pre-push', `#!/bin/sh\necho pre-push >> '${hookMarker}'\n`);
  fs.chmodSync(path.join(agent, '.git/hooks/pre-push'), 0o755);
  const bare = tempDir('candor-remote-');
  git(bare, 'init', '-q', '--bare');
  if (options.remoteUrl !== null) {
    git(agent, 'remote', 'add', 'origin', options.remoteUrl ?? 'https://github.com/alice/agent.git');
    git(agent, 'config', 'remote.origin.pushurl', bare);
  }
  const dataDir = tempDir('candor-data-');
  const rant = saveRant(dataDir, { text: `The greeting is too short. (My deploy password is ${SECRET}, do not share.)`, project: 'web', session: null });
  const branch = rantBranch(rant.id);
  const scratch = repoPaths(dataDir, agent).scratch;
  fs.mkdirSync(path.dirname(scratch), { recursive: true, mode: 0o700 });
  git(path.dirname(scratch), 'clone', '-q', '--no-hardlinks', agent, scratch);
  git(scratch, 'checkout', '-q', '-b', branch);
  write(scratch, 'greet.js', "module.exports = () => 'hello world';\n");
  git(scratch, 'add', '-A');
  // As a run whose redaction set did not know the secret yet would have written it.
  const summary = options.summary ?? `Make greet() say hello world.\n\nThe longer greeting answers the rant (${SECRET}).`;
  const message = commitMessage({ rant, class: 'agent-code', summary: 'SUMMARY' }).replace('SUMMARY', summary);
  git(scratch, 'commit', '-q', '--cleanup=verbatim', '-m', message);
  const commit = git(scratch, 'rev-parse', 'HEAD').trim();
  git(scratch, 'checkout', '-q', '--detach', 'main');
  const run = newId();
  const now = new Date().toISOString();
  appendRun(dataDir, {
    v: 1,
    run,
    ts: now,
    ended: now,
    rants: [rant.id],
    outcome: 'shipped',
    reason: `rant ${rant.id} addressed: Make greet() say hello world.; take the branch with "Candor: Take Evolution Branch"`,
    repository: agent,
    branch,
    commit,
    diffstat: ' greet.js | 2 +-\n 1 file changed, 1 insertion(+), 1 deletion(-)',
    gate: { passed: true, ms: 1234, tail: options.tail ?? 'tests ok', passing: 3, failing: 0 },
    sandbox: 'bubblewrap',
    limits: null,
    base: options.base === undefined ? 'main' : options.base,
  });
  return { agent, bare, dataDir, branch, commit, rantId: rant.id, run, hookMarker };
}

/** The refs of a repository, `refname sha`, sorted. */
export function refsOf(repo: string): string[] {
  return git(repo, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n').filter(Boolean).sort();
}

/**
 * The fake's view of `repo`'s branches follows the bare repository: what is
 * pushed there for real is what GitHub has (the fake keeps its own branches
 * too, such as the default branch).
 */
export function mirrorPushes(repo: FakeRepo, bare: string): void {
  const { branches } = repo;
  const ownGet = branches.get.bind(branches);
  const ownHas = branches.has.bind(branches);
  const pushed = (name: string): string | undefined => git(bare, 'for-each-ref', '--format=%(objectname)', `refs/heads/${name}`).trim() || undefined;
  branches.get = (name: string) => pushed(name) ?? ownGet(name);
  branches.has = (name: string) => pushed(name) !== undefined || ownHas(name);
}

/** A fake GitHub with alice/agent (default branch main) whose branches follow `bare`. */
export async function fakeWithAgent(bare: string, repo: { owner?: string; name?: string; parent?: string; private?: boolean; branches?: string[] } = {}): Promise<{ fake: FakeGitHub; repo: FakeRepo }> {
  const fake = await FakeGitHub.start({ token: TOKEN });
  const added = fake.addRepo({ owner: repo.owner ?? 'alice', name: repo.name ?? 'agent', defaultBranch: 'main', ...repo });
  mirrorPushes(added, bare);
  return { fake, repo: added };
}

/** Every file under `dir` that holds `needle`, as a path relative to it (git's objects are compressed: only loose text can hold it). */
export function filesHolding(dir: string, needle: string): string[] {
  const found: string[] = [];
  const walk = (at: string): void => {
    for (const entry of fs.readdirSync(at, { withFileTypes: true })) {
      const full = path.join(at, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.isFile() && fs.readFileSync(full).includes(needle)) found.push(path.relative(dir, full));
    }
  };
  walk(dir);
  return found;
}

/**
 * What the push and the hand-off may not change in the agent repository:
 * files, index, HEAD, stash and every ref but the branch and (a push's own
 * bookkeeping, as every `git push` does it) its remote-tracking ref.
 */
export function untouched(repo: string, branch: string): Omit<Snapshot, 'reflog'> {
  const { reflog: _reflog, ...rest } = snapshot(repo);
  const refs = rest.refs.split('\n').filter((line) => !line.startsWith(`refs/heads/${branch} `) && !line.startsWith(`refs/remotes/origin/${branch} `)).join('\n');
  return { ...rest, refs };
}
