import assert from 'node:assert/strict';
import { CompactionError, compactHistory, isSummary, planCompaction, shouldCompact, SUMMARY_PREFIX } from '../../../../src/core/context/compaction';
import type { ChatMessage } from '../../../../src/core/messages';

const user = (text: string): ChatMessage => ({ role: 'user', content: text });
const reply = (text: string): ChatMessage => ({ role: 'assistant', content: text });
const calls = (...ids: string[]): ChatMessage => ({
  role: 'assistant',
  content: null,
  tool_calls: ids.map((id) => ({ id, type: 'function' as const, function: { name: 'read_file', arguments: `{"path":"${id}.ts"}` } })),
});
const result = (id: string): ChatMessage => ({ role: 'tool', tool_call_id: id, content: `contents of ${id}` });

/** Six turns; turn 3 is a tool loop. */
function sixTurns(): ChatMessage[] {
  return [
    user('t1'), reply('r1'),
    user('t2'), reply('r2'),
    user('t3'), calls('a', 'b'), result('a'), result('b'), reply('r3'),
    user('t4'), reply('r4'),
    user('t5'), reply('r5'),
    user('t6'), reply('r6'),
  ];
}

async function rejected(promise: Promise<unknown>): Promise<CompactionError> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof CompactionError);
    return err;
  }
  assert.fail('expected a CompactionError');
}

describe('gate/compaction', () => {
  it('keeps the newest keepTurns turns verbatim, a turn starting at a user message', () => {
    const history = sixTurns();
    const plan = planCompaction(history, 4);
    assert.equal(plan.cut, 4);
    assert.deepEqual(plan.keep[0], user('t3'));
    assert.equal(plan.keep.filter((m) => m.role === 'user').length, 4);
    assert.deepEqual([...plan.summarize, ...plan.keep], history);
  });

  it('never separates an assistant message with tool_calls from its tool replies', () => {
    const history = sixTurns();
    const plan = planCompaction(history, 3);
    assert.deepEqual(plan.keep[0], user('t4'));
    assert.ok(plan.summarize.some((m) => m.role === 'tool') && !plan.keep.some((m) => m.role === 'tool'), 'the whole pair is summarized');
    // A user message typed while tools ran lands between the call and a reply.
    const interleaved: ChatMessage[] = [user('t1'), calls('x'), user('t2 (typed while the tool ran)'), result('x'), reply('r2'), user('t3'), reply('r3')];
    const kept = planCompaction(interleaved, 2);
    assert.equal(kept.cut, 1, 'the cut moves back to the call');
    assert.deepEqual(kept.keep[0], calls('x'));
  });

  it('a summary is not a turn: summarizing again takes a turn newer than the summary beyond the kept ones', async () => {
    const first = await compactHistory(sixTurns(), 2, async () => 'what happened in t1 to t4');
    const compacted = first.history;
    assert.equal(planCompaction(compacted, 2).cut, 0, 'the summary and the two kept turns: nothing to summarize');
    // The trap: counting the summary as a turn summarizes the summary again on the next request.
    const naive = compacted.findIndex((m, i) => i > 0 && m.role === 'user');
    assert.ok(naive > 0, 'a planner that took the summary for a turn would cut here');
    const grown = [...compacted, user('t7'), reply('r7')];
    const plan = planCompaction(grown, 2);
    assert.deepEqual(plan.summarize.map((m) => String(m.content).slice(0, 10)), [`${SUMMARY_PREFIX}`.slice(0, 10), 't5', 'r5']);
    assert.ok(isSummary(compacted[0] as ChatMessage));
    assert.equal(isSummary(user(`${SUMMARY_PREFIX} typed by a user`)), true, 'the prefix is what marks it');
    assert.equal(isSummary(reply(`${SUMMARY_PREFIX}`)), false);
  });

  it('has nothing to compact when the history holds no more than keepTurns turns', async () => {
    const history = [user('t1'), calls('a'), result('a'), reply('r1'), user('t2')];
    assert.equal(planCompaction(history, 4).cut, 0);
    const err = await rejected(compactHistory(history, 4, async () => 'never'));
    assert.equal(err.kind, 'nothing-to-compact');
  });

  it('replaces the summarized prefix by one user message and leaves the input array untouched', async () => {
    const history = sixTurns();
    const copy = structuredClone(history);
    let seen: ChatMessage[] = [];
    const out = await compactHistory(history, 4, async (messages) => {
      seen = messages;
      return '  The user asked t1 and t2.  ';
    });
    assert.deepEqual(seen, copy.slice(0, 4));
    assert.equal(out.summarizedCount, 4);
    assert.deepEqual(out.history[0], { role: 'user', content: `${SUMMARY_PREFIX}\n\nThe user asked t1 and t2.` });
    assert.deepEqual(out.history.slice(1), copy.slice(4));
    assert.deepEqual(history, copy);
  });

  it('a failing summary leaves the history intact (summary-failed)', async () => {
    const history = sixTurns();
    const copy = structuredClone(history);
    const err = await rejected(compactHistory(history, 2, async () => { throw new Error('HTTP 500'); }));
    assert.equal(err.kind, 'summary-failed');
    assert.match(err.message, /HTTP 500/);
    assert.deepEqual(history, copy);
  });

  it('an empty summary is refused (empty-summary)', async () => {
    const err = await rejected(compactHistory(sixTurns(), 2, async () => '  \n'));
    assert.equal(err.kind, 'empty-summary');
  });

  it('a cancelled summary is "cancelled", not a failure', async () => {
    const controller = new AbortController();
    const err = await rejected(compactHistory(sixTurns(), 2, async (_messages, signal) => {
      controller.abort();
      throw signal?.reason ?? new Error('aborted');
    }, controller.signal));
    assert.equal(err.kind, 'cancelled');
  });

  it('compacts when the projection passes the threshold share of the window, not at it', () => {
    assert.equal(shouldCompact(102_400, 128_000, 80), false);
    assert.equal(shouldCompact(102_401, 128_000, 80), true);
    assert.equal(shouldCompact(5, 0, 80), false);
  });
});
