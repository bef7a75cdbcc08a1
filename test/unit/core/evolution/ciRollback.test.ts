// Rollback that knows CI: the culprit read from (a fake) GitHub's CI history
// of real repositories, checked against the agent repository's HEAD, and its
// revert prepared in the scratch clone without the local gate.
import * as assert from 'node:assert/strict';
import { ReadOnlyGit } from '../../../../src/core/git/guard';
import { ciCulprit } from '../../../../src/core/github/ciHistory';
import { ciRollbackTarget, culpritInput, readCiHistory, type CiRollbackTarget } from '../../../../src/core/evolution/ciRollback';
import { prepareRevert } from '../../../../src/core/evolution/rollback';
import { prepareScratch } from '../../../../src/core/evolution/scratch';
import { useFakeGitHub } from '../github/setup';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { readRuns } from '../../../../src/core/evolution/record';
import { Printer, baseOptions, git, removeTempDirs, tempDir, workspaceRepo, write } from './helpers';

const RANT_A = '01aaaaaaaaaaaaaaaaaaaaaaaa';
const RANT_B = '01bbbbbbbbbbbbbbbbbbbbbbbb';

describe('rollback from CI history', function () {
  this.timeout(60_000);
  const gh = useFakeGitHub();
  let agent: string;
  beforeEach(() => {
    agent = workspaceRepo();
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
  });
  afterEach(() => removeTempDirs());

  const head = (repo = agent): string => git(repo, 'rev-parse', 'HEAD').trim();
  const commit = (files: Record<string, string>, message: string, repo = agent): string => {
    for (const [name, content] of Object.entries(files)) write(repo, name, content);
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', message);
    return head(repo);
  };
  const candor = (files: Record<string, string>, rantId: string, repo = agent): string => commit(files, `candor: a change\n\nAddresses a rant.\n\nCandor-Rant: ${rantId}`, repo);
  const ci = (results: Record<string, 'success' | 'failure'>): void => {
    for (const [sha, conclusion] of Object.entries(results)) gh.fake.setChecks(sha, [{ name: 'matrix (windows)', status: 'completed', conclusion }]);
  };
  /** What an evolution run does at its start: CI's culprit for the history given, then the target against HEAD. */
  async function target(rev = 'HEAD'): Promise<CiRollbackTarget> {
    const guard = await ReadOnlyGit.open(agent);
    const found = await ciCulprit(gh.client(), { owner: 'alice', repo: 'agent', defaultBranch: 'main', commits: culpritInput(await readCiHistory(guard, rev)) });
    return ciRollbackTarget(guard, found);
  }

  it('a Candor change fast-forwarded onto main, red on CI only: its revert is prepared on HEAD, no local gate run', async () => {
    const base = head();
    const broke = candor({ 'platform.js': "module.exports = process.platform === 'win32' ? null : 'ok';\n" }, RANT_A);
    const after = commit({ 'NOTES.md': 'human work\n' }, 'notes');
    ci({ [after]: 'failure', [broke]: 'failure', [base]: 'success' });

    const found = await target();
    assert.equal(found.kind, 'revert', JSON.stringify(found));
    assert.ok(found.kind === 'revert');
    assert.equal(found.culprit.sha, broke);
    assert.deepEqual(found.commits.map((c) => [c.sha, c.rants]), [[broke, [RANT_A]]]);

    const dataDir = tempDir('candor-data-');
    const { scratch } = await prepareScratch({ dataDir, repositoryRoot: agent, head: after, setupCommand: '' });
    const prepared = await prepareRevert(scratch, { head: after, reverted: found.commits, why: `CI failed: ${found.culprit.ci.url}`, failing: 'CI' });
    assert.equal(prepared.kind, 'prepared');
    assert.ok(prepared.kind === 'prepared');
    const { branch, commit: revert } = prepared.shipped;
    assert.equal(branch, `candor/revert-${after.slice(0, 12)}`);
    assert.equal(git(scratch.dir, 'rev-parse', `${revert}^`).trim(), after, 'the revert sits on HEAD');
    assert.equal(git(scratch.dir, 'log', '-1', '--format=%(trailers:key=Candor-Revert,valueonly)', revert).trim(), broke);
    assert.match(git(scratch.dir, 'log', '-1', '--format=%B', revert), new RegExp(`HEAD ${after.slice(0, 12)} fails CI \\(CI failed: `));
    assert.equal(git(scratch.dir, 'ls-tree', '--name-only', revert).split('\n').includes('platform.js'), false, 'the change is undone');
    assert.equal(git(scratch.dir, 'show', `${revert}:NOTES.md`), 'human work\n', 'the human work after it stays');
  });

  it('an evolution run given CI\'s culprit prepares its revert first, without the local gate, and records revert-prepared', async () => {
    const base = head();
    const broke = candor({ 'platform.js': "module.exports = 'only fails on CI';\n" }, RANT_A);
    ci({ [broke]: 'failure', [base]: 'success' });
    const guard = await ReadOnlyGit.open(agent);
    const found = await ciCulprit(gh.client(), { owner: 'alice', repo: 'agent', defaultBranch: 'main', commits: culpritInput(await readCiHistory(guard)) });
    const dataDir = tempDir('candor-data-');
    const printer = new Printer();
    // A test command that always fails: had the local gate run, the record would carry its failure.
    const record = await runEvolution(baseOptions(agent, dataDir, { ciCulprit: found, testCommand: 'exit 1' }), printer.io);
    assert.equal(record.outcome, 'revert-prepared', `${record.reason}\n${printer.text()}`);
    assert.deepEqual(record.rants, [RANT_A]);
    assert.match(record.reason, /not gated locally/);
    assert.equal(record.gate, null, 'no gate ran');
    assert.match(git(agent, 'rev-parse', '--abbrev-ref', 'HEAD'), /main|master/, 'the agent repository is untouched');
    assert.equal(readRuns(dataDir).at(-1)?.branch, record.branch);
  });

  it('an evolution run given a culprit its HEAD lacks says "pull the default branch first" and changes nothing', async () => {
    const other = tempDir('candor-ahead-');
    git(other, 'clone', '-q', agent, 'ahead');
    const ahead = `${other}/ahead`;
    const broke = candor({ 'platform.js': 'x\n' }, RANT_B, ahead);
    ci({ [broke]: 'failure', [git(ahead, 'rev-parse', 'HEAD~1').trim()]: 'success' });
    const found = await ciCulprit(gh.client(), { owner: 'alice', repo: 'agent', defaultBranch: 'main', commits: culpritInput(await readCiHistory(await ReadOnlyGit.open(ahead))) });
    const dataDir = tempDir('candor-data-');
    const record = await runEvolution(baseOptions(agent, dataDir, { ciCulprit: found }), new Printer().io);
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /pull the default branch first/);
    assert.equal(record.branch, null);
  });

  it('a pull request merged with a merge commit: the culprit is the merge, the revert undoes the Candor commit it brought in', async () => {
    git(agent, 'checkout', '-q', '-b', `candor/rant-${RANT_B}`);
    const change = candor({ 'greet.js': "module.exports = () => 'hello, CI';\n" }, RANT_B);
    git(agent, 'checkout', '-q', 'main');
    const human = commit({ 'NOTES.md': 'human\n' }, 'human work on main');
    git(agent, 'merge', '-q', '--no-ff', '-m', `Merge pull request #1 from alice/candor/rant-${RANT_B}\n\ncandor: a change`, `candor/rant-${RANT_B}`);
    const merge = head();
    ci({ [merge]: 'failure', [human]: 'success' });

    const history = culpritInput(await readCiHistory(await ReadOnlyGit.open(agent)));
    assert.deepEqual(history.slice(0, 2), [{ sha: merge, parent: human, rantId: RANT_B }, { sha: human, parent: history[1]?.parent ?? null, rantId: null }], 'the merge names the rant of what it brought in');
    const found = await target();
    assert.ok(found.kind === 'revert', JSON.stringify(found));
    assert.equal(found.culprit.sha, merge);
    assert.deepEqual(found.commits.map((c) => c.sha), [change]);
  });

  it('a culprit the agent repository does not have yet (it is behind origin/main): "pull the default branch first", nothing done', async () => {
    const remote = tempDir('candor-origin-');
    git(remote, 'init', '-q', '--bare');
    git(agent, 'remote', 'add', 'origin', remote);
    git(agent, 'push', '-q', 'origin', 'main');
    const base = head();
    const other = tempDir('candor-other-');
    git(other, 'clone', '-q', remote, '.');
    const broke = candor({ 'greet.js': "module.exports = () => 'merged elsewhere';\n" }, RANT_A, other);
    git(other, 'push', '-q', 'origin', 'main');
    git(agent, 'fetch', '-q', 'origin');
    ci({ [broke]: 'failure', [base]: 'success' });

    const found = await target('refs/remotes/origin/main');
    assert.equal(found.kind, 'refused');
    assert.ok(found.kind === 'refused');
    assert.match(found.reason, /pull the default branch first/);
    assert.match(found.reason, /Candor never pulls/);
    assert.equal(head(), base, 'nothing pulled');
  });

  it('a culprit on HEAD\'s history but not its first-parent chain (a feature branch that merged main) is refused too', async () => {
    const base = head();
    git(agent, 'checkout', '-q', '-b', 'feature');
    commit({ 'feature.txt': 'f\n' }, 'feature work');
    git(agent, 'checkout', '-q', 'main');
    const broke = candor({ 'greet.js': "module.exports = () => 'x';\n" }, RANT_A);
    git(agent, 'checkout', '-q', 'feature');
    git(agent, 'merge', '-q', '--no-edit', 'main');
    ci({ [broke]: 'failure', [base]: 'success' });

    const found = await target('main');
    assert.equal(found.kind, 'refused', JSON.stringify(found));
  });

  it('a culprit reverted already on HEAD is nothing to do; no culprit is nothing to do, with CI\'s reason', async () => {
    const base = head();
    const broke = candor({ 'greet.js': "module.exports = () => 'x';\n" }, RANT_A);
    ci({ [broke]: 'failure', [base]: 'success' });
    // The revert is merged; CI has not reported on it yet, so CI's culprit is still the change.
    git(agent, 'revert', '--no-edit', broke);
    const reverted = await target();
    assert.equal(reverted.kind, 'nothing', JSON.stringify(reverted));
    assert.ok(reverted.kind === 'nothing');
    assert.match(reverted.reason, /reverted already/);

    ci({ [head()]: 'success' });
    const green = await target();
    assert.equal(green.kind, 'nothing');
    assert.ok(green.kind === 'nothing');
    assert.match(green.reason, /CI passed on .* nothing to roll back/);
  });
});
