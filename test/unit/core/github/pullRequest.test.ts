import * as assert from 'node:assert/strict';
import { isKindError } from '../../../../src/core/kindError';
import { GitHubError } from '../../../../src/core/github/errors';
import { openPullRequest, planPullRequest, resolveTarget } from '../../../../src/core/github/pullRequest';
import { useFakeGitHub } from './setup';

const BRANCH = 'candor/rant-01abc';
const input = { owner: 'alice', repo: 'agent', branch: BRANCH, title: 'candor: say what failed', body: 'body\n\nCandor-Rant: 01abc' };

describe('Opening a pull request on GitHub', () => {
  const gh = useFakeGitHub();

  it('opens one on the push repository, against its default branch, with the title and body', async () => {
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
    gh.fake.push('alice/agent', BRANCH);
    const opened = await openPullRequest(gh.client(), input);
    assert.deepEqual({ ...opened, url: undefined }, { url: undefined, number: 1, existed: false, base: 'main', repository: 'alice/agent' });
    assert.match(opened.url, /\/alice\/agent\/pull\/1$/);
    const [created] = gh.fake.state.pulls;
    assert.equal(created?.title, input.title);
    assert.equal(created?.body, input.body);
    assert.deepEqual(gh.fake.calls('pulls/create').map((r) => r.body), [{ title: input.title, head: BRANCH, base: 'main', body: input.body }]);
  });

  it('links the open pull request of the branch, looked up first, and creates none', async () => {
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
    gh.fake.push('alice/agent', BRANCH);
    const earlier = gh.fake.addPull('alice/agent', { headOwner: 'alice', branch: BRANCH, base: 'main' });
    const opened = await openPullRequest(gh.client(), input);
    assert.equal(opened.existed, true);
    assert.equal(opened.number, earlier.number);
    assert.deepEqual(gh.fake.calls('pulls/create'), []);
    assert.match(gh.fake.calls('pulls/list')[0]?.path ?? '', /head=alice%3Acandor%2Frant-01abc&state=open/);
  });

  it('a 422 "already exists" (opened meanwhile) is looked up the same way: one pull request, linked', async () => {
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
    gh.fake.push('alice/agent', BRANCH);
    const meanwhile = gh.fake.addPull('alice/agent', { headOwner: 'alice', branch: BRANCH, base: 'main' });
    gh.fake.fail('pulls/list', { kind: 'respond', status: 200, body: [] });
    const opened = await openPullRequest(gh.client(), input);
    assert.deepEqual([opened.existed, opened.number], [true, meanwhile.number]);
    assert.equal(gh.fake.calls('pulls/create').length, 1, 'it tried once');
    assert.equal(gh.fake.state.pulls.length, 1, 'and never made a second');
  });

  it('a 422 "already exists" that the lookup cannot find is an exists error with GitHub\'s words', async () => {
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
    gh.fake.push('alice/agent', BRANCH);
    gh.fake.addPull('alice/agent', { headOwner: 'alice', branch: BRANCH, base: 'main' });
    gh.fake.fail('pulls/list', { kind: 'respond', status: 200, body: [] }, 2);
    await assert.rejects(openPullRequest(gh.client(), input), (err) => isKindError(err, GitHubError, 'exists') && /A pull request already exists for alice:candor\/rant-01abc/.test(err.message));
  });

  it('from a fork, goes to the parent with head owner:branch', async () => {
    gh.fake.addRepo({ owner: 'upstream', name: 'agent', defaultBranch: 'trunk' });
    gh.fake.addRepo({ owner: 'alice', name: 'agent', parent: 'upstream/agent' });
    gh.fake.push('alice/agent', BRANCH);
    const opened = await openPullRequest(gh.client(), input);
    assert.deepEqual([opened.repository, opened.base, opened.existed], ['upstream/agent', 'trunk', false]);
    assert.deepEqual(gh.fake.calls('pulls/create').map((r) => [r.path, (r.body as { head: string }).head]), [['/repos/upstream/agent/pulls', `alice:${BRANCH}`]]);
    assert.match(gh.fake.calls('pulls/list')[0]?.path ?? '', /^\/repos\/upstream\/agent\/pulls\?head=alice%3A/);
    const target = await resolveTarget(gh.client(), input);
    assert.deepEqual([target.owner, target.repo, target.why, target.pushed], ['upstream', 'agent', 'parent', { owner: 'alice', repo: 'agent' }]);
  });

  it('from a fork with the same owner as its parent, names the head repository', async () => {
    gh.fake.addRepo({ owner: 'team', name: 'agent' });
    gh.fake.addRepo({ owner: 'team', name: 'agent-sandbox', parent: 'team/agent' });
    gh.fake.push('team/agent-sandbox', BRANCH);
    const opened = await openPullRequest(gh.client(), { ...input, owner: 'team', repo: 'agent-sandbox' });
    assert.equal(opened.repository, 'team/agent');
    assert.deepEqual(gh.fake.calls('pulls/create')[0]?.body, { title: input.title, head: `team:${BRANCH}`, base: 'main', body: input.body, head_repo: 'team/agent-sandbox' });
    assert.equal(gh.fake.state.pulls[0]?.headRepo, 'team/agent-sandbox');
  });

  it('candor.github.baseRepository overrides the fork\'s parent', async () => {
    gh.fake.addRepo({ owner: 'upstream', name: 'agent' });
    gh.fake.addRepo({ owner: 'alice', name: 'agent', parent: 'upstream/agent' });
    gh.fake.push('alice/agent', BRANCH);
    const opened = await openPullRequest(gh.client(), { ...input, baseRepository: 'alice/agent' });
    assert.equal(opened.repository, 'alice/agent');
    assert.equal(gh.fake.calls('pulls/create')[0]?.path, '/repos/alice/agent/pulls');
    await assert.rejects(resolveTarget(gh.client(), { ...input, baseRepository: 'not a repo' }), (err) => isKindError(err, GitHubError, 'not-github') && /"owner\/repo"/.test(err.message));
  });

  it('the base is the branch the run started from when the target has it', async () => {
    gh.fake.addRepo({ owner: 'alice', name: 'agent', branches: ['release-2'] });
    gh.fake.push('alice/agent', BRANCH);
    const plan = await planPullRequest(gh.client(), { ...input, base: 'release-2' });
    assert.deepEqual([plan.base, plan.baseNote], ['release-2', 'the branch the run started from, on alice/agent']);
    assert.deepEqual(gh.fake.calls('pulls/create'), [], 'a plan creates nothing');
    const opened = await openPullRequest(gh.client(), { ...input, base: 'release-2' });
    assert.equal(opened.base, 'release-2');
    assert.equal(gh.fake.state.pulls[0]?.base, 'release-2');
  });

  it('the base is the default branch when the target lacks the run\'s branch', async () => {
    gh.fake.addRepo({ owner: 'upstream', name: 'agent', defaultBranch: 'trunk' });
    gh.fake.addRepo({ owner: 'alice', name: 'agent', parent: 'upstream/agent', branches: ['my-feature'] });
    gh.fake.push('alice/agent', BRANCH);
    const plan = await planPullRequest(gh.client(), { ...input, base: 'my-feature' });
    assert.equal(plan.base, 'trunk');
    assert.match(plan.baseNote, /the run started from my-feature, which upstream\/agent does not have/);
    assert.equal((await openPullRequest(gh.client(), { ...input, base: 'my-feature' })).base, 'trunk');
  });
});
