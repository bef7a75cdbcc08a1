import * as assert from 'node:assert/strict';
import { isKindError } from '../../../../src/core/kindError';
import { GitHubError } from '../../../../src/core/github/errors';
import { ciStateOnce, followCi, type CiResult } from '../../../../src/core/github/ciFollow';
import { useFakeGitHub } from './setup';

const SHA = '1111111111111111111111111111111111111111';
const HOUR = 3_600_000;

describe('Following CI on a pull request\'s head commit', () => {
  const gh = useFakeGitHub();
  let states: CiResult[];
  beforeEach(() => {
    states = [];
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
  });
  const follow = (extra: { timeoutMs?: number; pushedAt?: number; signal?: AbortSignal } = {}) =>
    followCi(gh.client(), { owner: 'alice', repo: 'agent', sha: SHA, timeoutMs: HOUR, pushedAt: gh.time.now, clock: gh.time.clock, sleep: gh.time.sleep, onState: (s) => states.push(s), ...extra });

  it('check runs going queued, in progress, failed: failed, with the failing check linked, after back-off', async () => {
    gh.fake.setChecks(SHA, [{ name: 'test', status: 'queued' }], [{ name: 'test', status: 'in_progress' }], [{ name: 'lint', status: 'completed', conclusion: 'success' }, { name: 'test', status: 'completed', conclusion: 'failure' }]);
    const result = await follow();
    assert.equal(result.state, 'failed');
    assert.deepEqual(result.checks.map((c) => [c.name, c.status, c.conclusion]), [['lint', 'completed', 'success'], ['test', 'completed', 'failure']]);
    assert.equal(result.url, result.checks[1]?.url, 'the link is the failing check');
    assert.deepEqual(gh.time.slept, [10_000, 20_000]);
    assert.deepEqual(states.map((s) => [s.state, s.checks[0]?.status]), [['pending', 'queued'], ['pending', 'in_progress'], ['failed', 'completed']]);
  });

  it('all checks and statuses passing (neutral and skipped too): passed', async () => {
    gh.fake.setChecks(SHA, [{ name: 'test', status: 'completed', conclusion: 'success' }, { name: 'docs', status: 'completed', conclusion: 'skipped' }]);
    gh.fake.setStatuses(SHA, [{ context: 'ci/jenkins', state: 'pending' }], [{ context: 'ci/jenkins', state: 'success' }]);
    const result = await follow();
    assert.equal(result.state, 'passed');
    assert.deepEqual(result.checks.map((c) => c.name), ['test', 'docs', 'ci/jenkins']);
    assert.deepEqual(gh.time.slept, [10_000]);
  });

  it('a commit status in error fails CI even when every check run passed', async () => {
    gh.fake.setChecks(SHA, [{ name: 'test', status: 'completed', conclusion: 'success' }]);
    gh.fake.setStatuses(SHA, [{ context: 'ci/legacy', state: 'error' }]);
    const result = await follow();
    assert.equal(result.state, 'failed');
    assert.equal(result.url, 'https://ci.example.com/ci/legacy');
  });

  it('backs off from 10 s doubling to 2 min, and times out at the deadline counted from the push', async () => {
    gh.fake.setChecks(SHA, [{ name: 'matrix', status: 'in_progress' }]);
    const result = await follow({ timeoutMs: 10 * 60_000 });
    assert.equal(result.state, 'timeout');
    assert.deepEqual(gh.time.slept, [10_000, 20_000, 40_000, 80_000, 120_000, 120_000, 120_000, 90_000]);
    assert.equal(states.at(-1)?.state, 'timeout');
    assert.deepEqual(result.checks.map((c) => c.status), ['in_progress'], 'the timeout keeps what was last seen');
  });

  it('resumed after the deadline already passed: one read, then timeout', async () => {
    gh.fake.setChecks(SHA, [{ name: 'test', status: 'queued' }]);
    const result = await follow({ pushedAt: gh.time.now - 2 * HOUR });
    assert.equal(result.state, 'timeout');
    assert.deepEqual(gh.time.slept, []);
    assert.equal(gh.fake.calls('checks/list-for-ref').length, 1);
  });

  it('no check run and no status 5 minutes after the push: none (GitHub said pending, total_count 0)', async () => {
    const result = await follow();
    assert.equal(result.state, 'none');
    assert.deepEqual(result.checks, []);
    assert.equal(gh.time.slept.reduce((a, b) => a + b, 0), 5 * 60_000, 'it decided at five minutes, not later');
    assert.deepEqual(gh.time.slept, [10_000, 20_000, 40_000, 80_000, 120_000, 30_000]);
    assert.deepEqual(states.map((s) => s.state), ['pending', 'none']);
  });

  it('checks that appear within the 5 minutes are followed, not called none', async () => {
    gh.fake.setChecks(SHA, [], [], [{ name: 'test', status: 'queued' }], [{ name: 'test', status: 'completed', conclusion: 'success' }]);
    assert.equal((await follow()).state, 'passed');
  });

  it('rides out a passing fault (a 502) and gives up after three in a row', async () => {
    gh.fake.setChecks(SHA, [{ name: 'test', status: 'completed', conclusion: 'success' }]);
    gh.fake.fail('checks/list-for-ref', { kind: 'status', status: 502, message: 'Server Error' });
    assert.equal((await follow()).state, 'passed');
    gh.fake.fail('repos/get-combined-status-for-ref', { kind: 'status', status: 503, message: 'Unavailable' }, 3);
    await assert.rejects(follow(), (err) => isKindError(err, GitHubError, 'http') && err.status === 503);
  });

  it('a refused token ends following at once', async () => {
    gh.fake.fail('checks/list-for-ref', { kind: 'unauthorized' });
    await assert.rejects(follow(), (err) => isKindError(err, GitHubError, 'auth'));
    assert.deepEqual(gh.time.slept, []);
  });

  it('stops when its signal aborts, with the last state read', async () => {
    gh.fake.setChecks(SHA, [{ name: 'test', status: 'in_progress' }]);
    const stop = new AbortController();
    const result = await followCi(gh.client(), {
      owner: 'alice', repo: 'agent', sha: SHA, timeoutMs: HOUR, pushedAt: gh.time.now, clock: gh.time.clock,
      sleep: async (ms) => { await gh.time.sleep(ms); stop.abort(); },
      signal: stop.signal,
    });
    assert.equal(result.state, 'pending');
    assert.equal(gh.fake.calls('checks/list-for-ref').length, 1);
  });

  it('ciStateOnce: one read; no checks is none for an old commit and pending within 5 minutes of a push', async () => {
    const client = gh.client();
    assert.equal((await ciStateOnce(client, { owner: 'alice', repo: 'agent', sha: SHA })).state, 'none');
    assert.equal((await ciStateOnce(client, { owner: 'alice', repo: 'agent', sha: SHA, pushedAt: gh.time.now - 60_000, clock: gh.time.clock })).state, 'pending');
    gh.fake.setChecks(SHA, [{ name: 'test', status: 'completed', conclusion: 'timed_out' }]);
    assert.equal((await ciStateOnce(client, { owner: 'alice', repo: 'agent', sha: SHA })).state, 'failed');
  });
});
