import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { followRecordedCi, openPullRequestRuns, previewPullRequest, pushAndOpen, readOpenPullRequestsCi, type PullRequestContext } from '../../../../src/core/evolution/pullRequestFlow';
import { handOff } from '../../../../src/core/evolution/handOff';
import { readRuns } from '../../../../src/core/evolution/record';
import { EVOLUTION_FILE } from '../../../../src/core/evolution/paths';
import { noUnsavedBuffers } from '../../../../src/core/git';
import { readJsonLines } from '../../../../src/core/jsonl';
import { SecretSet } from '../../../../src/core/redact';
import type { FakeGitHub } from '../../../helpers/fakeGitHub';
import { FakeTime } from '../github/setup';
import { git, removeTempDirs, write } from './helpers';
import { SECRET, TOKEN, fakeWithAgent, filesHolding, refsOf, shippedRun, untouched, type Shipped } from './pullRequestHelpers';

/**
 * Open Pull Request's flow against real git (the agent repository, its
 * scratch clone, a bare repository as the remote) and a fake GitHub over
 * real HTTP, checked against GitHub's OpenAPI description.
 */

function context(s: Shipped, fake: FakeGitHub, extra: Partial<PullRequestContext> = {}): PullRequestContext {
  return { dataDir: s.dataDir, repository: s.agent, remote: 'origin', apiUrl: fake.apiUrl, token: () => Promise.resolve(TOKEN), unsaved: noUnsavedBuffers, secrets: new SecretSet([SECRET]), ...extra };
}

/** The update lines of evolution.jsonl, in order: `update` and, for `ci`, its state. */
function updateLines(dataDir: string): string[] {
  return readJsonLines<{ update?: string; ci?: { state: string } }>(path.join(dataDir, EVOLUTION_FILE))
    .records.filter((line) => line.update !== undefined)
    .map((line) => (line.update === 'ci' ? `ci ${line.ci?.state ?? '?'}` : (line.update ?? '')));
}

/** A user's own commit on top of the taken branch, in the agent repository (HEAD stays on main). */
function userCommitOn(s: Shipped): string {
  git(s.agent, 'checkout', '-q', s.branch);
  write(s.agent, 'NOTES.md', 'my own touch\n');
  git(s.agent, 'add', 'NOTES.md');
  git(s.agent, 'commit', '-q', '-m', 'My own touch on top');
  git(s.agent, 'checkout', '-q', 'main');
  return git(s.agent, 'rev-parse', `refs/heads/${s.branch}`).trim();
}

