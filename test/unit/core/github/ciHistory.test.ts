import * as assert from 'node:assert/strict';
import { ciCulprit, type HistoryCommit } from '../../../../src/core/github/ciHistory';
import { useFakeGitHub } from './setup';
import type { FakeGitHub } from '../../../helpers/fakeGitHub';

const sha = (n: number): string => String(n).repeat(40).slice(0, 40);

/** First-parent history, newest first: `c5` on top of `c4` … on top of `c1`. */
function history(rants: Record<number, string>, newest: number): HistoryCommit[] {
  const commits: HistoryCommit[] = [];
  for (let n = newest; n >= 1; n--) commits.push({ sha: sha(n), parent: n > 1 ? sha(n - 1) : null, rantId: rants[n] ?? null });
  return commits;
}

function ci(fake: FakeGitHub, results: Record<number, 'success' | 'failure' | 'in_progress'>): void {
  for (const [n, result] of Object.entries(results)) {
    fake.setChecks(sha(Number(n)), [result === 'in_progress' ? { name: 'test', status: 'in_progress' } : { name: 'test', status: 'completed', conclusion: result }]);
  }
}

describe('Rollback\'s culprit from CI history', () => {
  const gh = useFakeGitHub();
  const culprit = (commits: HistoryCommit[], maxCommits?: number) => ciCulprit(gh.client(), { owner: 'alice', repo: 'agent', defaultBranch: 'main', commits, ...(maxCommits ? { maxCommits } : {}) });
  beforeEach(() => {
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
  });

  it('is the Candor change whose CI failed while its parent\'s passed, not a later one that failed on top of it', async () => {
    ci(gh.fake, { 4: 'failure', 3: 'failure', 2: 'success', 1: 'success' });
    const found = await culprit(history({ 4: 'rant-b', 3: 'rant-a' }, 4));
    assert.ok(found.culprit, JSON.stringify(found));
    assert.deepEqual([found.culprit.sha, found.culprit.rantId, found.culprit.ci.state, found.culprit.parentCi.state], [sha(3), 'rant-a', 'failed', 'passed']);
  });

  it('passes over commits whose CI is still running or absent', async () => {
    ci(gh.fake, { 5: 'in_progress', 3: 'failure', 2: 'success' });
    const found = await culprit(history({ 5: 'rant-c', 3: 'rant-a' }, 5));
    assert.equal(found.culprit?.sha, sha(3), 'c5 runs, c4 has no CI at all');
  });

  it('nothing when CI passed on a newer commit: the break was mended', async () => {
    ci(gh.fake, { 3: 'success', 2: 'failure', 1: 'success' });
    const found = await culprit(history({ 2: 'rant-a' }, 3));
    assert.equal(found.culprit, null);
    assert.ok('reason' in found && /CI passed on 333333333333 of main: nothing to roll back/.test(found.reason));
    assert.equal(gh.fake.calls('checks/list-for-ref').length, 1, 'it stopped at the first green commit');
  });

  it('nothing when the commit that broke CI is a person\'s', async () => {
    ci(gh.fake, { 3: 'failure', 2: 'failure', 1: 'success' });
    const found = await culprit(history({ 3: 'rant-b' }, 3));
    assert.equal(found.culprit, null);
    assert.ok('reason' in found && /CI first failed on 222222222222 of main, which is not a Candor change/.test(found.reason));
  });

  it('reads each commit once, and no more than maxCommits of them', async () => {
    ci(gh.fake, { 6: 'failure', 5: 'failure', 4: 'failure', 3: 'failure', 2: 'failure', 1: 'success' });
    const found = await culprit(history({ 6: 'r6', 5: 'r5', 4: 'r4', 3: 'r3', 2: 'r2' }, 6), 3);
    assert.equal(found.culprit, null);
    assert.ok('reason' in found && /newest 3 commits of main/.test(found.reason));
    const read = gh.fake.calls('checks/list-for-ref').map((r) => r.path.split('/')[5]);
    assert.deepEqual(read, [sha(6), sha(5), sha(4), sha(3)], 'the third one\'s parent is read too, each once');
  });
});
