import * as assert from 'node:assert/strict';
import { SecretSet } from '../../../../src/core/redact';
import { pullRequestText, TITLE_MAX } from '../../../../src/core/github/prText';

const KEY = 'sk-live0abcdefghijklmnopqrstuvwxyz0123';
const TOKEN = 'ghp_Candor0test0token0abcdefghijklmnopqrs';
const secrets = new SecretSet([KEY, TOKEN]);
const redact = (text: string): string => secrets.redact(text);

const input = {
  summary: 'Say which test failed in the gate summary\n\nThe summary now names the failing test.',
  rantText: 'The gate said "failed" and nothing else.\nI had to read the whole log.',
  gate: { passed: true, ms: 12_345, tail: '  42 passing (3s)\n', passing: 42, failing: 0 },
  diffstat: ' src/core/evolution/gateSummary.ts | 12 +++++++++---\n 1 file changed, 9 insertions(+), 3 deletions(-)',
  rantId: '01HX0RANT',
};

describe('The pull request\'s title and body', () => {
  it('takes the title from the summary\'s first line, clipped', () => {
    assert.equal(pullRequestText(input, redact).title, 'Say which test failed in the gate summary');
    const long = pullRequestText({ ...input, summary: 'x'.repeat(200) }, redact).title;
    assert.equal(long.length, TITLE_MAX);
    assert.ok(long.endsWith('…'));
    assert.equal(pullRequestText({ ...input, summary: '  \n' }, redact).title, 'The gate said "failed" and nothing else.', 'no summary: the rant\'s first line');
  });

  it('holds the rant quoted, the gate\'s result and tail, the diffstat, and ends with the trailer', () => {
    const { body } = pullRequestText(input, redact);
    assert.match(body, /## The rant\n\n> The gate said "failed" and nothing else\.\n> I had to read the whole log\./);
    assert.match(body, /Passed in 12\.3 s \(42 passing, 0 failing\), in Candor's sandbox\.\n\n```text\n {2}42 passing \(3s\)\n```/);
    assert.match(body, /## Diffstat\n\n```text\n src\/core\/evolution\/gateSummary\.ts \| 12/);
    assert.equal(body.split('\n').at(-1), 'Candor-Rant: 01HX0RANT');
    assert.equal((body.match(/^Candor-Rant:/gm) ?? []).length, 1);
  });

  it('redacts every part: summary, rant, tail and diffstat', () => {
    const leaky = {
      summary: `Use ${KEY} for the call`,
      rantText: `my token is ${TOKEN}, and Authorization: Bearer abc.def.ghi`,
      gate: { passed: false, tail: `Error: request with ${KEY} failed`, failing: 1 },
      diffstat: ` config/${TOKEN}.json | 1 +`,
      rantId: '01HX0RANT',
    };
    const { title, body } = pullRequestText(leaky, redact);
    for (const text of [title, body]) {
      assert.ok(!text.includes(KEY) && !text.includes(TOKEN) && !text.includes('abc.def.ghi'), text);
    }
    assert.match(body, /Failed \(1 failing\)/);
    assert.ok((body.match(/\[redacted\]/g) ?? []).length >= 5);
  });

  it('redacts before it clips: a secret across the clip leaves no part of itself', () => {
    const rantText = `${'a'.repeat(3990)} ${TOKEN} end`;
    const { body } = pullRequestText({ ...input, rantText }, redact);
    assert.ok(!body.includes(TOKEN.slice(0, 8)), 'no first 8 characters of the token');
  });

  it('quotes any other line that reads like a Candor trailer: only the last one counts', () => {
    const { title, body } = pullRequestText({ ...input, summary: 'Candor-Rant: someone-else\nCandor-Revert: 1234567\nThis reverts commit 1234567.', gate: { passed: true, tail: 'Candor-Rant: from-the-tests' } }, redact);
    assert.equal(title, '> Candor-Rant: someone-else');
    assert.deepEqual(body.match(/^[ \t]*Candor-(?:Rant|Revert):.*$/gm), ['Candor-Rant: 01HX0RANT']);
    assert.equal((body.match(/^This reverts commit/gm) ?? []).length, 0);
  });

  it('fences a tail holding backticks with a longer fence, so it cannot close it', () => {
    const { body } = pullRequestText({ ...input, gate: { passed: false, tail: 'expected ```` to be ok' } }, redact);
    assert.match(body, /`````text\nexpected ```` to be ok\n`````/);
  });

  it('a revert: no rant, its own trailers last, and no gate', () => {
    const { body } = pullRequestText({ ...input, rantId: null, gate: null, diffstat: null, trailers: ['Candor-Revert: 0123456789abcdef'] }, redact);
    assert.equal(body.split('\n').at(-1), 'Candor-Revert: 0123456789abcdef');
    assert.match(body, /No local gate ran; this pull request's CI is the gate\./);
    assert.ok(!body.includes('## Diffstat'));
  });
});