describe('Open Pull Request: preview, push and open, CI', function () {
  this.timeout(60_000);
  let fake: FakeGitHub | undefined;
  afterEach(async () => {
    await fake?.close();
    fake?.assertValid();
    fake = undefined;
    removeTempDirs();
  });

  it('the preview shows the remote, visibility, branch, base, commit message and body, redacted, and pushes nothing', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const preview = await previewPullRequest(context(s, fake), s.branch);
    assert.equal(preview.run, s.run);
    assert.equal(preview.commit, s.commit);
    assert.equal(preview.handOff, 'needed');
    assert.equal(preview.remoteUrl, 'https://github.com/alice/agent.git');
    assert.deepEqual(preview.repository, { owner: 'alice', repo: 'agent', public: true, fork: false });
    assert.deepEqual(preview.target, { owner: 'alice', repo: 'agent' });
    assert.equal(preview.base, 'main');
    assert.equal(preview.existing, undefined);
    assert.equal(preview.title, 'Make greet() say hello world.');
    assert.match(preview.commitMessage, /^candor: The greeting is too short/);
    assert.match(preview.body, /> The greeting is too short/);
    assert.match(preview.body, /Passed in 1\.2 s \(3 passing, 0 failing\)/);
    assert.match(preview.body, /greet\.js \| 2 \+-/);
    assert.ok(preview.body.endsWith(`\n\nCandor-Rant: ${s.rantId}`), preview.body);
    assert.ok(!JSON.stringify(preview).includes(SECRET), 'the secret of the rant and the commit message is redacted');
    assert.match(preview.commitMessage, /\[redacted\]/);
    assert.deepEqual(refsOf(s.bare), [], 'nothing pushed');
    assert.equal(git(s.agent, 'for-each-ref', 'refs/heads/candor').trim(), '', 'nothing handed off');
    assert.equal(fake.calls('pulls/create').length, 0);
    assert.ok(fake.requests.every((r) => r.authorization === `Bearer ${TOKEN}`));
  });

  it('a remote URL with a user and password (a token put there) is shown without them', async () => {
    const s = shippedRun({ remoteUrl: 'https://alice:ghp_InTheUrl0abcdefghijklmnopqrstuvwxyz01@github.com/alice/agent.git' });
    ({ fake } = await fakeWithAgent(s.bare));
    const preview = await previewPullRequest(context(s, fake), s.branch);
    assert.equal(preview.remoteUrl, 'https://github.com/alice/agent.git');
    assert.ok(!JSON.stringify(preview).includes('ghp_InTheUrl'));
  });

  it('push and open: hands the branch off, pushes that one ref (no tags, no hook), opens the pull request with the trailer, records pr then ci pending', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const ctx = context(s, fake);
    const preview = await previewPullRequest(ctx, s.branch);
    const before = untouched(s.agent, s.branch);
    assert.deepEqual(openPullRequestRuns(s.dataDir), []);

    const result = await pushAndOpen(ctx, preview);
    assert.deepEqual(result, { url: `${fake.origin}/html/alice/agent/pull/1`, number: 1, existed: false, pushed: 'hand-off-branch' });
    assert.deepEqual(refsOf(s.bare), [`refs/heads/${s.branch} ${s.commit}`], 'the branch and nothing else: no tag followed it');
    assert.equal(git(s.agent, 'rev-parse', `refs/heads/${s.branch}`).trim(), s.commit, 'handed off first');
    assert.deepEqual(untouched(s.agent, s.branch), before, 'files, index, HEAD and the other refs untouched');
    assert.equal(fs.existsSync(s.hookMarker), false, 'no pre-push hook ran');
    const created = fake.calls('pulls/create');
    assert.equal(created.length, 1);
    const body = created[0]?.body as { head: string; base: string; title: string; body: string };
    assert.equal(body.head, s.branch);
    assert.equal(body.base, 'main');
    assert.ok(body.body.endsWith(`Candor-Rant: ${s.rantId}`));
    assert.ok(!JSON.stringify(body).includes(SECRET));

    assert.deepEqual(updateLines(s.dataDir), ['pr', 'ci pending']);
    const run = readRuns(s.dataDir).find((r) => r.run === s.run);
    assert.deepEqual(run?.pr, { url: result.url, number: 1 });
    assert.equal(run?.ci?.state, 'pending');
    assert.deepEqual(openPullRequestRuns(s.dataDir).map((r) => r.run), [s.run]);
    assert.deepEqual(filesHolding(s.dataDir, TOKEN), [], 'the token is in no file of the data folder');
  });

  it('a second time: the open pull request is found and linked, never a second one', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const ctx = context(s, fake);
    const first = await pushAndOpen(ctx, await previewPullRequest(ctx, s.branch));
    const again = await previewPullRequest(ctx, s.branch);
    assert.equal(again.handOff, 'taken');
    assert.deepEqual(again.existing, { url: first.url, number: first.number });
    const second = await pushAndOpen(ctx, again);
    assert.deepEqual(second, { ...first, existed: true });
    assert.equal(fake.calls('pulls/create').length, 1);
    assert.equal(fake.state.pulls.length, 1);
  });

  it('taken and added to by the user: the agent repository\'s branch is pushed as it is, and the result says so', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const ctx = context(s, fake);
    await handOff(s.dataDir, s.agent, s.branch, noUnsavedBuffers);
    const mine = userCommitOn(s);
    const preview = await previewPullRequest(ctx, s.branch);
    assert.equal(preview.handOff, 'taken-with-user-commits');
    assert.equal(preview.commit, mine);
    assert.match(preview.commitMessage, /^My own touch on top/);
    assert.ok(preview.body.endsWith(`Candor-Rant: ${s.rantId}`), 'the body is still the change\'s');
    const result = await pushAndOpen(ctx, preview);
    assert.equal(result.pushed, 'user-branch');
    assert.deepEqual(refsOf(s.bare), [`refs/heads/${s.branch} ${mine}`]);
  });

  it('the branch moved after the preview: refused, nothing pushed', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const ctx = context(s, fake);
    const preview = await previewPullRequest(ctx, s.branch);
    await handOff(s.dataDir, s.agent, s.branch, noUnsavedBuffers);
    userCommitOn(s);
    await assert.rejects(pushAndOpen(ctx, preview), (err: Error & { kind?: string }) => err.kind === 'changed' && /changed since the preview .*nothing was pushed\. Look at the preview again/.test(err.message));
    assert.deepEqual(refsOf(s.bare), []);
    assert.equal(fake.calls('pulls/create').length, 0);
  });

  it('a dirty agent repository: the hand-off refuses as Take Evolution Branch does, and says what to do', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const ctx = context(s, fake);
    const preview = await previewPullRequest(ctx, s.branch);
    write(s.agent, 'scratch-notes.txt', 'work in progress\n');
    await assert.rejects(pushAndOpen(ctx, preview), (err: Error & { kind?: string }) => err.kind === 'dirty' && /scratch-notes\.txt/.test(err.message) && /commit or stash/.test(err.message));
    assert.deepEqual(refsOf(s.bare), []);
    assert.equal(git(s.agent, 'for-each-ref', 'refs/heads/candor').trim(), '');
  });

  it('a fork: the pull request goes to its parent, with head owner:branch', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare, { parent: 'acme/agent' }));
    fake.addRepo({ owner: 'acme', name: 'agent', defaultBranch: 'main', private: true });
    const ctx = context(s, fake);
    const preview = await previewPullRequest(ctx, s.branch);
    assert.deepEqual(preview.repository, { owner: 'alice', repo: 'agent', public: true, fork: true });
    assert.deepEqual(preview.target, { owner: 'acme', repo: 'agent' });
    const result = await pushAndOpen(ctx, preview);
    assert.equal(result.url, `${fake.origin}/html/acme/agent/pull/1`);
    const created = fake.calls('pulls/create')[0];
    assert.equal(created?.path, '/repos/acme/agent/pulls');
    assert.equal((created?.body as { head: string }).head, `alice:${s.branch}`);
  });

  it('the base: the branch the run started from when the target has it, else the target\'s default branch', async () => {
    const onRelease = shippedRun({ base: 'release' });
    ({ fake } = await fakeWithAgent(onRelease.bare, { branches: ['release'] }));
    const preview = await previewPullRequest(context(onRelease, fake), onRelease.branch);
    assert.equal(preview.base, 'release');
    await pushAndOpen(context(onRelease, fake), preview);
    assert.equal((fake.calls('pulls/create')[0]?.body as { base: string }).base, 'release');
    await fake.close();

    const onTopic = shippedRun({ base: 'topic' });
    ({ fake } = await fakeWithAgent(onTopic.bare));
    assert.equal((await previewPullRequest(context(onTopic, fake), onTopic.branch)).base, 'main');
  });

  it('follows CI to the end: check runs queued → in progress → failure, the change of state recorded', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const ctx = context(s, fake);
    await pushAndOpen(ctx, await previewPullRequest(ctx, s.branch));
    fake.setChecks(s.commit, [{ name: 'build', status: 'queued' }], [{ name: 'build', status: 'in_progress' }], [{ name: 'build', status: 'completed', conclusion: 'failure' }]);
    const time = new FakeTime(Date.now());
    const seen: string[] = [];
    const ci = await followRecordedCi(ctx, s.run, { timeoutMs: 60 * 60_000, clock: time.clock, sleep: time.sleep, onState: (state) => seen.push(`${state.state} ${state.checks[0]?.status ?? '-'}`) });
    assert.equal(ci.state, 'failed');
    assert.deepEqual(ci.checks.map((c) => [c.name, c.status, c.conclusion]), [['build', 'completed', 'failure']]);
    assert.match(ci.url, /\/alice\/agent\/runs\/\d+$/);
    assert.deepEqual(seen, ['pending queued', 'pending in_progress', 'failed completed']);
    assert.deepEqual(time.slept, [10_000, 20_000], 'back-off between reads');
    assert.deepEqual(updateLines(s.dataDir), ['pr', 'ci pending', 'ci failed']);
    assert.equal(readRuns(s.dataDir).find((r) => r.run === s.run)?.ci?.state, 'failed');
    assert.deepEqual(openPullRequestRuns(s.dataDir), [], 'nothing left to follow');
  });

  it('no check run and no status five minutes after the push: none, said plainly in the record', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const ctx = context(s, fake);
    await pushAndOpen(ctx, await previewPullRequest(ctx, s.branch));
    const time = new FakeTime(Date.now());
    const ci = await followRecordedCi(ctx, s.run, { timeoutMs: 60 * 60_000, clock: time.clock, sleep: time.sleep });
    assert.equal(ci.state, 'none');
    // Five minutes on the follower's clock since the push the record names (not since the real clock now: the machine may be slow).
    const pushed = readJsonLines<{ update?: string; ts?: string }>(path.join(s.dataDir, EVOLUTION_FILE)).records.find((line) => line.update === 'pr')?.ts ?? assert.fail('no pr line');
    const waited = time.now - Date.parse(pushed);
    assert.ok(waited >= 5 * 60_000, `gave up ${waited} ms after the push: not before five minutes`);
    assert.ok(waited - (time.slept.at(-1) ?? 0) < 5 * 60_000, 'and at the first read past them');
    assert.deepEqual(updateLines(s.dataDir), ['pr', 'ci pending', 'ci none']);
  });

  it('an evolution run\'s start: one read of the CI of each open pull request, recorded', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const ctx = context(s, fake);
    const opened = await pushAndOpen(ctx, await previewPullRequest(ctx, s.branch));
    fake.setChecks(s.commit, [{ name: 'build', status: 'completed', conclusion: 'success' }]);
    const reads = await readOpenPullRequestsCi(ctx);
    assert.deepEqual(reads.map((r) => [r.run, r.pr.number, r.ci?.state]), [[s.run, opened.number, 'passed']]);
    assert.deepEqual(updateLines(s.dataDir), ['pr', 'ci pending', 'ci passed']);
    assert.deepEqual(await readOpenPullRequestsCi(ctx), [], 'passed: nothing left to read');
  });
});
