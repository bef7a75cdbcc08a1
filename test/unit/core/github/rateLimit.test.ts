import * as assert from 'node:assert/strict';
import { isKindError } from '../../../../src/core/kindError';
import { GitHubError } from '../../../../src/core/github/errors';
import { duration, rateLimitOf } from '../../../../src/core/github/rateLimit';
import { useFakeGitHub } from './setup';

describe('GitHub rate limits: waited out as GitHub says, within bounds, and shown', () => {
  const gh = useFakeGitHub();
  let waits: Array<{ ms: number; why: string }>;
  const client = (extra = {}) => gh.client({ onWait: (ms, why) => waits.push({ ms, why }), ...extra });
  beforeEach(() => {
    waits = [];
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
  });

  it('a 429 with Retry-After: waits that long, says so, and tries again', async () => {
    gh.fake.fail('repos/get', { kind: 'rate-limit', status: 429, retryAfter: 30 });
    assert.equal((await client().repository('alice', 'agent')).repo, 'agent');
    assert.deepEqual(gh.time.slept, [30_000]);
    assert.equal(waits.length, 1);
    assert.equal(waits[0]?.ms, 30_000);
    assert.match(waits[0]?.why ?? '', /waiting 30 s as Retry-After says.*read alice\/agent again \(wait 1 of at most 3\)/);
    assert.equal(gh.fake.calls('repos/get').length, 2);
  });

  it('a 403 with no request left: waits until x-ratelimit-reset, a second past it', async () => {
    const resetAt = Math.floor(gh.time.now / 1000) + 90;
    gh.fake.fail('pulls/list', { kind: 'rate-limit', status: 403, resetAt });
    assert.deepEqual(await client().openPullRequests('alice', 'agent', 'alice:candor/rant-1'), []);
    assert.deepEqual(gh.time.slept, [91_000]);
    assert.equal(waits[0]?.ms, 91_000);
    assert.match(waits[0]?.why ?? '', /as x-ratelimit-reset says/);
  });

  it('waits at most maxWaits times for one request, then fails as rate-limit', async () => {
    gh.fake.fail('repos/get', { kind: 'rate-limit', status: 429, retryAfter: 5 }, 10);
    await assert.rejects(client({ maxWaits: 2 }).repository('alice', 'agent'), (err) => isKindError(err, GitHubError, 'rate-limit') && /still in force after 2 waits/.test(err.message));
    assert.deepEqual(gh.time.slept, [5_000, 5_000]);
    assert.equal(gh.fake.calls('repos/get').length, 3);
  });

  it('does not wait longer than maxWaitMs: the error says when to try again', async () => {
    const resetAt = Math.floor(gh.time.now / 1000) + 2 * 3600;
    gh.fake.fail('repos/get', { kind: 'rate-limit', status: 403, resetAt });
    await assert.rejects(client().repository('alice', 'agent'), (err) => {
      assert.ok(isKindError(err, GitHubError, 'rate-limit'));
      assert.match(err.message, /asks for 2 h 1 min, longer than Candor waits \(10 min\)/);
      assert.match(err.message, /Try again after 2025-03-01T14:00:01Z/);
      return true;
    });
    assert.deepEqual(gh.time.slept, []);
    assert.deepEqual(waits, []);
  });

  it('a 403 that is no rate limit is not waited on', async () => {
    gh.fake.fail('repos/get', { kind: 'status', status: 403, message: 'Repository access blocked' });
    await assert.rejects(client().repository('alice', 'agent'), (err) => isKindError(err, GitHubError, 'http') && err.status === 403);
    assert.deepEqual(gh.time.slept, []);
  });
});

describe('rateLimitOf: the wait an answer asks for', () => {
  const now = new Date('2025-03-01T12:00:00Z');
  it('prefers Retry-After, then the reset time, then a minute for a secondary limit', () => {
    assert.deepEqual(rateLimitOf({ status: 429, headers: { 'retry-after': '7', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '1' }, message: '' }, now), { waitMs: 7_000, source: 'Retry-After' });
    assert.equal(rateLimitOf({ status: 403, headers: { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(now.getTime() / 1000 - 5) }, message: '' }, now)?.waitMs, 1_000, 'a reset already past: only the margin');
    assert.equal(rateLimitOf({ status: 403, headers: {}, message: 'You have exceeded a secondary rate limit' }, now)?.waitMs, 60_000);
    assert.equal(rateLimitOf({ status: 403, headers: { 'x-ratelimit-remaining': '12', 'x-ratelimit-reset': '99' }, message: 'Forbidden' }, now), undefined);
    assert.equal(rateLimitOf({ status: 500, headers: { 'retry-after': '1' }, message: '' }, now), undefined);
    assert.equal(rateLimitOf({ status: 429, headers: { 'retry-after': 'Wed, 21 Oct 2015 07:28:00 GMT' }, message: '' }, now)?.waitMs, 60_000, 'a date form is not read as seconds');
  });

  it('says a wait in words', () => {
    assert.equal(duration(45_000), '45 s');
    assert.equal(duration(180_000), '3 min');
    assert.equal(duration(3_900_000), '1 h 5 min');
  });
});
