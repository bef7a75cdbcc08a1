// A leading <think>…</think> block split off the content as it streams.
import * as assert from 'node:assert/strict';
import { ThinkSplitter, type Piece } from '../../../../src/core/provider/thinkSplit';

function split(deltas: readonly string[]): { reasoning: string; text: string } {
  const s = new ThinkSplitter();
  const pieces: Piece[] = [...deltas.flatMap((d) => s.push(d)), ...s.end()];
  return {
    reasoning: pieces.filter((p) => p.kind === 'reasoning').map((p) => p.text).join(''),
    text: pieces.filter((p) => p.kind === 'text').map((p) => p.text).join(''),
  };
}

describe('thinking left inline at the start of the content', () => {
  it('splits the block off, tags cut across deltas included', () => {
    const whole = '<think>\nThe files are listed\n</think>\n\nDone.';
    for (let size = 1; size <= whole.length; size++) {
      const deltas = Array.from({ length: Math.ceil(whole.length / size) }, (_, i) => whole.slice(i * size, (i + 1) * size));
      assert.deepEqual(split(deltas), { reasoning: '\nThe files are listed\n', text: 'Done.' }, `deltas of ${size}`);
    }
  });

  it('only a block at the very start counts: a <think> later, or text without one, is the answer', () => {
    assert.deepEqual(split(['Use the ', '<think> tag like this']), { reasoning: '', text: 'Use the <think> tag like this' });
    assert.deepEqual(split(['<thin', 'king> is no tag']), { reasoning: '', text: '<thinking> is no tag' });
    assert.deepEqual(split(['plain answer']), { reasoning: '', text: 'plain answer' });
  });

  it('a block that never closes is all thinking (a reply cut while it thought)', () => {
    assert.deepEqual(split(['<think>still thinking when the limit came</thi']), { reasoning: 'still thinking when the limit came</thi', text: '' });
  });
});
