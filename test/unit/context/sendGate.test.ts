import assert from 'node:assert/strict';
import { heuristicEstimator } from '../../../src/core/context/estimator';
import { IncrementalEstimate } from '../../../src/core/context/incremental';
import { passSendGate, type SendGateInput } from '../../../src/core/context/sendGate';
import type { ChatMessage } from '../../../src/core/messages';
import { complete, gateRig, OPENAI, useTempDir } from './helpers';

function history(turns: number, words: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 0; i < turns; i++) {
    out.push({ role: 'user', content: `question ${i} ` + 'word '.repeat(words) });
    out.push({ role: 'assistant', content: `answer ${i} ` + 'word '.repeat(words) });
  }
  return out;
}

describe('gate/passSendGate', () => {
  const dir = useTempDir();
  const estimate = new IncrementalEstimate(heuristicEstimator());
  const base = (overrides: Partial<SendGateInput> & Pick<SendGateInput, 'gate' | 'history'>): SendGateInput => ({
    identity: OPENAI,
    estimate: (h) => estimate.total(h),
    contextWindow: 4000,
    thresholdPercent: 80,
    keepTurns: 2,
    summarize: async () => 'summary',
    ...overrides,
  });

  it('compacts once when the projection passes the threshold; the request after is silent', async () => {
    const { gate } = gateRig(dir());
    const h = history(10, 100); // ~2.6K by the heuristic
    complete(gate, OPENAI, estimate.total(h), 3500); // the provider says 3.5K > 3.2K
    let summaries = 0;
    const out = await passSendGate(base({ gate, history: h, summarize: async () => { summaries++; return 'summary'; } }));
    assert.equal(summaries, 1);
    assert.deepEqual(out.compaction, { summarizedCount: 16 });
    assert.equal(out.history.length, 5);
    assert.equal(out.projection.unanchoredBecause, 'after-compaction');
    assert.equal(out.projection.newWarning, false);
    assert.equal(out.stillOver, false);
  });

  it('still over the threshold right after a compaction means a warning, never a second summary', async () => {
    const { gate } = gateRig(dir());
    const h = history(3, 1200); // the two kept turns alone pass 3.2K
    complete(gate, OPENAI, estimate.total(h), 5000);
    let summaries = 0;
    const out = await passSendGate(base({ gate, history: h, summarize: async () => { summaries++; return 'summary'; } }));
    assert.equal(summaries, 1);
    assert.equal(out.stillOver, true);
  });

  it('does not compact below the threshold', async () => {
    const { gate } = gateRig(dir());
    const h = history(2, 10);
    const out = await passSendGate(base({ gate, history: h, summarize: async () => assert.fail('no summary') }));
    assert.equal(out.history, h);
    assert.equal(out.compaction, undefined);
  });

  it('a failed summary sends the history as it was and keeps the anchor', async () => {
    const { gate } = gateRig(dir());
    const h = history(10, 100);
    complete(gate, OPENAI, estimate.total(h), 3500);
    const out = await passSendGate(base({ gate, history: h, summarize: async () => { throw new Error('HTTP 503'); } }));
    assert.equal(out.history, h);
    assert.ok(out.compaction && 'error' in out.compaction && out.compaction.error.kind === 'summary-failed');
    assert.equal(out.projection.anchored, true);
  });
});
