import * as assert from 'node:assert/strict';
import { previewPullRequest, pushAndOpen, type PullRequestContext } from '../../../../src/core/evolution/pullRequestFlow';
import { noUnsavedBuffers } from '../../../../src/core/git';
import { SecretSet } from '../../../../src/core/redact';
import type { FakeGitHub } from '../../../helpers/fakeGitHub';
import { git, removeTempDirs } from './helpers';
import { SECRET, TOKEN, fakeWithAgent, refsOf, shippedRun, type Shipped } from './pullRequestHelpers';

/** Each fault of Open Pull Request: an error the caller can switch on, whose message names the fix, and nothing pushed. */

function context(s: Shipped, fake: FakeGitHub | undefined, extra: Partial<PullRequestContext> = {}): PullRequestContext {
  return {
    dataDir: s.dataDir,
    repository: s.agent,
    remote: 'origin',
    ...(fake ? { apiUrl: fake.apiUrl } : {}),
    token: () => Promise.resolve(TOKEN),
    unsaved: noUnsavedBuffers,
    secrets: new SecretSet([SECRET]),
    authFix: 'Set GITHUB_TOKEN.',
    ...extra,
  };
}

type Failure = Error & { readonly kind?: string; readonly name: string };

async function refusal(promise: Promise<unknown>): Promise<Failure> {
  try {
    await promise;
  } catch (err) {
    return err as Failure;
  }
  return assert.fail('expected a refusal');
}

describe('Open Pull Request: faults, each with the fix', function () {
  this.timeout(60_000);
  let fake: FakeGitHub | undefined;
  afterEach(async () => {
    await fake?.close();
    fake?.assertValid();
    fake = undefined;
    removeTempDirs();
  });

  it('a branch no run shipped, or no evolution branch at all', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const unknown = await refusal(previewPullRequest(context(s, fake), 'candor/rant-nobody'));
    assert.equal(unknown.kind, 'no-run');
    assert.match(unknown.message, /No evolution run shipped candor\/rant-nobody: .*Check the branch name/);
    const foreign = await refusal(previewPullRequest(context(s, fake), 'main'));
    assert.equal(foreign.kind, 'no-run');
    assert.match(foreign.message, /is not an evolution branch/);
    assert.equal(fake.requests.length, 0, 'GitHub is not asked');
  });

  it('no such remote: names the remote, how to add it and the setting', async () => {
    const s = shippedRun({ remoteUrl: null });
    ({ fake } = await fakeWithAgent(s.bare));
    const err = await refusal(previewPullRequest(context(s, fake), s.branch));
    assert.equal(err.kind, 'no-remote');
    assert.match(err.message, /has no remote named "origin": add it \(git remote add origin .*candor\.evolution\.remote \(--remote/);
  });

  it('a remote that is not GitHub: a GitLab URL (no GitLab adapter), with or without a subgroup', async () => {
    const gitlab = shippedRun({ remoteUrl: 'https://gitlab.com/alice/agent.git' });
    const plain = await refusal(previewPullRequest(context(gitlab, undefined), gitlab.branch));
    assert.equal(plain.kind, 'not-github');
    assert.match(plain.message, /on gitlab\.com, not github\.com: set candor\.github\.apiUrl .* or pass --github-api/);
    const subgroup = shippedRun({ remoteUrl: 'git@gitlab.com:team/tools/agent.git' });
    const nested = await refusal(previewPullRequest(context(subgroup, undefined), subgroup.branch));
    assert.equal(nested.kind, 'not-github');
    assert.match(nested.message, /is git@gitlab\.com:team\/tools\/agent\.git, which is not a GitHub repository.*GitHub \(and GitHub Enterprise\) only/);
  });

  it('no token: names the fix the caller gave', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const err = await refusal(previewPullRequest(context(s, fake, { token: () => Promise.resolve(undefined) }), s.branch));
    assert.equal(err.kind, 'auth');
    assert.match(err.message, /No GitHub token for http:\/\/127\.0\.0\.1:\d+\. Set GITHUB_TOKEN\./);
    assert.equal(fake.requests.length, 0);
  });

  it('a token GitHub refuses (401), and one without the scope (403): named, and the token never in the message', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    const wrong = 'ghp_Wrong0token0for0the0test0abcdefghijklm';
    const refused = await refusal(previewPullRequest(context(s, fake, { token: () => Promise.resolve(wrong) }), s.branch));
    assert.equal(refused.kind, 'auth');
    assert.match(refused.message, /HTTP 401.*missing, expired or revoked\. Set GITHUB_TOKEN\./);
    assert.ok(!refused.message.includes(wrong));
    fake.fail('repos/get', { kind: 'missing-scope', accepted: 'repo', has: 'read:user' });
    const scope = await refusal(previewPullRequest(context(s, fake), s.branch));
    assert.equal(scope.kind, 'scope');
    assert.match(scope.message, /HTTP 403\): the token lacks the scope this needs: "repo" \(it has "read:user"\)\. Set GITHUB_TOKEN\./);
  });

  it('a push the remote rejects (non-fast-forward): refused with the reason, never forced, the remote left as it was', async () => {
    const s = shippedRun();
    ({ fake } = await fakeWithAgent(s.bare));
    // Someone else's commit on the same branch of the remote.
    const tree = git(s.agent, 'rev-parse', 'main^{tree}').trim();
    const theirs = git(s.agent, 'commit-tree', tree, '-p', 'main', '-m', 'someone else').trim();
    git(s.agent, '-c', 'push.followTags=false', 'push', '-q', '--no-verify', s.bare, `${theirs}:refs/heads/${s.branch}`);
    const ctx = context(s, fake);
    const preview = await previewPullRequest(ctx, s.branch);
    const err = await refusal(pushAndOpen(ctx, preview));
    assert.equal(err.kind, 'rejected');
    assert.match(err.message, /rejected the push of candor\/rant-\S+: .*non-fast-forward.*never forced/);
    assert.deepEqual(refsOf(s.bare), [`refs/heads/${s.branch} ${theirs}`], 'not forced');
    assert.equal(fake.calls('pulls/create').length, 0);
  });
});
