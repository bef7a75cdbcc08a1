import assert from 'node:assert/strict';
import { heuristicEstimator, type Estimator } from '../../../src/core/context/estimator';
import { IncrementalEstimate } from '../../../src/core/context/incremental';
import type { ChatMessage } from '../../../src/core/messages';

function countingEstimator(): Estimator & { calls: number } {
  const inner = heuristicEstimator();
  const spy = {
    name: 'spy',
    calls: 0,
    countText: (text: string) => inner.countText(text),
    countMessage(message: ChatMessage) {
      spy.calls++;
      return inner.countMessage(message);
    },
  };
  return spy;
}

const history = (): ChatMessage[] => [
  { role: 'user', content: 'Read the config please' },
  { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"path":"a.json"}' } }] },
  { role: 'tool', tool_call_id: 'c1', content: '{"port": 8080}' },
  { role: 'assistant', content: '端口是 8080。' },
];

describe('gate/incremental', () => {
  it('equals the sum of per-message counts', () => {
    const estimator = heuristicEstimator();
    const messages = history();
    const sum = messages.reduce((total, m) => total + estimator.countMessage(m), 0);
    assert.equal(new IncrementalEstimate(estimator).total(messages), sum);
  });

  it('counts a request\'s new messages only', () => {
    const spy = countingEstimator();
    const estimate = new IncrementalEstimate(spy);
    const messages = history();
    estimate.total(messages);
    assert.equal(spy.calls, 4);
    estimate.total(messages);
    assert.equal(spy.calls, 4);
    messages.push({ role: 'user', content: 'thanks' });
    estimate.total(messages);
    assert.equal(spy.calls, 5);
    assert.equal(estimate.tokenizedMessages, 5);
  });

  it('does not recount a message re-created with the same content (reloaded session)', () => {
    const spy = countingEstimator();
    const estimate = new IncrementalEstimate(spy);
    const live = history();
    const first = estimate.total(live);
    const reloaded = JSON.parse(JSON.stringify(live)) as ChatMessage[];
    assert.equal(estimate.total(reloaded), first);
    assert.equal(spy.calls, 4);
  });

  it('recounts a message whose content changed', () => {
    const spy = countingEstimator();
    const estimate = new IncrementalEstimate(spy);
    estimate.total([{ role: 'user', content: 'a' }]);
    estimate.total([{ role: 'user', content: 'b' }]);
    assert.equal(spy.calls, 2);
  });
});
