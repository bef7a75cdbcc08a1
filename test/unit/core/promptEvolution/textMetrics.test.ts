import * as assert from 'node:assert/strict';
import { changedLines, checkFrozen, drift, frozenBlocks, tokens } from '../../../../src/core/promptEvolution/textMetrics';

// w = idf of a term in one document only = ln((1+2)/(1+1)) + 1 = 1 + ln 1.5 ≈ 1.405465; a shared term has idf 1.
const W = 1 + Math.log(1.5);

describe('prompt evolution text metrics', () => {
  describe('frozen sections', () => {
    const prompt = [
      'You are Candor.',
      '<!-- frozen -->',
      'Never run git commands that write.',
      '<!-- /frozen -->',
      'Be brief.',
      '<!-- frozen -->',
      'Answer in English.',
      '<!-- /frozen -->',
      '',
    ].join('\n');

    it('finds each block with its markers', () => {
      assert.deepEqual(frozenBlocks(prompt), [
        '<!-- frozen -->\nNever run git commands that write.\n<!-- /frozen -->',
        '<!-- frozen -->\nAnswer in English.\n<!-- /frozen -->',
      ]);
    });

    it('an unclosed block runs to the end of the text', () => {
      assert.deepEqual(frozenBlocks('a\n<!-- frozen -->\nrest'), ['<!-- frozen -->\nrest']);
    });

    it('edits outside the blocks pass', () => {
      assert.deepEqual(checkFrozen(prompt, prompt.replace('Be brief.', 'Be brief and exact.')), { kind: 'ok', blocks: 2 });
    });

    it('CRLF line endings are normalized first', () => {
      assert.equal(checkFrozen(prompt, prompt.replace(/\n/g, '\r\n')).kind, 'ok');
    });

    it('a removed block fails as "count"', () => {
      const removed = prompt.replace('<!-- frozen -->\nAnswer in English.\n<!-- /frozen -->\n', '');
      assert.deepEqual(checkFrozen(prompt, removed), { kind: 'count', expected: 2, found: 1 });
    });

    it('reordered blocks fail as "reordered"', () => {
      const [first, second] = frozenBlocks(prompt) as [string, string];
      const swapped = prompt.replace(first, '@@').replace(second, first).replace('@@', second);
      assert.deepEqual(checkFrozen(prompt, swapped), { kind: 'reordered', index: 0 });
    });

    it('a one-byte change inside a block fails as "changed"', () => {
      assert.deepEqual(checkFrozen(prompt, prompt.replace('English.', 'English!')), { kind: 'changed', index: 1 });
      // A damaged marker merges or drops a block: still a failure, never "ok".
      assert.equal(checkFrozen(prompt, prompt.replace('<!-- /frozen -->\nBe', '<!--/frozen -->\nBe')).kind, 'count');
    });
  });

  describe('changed lines', () => {
    it('a modified line counts once', () => assert.equal(changedLines('a\nb\nc\n', 'a\nB\nc\n'), 1));
    it('one line replaced by three counts max(1, 3) = 3', () => assert.equal(changedLines('a\nb\nc\n', 'a\nx\ny\nz\nc\n'), 3));
    it('two hunks add up: a→A is 1, (d,e)→(D,E,F) is 3, total 4', () => {
      assert.equal(changedLines('a\nb\nc\nd\ne\n', 'A\nb\nc\nD\nE\nF\n'), 4);
    });
    it('deleting two lines counts 2', () => assert.equal(changedLines('a\nb\nc\nd\n', 'a\nd\n'), 2));
    it('identical text counts 0', () => assert.equal(changedLines('same\ntext\n', 'same\ntext\n'), 0));
    it('a CRLF-only change counts 0', () => {
      assert.equal(changedLines('one\ntwo\nthree\n', 'one\r\ntwo\r\nthree\r\n'), 0);
      assert.equal(changedLines('one\r\ntwo\r\n', 'one\ntwo\n'), 0);
    });
  });

  describe('drift (TF-IDF cosine distance)', () => {
    it('identical texts: 0', () => assert.ok(Math.abs(drift('Be brief. Be exact.', 'Be brief. Be exact.')) < 1e-12));
    it('no shared word: 1', () => assert.equal(drift('alpha beta', 'gamma delta'), 1));
    it('empty against empty: 0; empty against text: 1', () => {
      assert.equal(drift('', '  '), 0);
      assert.equal(drift('', 'alpha'), 1);
    });
    it('"alpha beta" vs "alpha gamma": 1 − 1/(1+w²) ≈ 0.663903', () => {
      // vectors (alpha, beta, gamma): (1, w, 0) and (1, 0, w); cos = 1/(1+w²) = 1/2.975332 = 0.336097.
      assert.ok(Math.abs(drift('alpha beta', 'alpha gamma') - (1 - 1 / (1 + W * W))) < 1e-12);
      assert.ok(Math.abs(drift('alpha beta', 'alpha gamma') - 0.663903) < 1e-6);
    });
    it('"the cat the hat" vs "the cat": 1 − 3/(√2·√(5+w²)) ≈ 0.196800', () => {
      // tf (the, cat, hat): (2, 1, 1) and (1, 1, 0); idf (1, 1, w) → (2, 1, w)·(1, 1, 0) = 3;
      // |(2,1,w)| = √(5+w²) = 2.641085, |(1,1,0)| = √2 → cos = 3/3.735049 = 0.803200.
      assert.ok(Math.abs(drift('the cat the hat', 'The CAT.') - 0.1968) < 1e-6);
    });
    it('punctuation and case do not count; word order does not count', () => {
      assert.ok(drift('Be brief, be exact!', 'be exact be brief') < 1e-12);
    });
    it('a CJK-only edit moves drift: 请简洁回答 → 请详细回答 is 1 − 2/(2+w²) ≈ 0.496897', () => {
      assert.deepEqual(tokens('请简洁回答'), ['请', '简洁', '回答']);
      // (请, 回答) shared, 简洁 / 详细 one each: cos = 2/(2+w²) = 2/3.975332 = 0.503103.
      const value = drift('请简洁回答', '请详细回答');
      assert.ok(Math.abs(value - (1 - 2 / (2 + W * W))) < 1e-12, String(value));
      assert.ok(value > 0.49);
    });
  });
});
