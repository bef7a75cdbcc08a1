import * as assert from 'node:assert/strict';
import { isKindError } from '../../../../src/core/kindError';
import { GitHubError } from '../../../../src/core/github/errors';
import { OPERATIONS, requestProblems, responseProblems, specExample } from '../../../helpers/githubSchema';
import { TOKEN, useFakeGitHub } from './setup';

const SHA = '2222222222222222222222222222222222222222';
const op = (id: (typeof OPERATIONS)[number]['id']) => OPERATIONS.find((o) => o.id === id)!;

describe('The fake GitHub answers only what GitHub\'s OpenAPI description allows', () => {
  const gh = useFakeGitHub();

  it('catches a check run without its status, and the client sees no answer it could misread', async () => {
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
    gh.fake.setChecks(SHA, [{ name: 'test', status: 'completed', conclusion: 'success' }]);
    gh.fake.fail('checks/list-for-ref', {
      kind: 'tamper',
      edit: (body) => {
        const page = body as { check_runs: Array<Record<string, unknown>> };
        delete page.check_runs[0]?.status;
        return page;
      },
    });
    await assert.rejects(gh.client().checkRuns('alice', 'agent', SHA), (err) => isKindError(err, GitHubError, 'http') && err.status === 500);
    assert.equal(gh.fake.violations.length, 1);
    assert.match(gh.fake.violations[0] ?? '', /checks\/list-for-ref 200: \/check_runs\/0 must have required property 'status'/);
    gh.fake.violations.length = 0; // seen: the suite's own check after each test would fail on it
  });

  it('catches a request that breaks it: a pull request with a number for a title, an unknown query', async () => {
    gh.fake.addRepo({ owner: 'alice', name: 'agent' });
    const post = await fetch(`${gh.fake.apiUrl}/repos/alice/agent/pulls`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ title: 5, head: 'x', base: 'main' }) });
    assert.equal(post.status, 500);
    const list = await fetch(`${gh.fake.apiUrl}/repos/alice/agent/pulls?state=opened&colour=blue`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(list.status, 500);
    assert.deepEqual(gh.fake.violations.map((v) => v.replace(/ \{.*$/, '')), [
      'pulls/create body: /title must be string',
      'pulls/list query: (root) must NOT have additional properties',
      'pulls/list query: /state must be equal to one of the allowed values',
    ]);
    gh.fake.violations.length = 0;
  });

  it('judges answers by status: an undescribed error is held to GitHub\'s error body, an undescribed success is refused', () => {
    assert.deepEqual(responseProblems(op('repos/get'), 401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest' }), []);
    assert.notDeepEqual(responseProblems(op('repos/get'), 401, { message: 401 }), []);
    assert.match(responseProblems(op('repos/get'), 202, {})[0] ?? '', /has no answer 202/);
    assert.deepEqual(requestProblems(op('checks/list-for-ref'), { owner: 'a', repo: 'b', ref: SHA }, { per_page: '100', page: '1', filter: 'latest' }, undefined), []);
    assert.notDeepEqual(requestProblems(op('checks/list-for-ref'), { owner: 'a', repo: 'b', ref: SHA }, { per_page: 'many' }, undefined), []);
  });

  it('the description\'s own check-run example fits: the fake\'s answers start from the examples', () => {
    const run = specExample('check-run');
    assert.deepEqual(responseProblems(op('checks/list-for-ref'), 200, { total_count: 1, check_runs: [run] }), []);
  });
});
