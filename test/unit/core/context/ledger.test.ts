import assert from 'node:assert/strict';
import type { TokenCounter } from '../../../../src/core/context/estimator';
import { heuristicTokens, priorTokens } from '../../../../src/core/context/heuristic';
import { PayloadLedger } from '../../../../src/core/context/ledger';
import { messageParts, PER_MESSAGE_OVERHEAD, REPLY_PRIMING } from '../../../../src/core/context/messageParts';
import { renderTools } from '../../../../src/core/context/toolRendering';
import type { ChatMessage, ToolSpec } from '../../../../src/core/messages';
import { measureMessage } from '../../../helpers/core';

/** A tokenizer whose answers the test releases: one token per character. */
class HeldCounter implements TokenCounter {
  readonly held: Array<() => void> = [];
  asked = 0;
  constructor(readonly name = 'chars') {}
  count(texts: readonly string[]): Promise<number[]> {
    this.asked += texts.length;
    return new Promise((resolve) => this.held.push(() => resolve(texts.map((t) => t.length))));
  }
  /** Answers every question asked so far, and those the answers lead to. */
  async release(): Promise<void> {
    await new Promise((r) => setImmediate(r));
    while (this.held.length > 0) {
      for (const answer of this.held.splice(0)) answer();
      await new Promise((r) => setImmediate(r));
    }
  }
}

const exact = (message: ChatMessage): number => PER_MESSAGE_OVERHEAD + messageParts(message).reduce((n, p) => n + p.length, 0);
const heuristic = (message: ChatMessage): number => measureMessage(message).heuristic;
const systemExact = (text: string): number => PER_MESSAGE_OVERHEAD + 'system'.length + text.length;

const listFiles: ToolSpec = { type: 'function', function: { name: 'list_files', description: 'List a folder.', parameters: { type: 'object', properties: { path: { type: 'string' } } } } };
const readFile: ToolSpec = { type: 'function', function: { name: 'read_file', description: 'Read a file.', parameters: { type: 'object', properties: { path: { type: 'string', description: 'Relative path.' } } } } };

function messages(n: number, from = 0): ChatMessage[] {
  return Array.from({ length: n }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${from + i} ${'word '.repeat((from + i) % 7)}` }) as ChatMessage);
}

describe('gate/PayloadLedger', () => {
  it('without a tokenizer, the payload is the heuristic of its messages, system prompt and tool list, plus the reply\'s priming', () => {
    const ledger = new PayloadLedger();
    const history = messages(5);
    ledger.reset(history, '');
    const measure = ledger.measure('You are Candor.', renderTools('openai', [listFiles]));
    // OpenAI's recipe: 7 per function, 3 for its properties, 3 per property, 12 for the list; the texts by the heuristic.
    const tools = 7 + heuristicTokens('list_files:List a folder') + 3 + 3 + heuristicTokens('path:string:') + 12;
    const expected = history.reduce((n, m) => n + heuristic(m), 0) + heuristic({ role: 'system', content: 'You are Candor.' }) + tools + REPLY_PRIMING;
    assert.equal(measure.tokens, expected);
    assert.equal(measure.mark.tools.tokens, tools);
    // What no text carries, for an estimate fitted over the features: the list's frames and the priming.
    assert.equal(measure.constants, 7 + 3 + 3 + 12 + REPLY_PRIMING);
    assert.equal(measure.counter, 'heuristic');
    assert.equal(measure.pending, 0);
  });

  it('a message counts by the heuristic until its exact count lands, then the total is corrected', async () => {
    const counter = new HeldCounter();
    const ledger = new PayloadLedger();
    ledger.useCounter(counter);
    ledger.reset([], '');
    const message: ChatMessage = { role: 'user', content: 'a question of forty characters, roughly.' };
    ledger.append(message);
    const before = ledger.measure('', '');
    // Until then the prior's rates stand in, on the message's features, with its frame.
    assert.equal(before.tokens, Math.round(PER_MESSAGE_OVERHEAD + priorTokens(measureMessage(message).features)) + REPLY_PRIMING, 'the prior\'s estimate for this message alone, at once');
    assert.equal(before.pending, 1);
    await counter.release();
    await ledger.counted();
    const after = ledger.measure('', '');
    assert.equal(after.tokens, exact(message) + REPLY_PRIMING);
    assert.equal(after.pending, 0);
  });

  it('measures the change since a mark from the new messages alone: counts landing for older ones do not move it', async () => {
    const counter = new HeldCounter();
    const ledger = new PayloadLedger();
    ledger.useCounter(counter);
    const history = messages(200);
    ledger.reset(history, 'c1'); // a reload: 200 messages still to count
    const anchored = ledger.measure('S', '');
    assert.equal(anchored.pending, 200 + 1);
    const added = messages(2, 200);
    for (const message of added) ledger.append(message);
    await counter.release();
    await ledger.counted();
    const now = ledger.measure('S', '');
    assert.equal(now.pending, 0);
    const change = now.since(anchored.mark);
    assert.equal(change?.tokens, added.reduce((n, m) => n + exact(m), 0), 'the tail, exactly');
    assert.deepEqual(change?.parts, []);
    // The trap: a difference of totals moves by every count that landed for the old messages.
    assert.notEqual(now.tokens - anchored.tokens, change?.tokens);
  });

  it('a changed system prompt or tool list is part of the change, named, with its count now known', async () => {
    const counter = new HeldCounter();
    const ledger = new PayloadLedger();
    ledger.useCounter(counter);
    ledger.reset(messages(3), '');
    await counter.release();
    const longMemory = `You are Candor.\n# Memory\n${'a note '.repeat(100)}`;
    const anchored = ledger.measure(longMemory, renderTools('openai', [listFiles]));
    await counter.release();
    // Rendered again, as after a reload: the same list is the same part.
    const condensed = ledger.measure('You are Candor.\n# Memory\nshort', renderTools('openai', [listFiles]));
    await counter.release();
    await ledger.counted();
    const change = ledger.measure('You are Candor.\n# Memory\nshort', renderTools('openai', [listFiles])).since(anchored.mark);
    assert.deepEqual(change?.parts, ['system']);
    assert.equal(change?.tokens, systemExact('You are Candor.\n# Memory\nshort') - systemExact(longMemory));
    assert.ok(condensed.tokens < anchored.tokens);
  });

  it('a tool added to the list is part of the change, named, with its own count; the definitions\' counts add up to the list\'s', async () => {
    const counter = new HeldCounter();
    const ledger = new PayloadLedger();
    ledger.useCounter(counter);
    ledger.reset(messages(2), '');
    const anchored = ledger.measure('S', renderTools('openai', [listFiles]));
    const both = renderTools('openai', [listFiles, readFile]);
    ledger.measure('S', both);
    await counter.release();
    await ledger.counted();
    const now = ledger.measure('S', both);
    const change = now.since(anchored.mark);
    assert.deepEqual(change?.parts, ['tools']);
    // One token per character (the test's tokenizer), plus OpenAI's constants for a function with one property.
    const readFileExact = 7 + 'read_file:Read a file'.length + 3 + 3 + 'path:string:Relative path'.length;
    assert.equal(change?.tokens, readFileExact, 'exactly the new definition');
    assert.equal(change?.constants, 7 + 3 + 3, 'of which its frame');
    const counts = ledger.toolCounts(both);
    assert.deepEqual(counts.tools.map((t) => t.name), ['list_files', 'read_file']);
    assert.equal(counts.tools[1]?.tokens, readFileExact);
    assert.equal(counts.list, 12);
    assert.equal(counts.tools.reduce((n, t) => n + t.tokens, counts.list), now.mark.tools.tokens);
    assert.equal(counts.tokens, now.mark.tools.tokens);
  });

  it('a tool list is counted once, however many requests send it', async () => {
    const counter = new HeldCounter();
    const ledger = new PayloadLedger();
    ledger.useCounter(counter);
    ledger.reset([], '');
    ledger.measure('', renderTools('openai', [listFiles, readFile]));
    await counter.release();
    await ledger.counted();
    const asked = counter.asked;
    // Each request renders it again here; the conversation keeps one rendering while the list is unchanged.
    for (let i = 0; i < 5; i++) ledger.measure('', renderTools('openai', [listFiles, readFile]));
    await counter.release();
    await ledger.counted();
    assert.equal(counter.asked, asked, 'no text of the list was counted again');
  });

  it('a compaction starts a new epoch: a mark from before it measures nothing', () => {
    const ledger = new PayloadLedger();
    ledger.reset(messages(10), '');
    const mark = ledger.measure('S', '').mark;
    ledger.reset(messages(3), 'compaction-1');
    assert.equal(ledger.measure('S', '').since(mark), undefined);
  });

  it('keeps the counts of messages a compaction kept, and counts only what is new', async () => {
    const counter = new HeldCounter();
    const ledger = new PayloadLedger();
    ledger.useCounter(counter);
    const history = messages(10);
    ledger.reset(history, '');
    await counter.release();
    await ledger.counted();
    const asked = counter.asked;
    const summary: ChatMessage = { role: 'user', content: '[Summary of earlier conversation]\n\nthings' };
    ledger.reset([summary, ...history.slice(6)], 'c1');
    await counter.release();
    await ledger.counted();
    assert.equal(counter.asked - asked, messageParts(summary).length, 'only the summary was counted');
    assert.equal(ledger.measure('', '').tokens, exact(summary) + history.slice(6).reduce((n, m) => n + exact(m), 0) + REPLY_PRIMING);
  });

  it('a switch of tokenizer recounts in the background; counts of the old one arriving late are dropped', async () => {
    const first = new HeldCounter('first');
    const second = new HeldCounter('second');
    const ledger = new PayloadLedger();
    ledger.useCounter(first);
    const history = messages(4);
    ledger.reset(history, '');
    ledger.useCounter(second);
    await first.release(); // answers for the tokenizer no longer in use
    assert.equal(ledger.measure('', '').pending, 4);
    await second.release();
    await ledger.counted();
    const measure = ledger.measure('', '');
    assert.equal(measure.counter, 'second');
    assert.equal(measure.tokens, history.reduce((n, m) => n + exact(m), 0) + REPLY_PRIMING);
  });

  it('a tokenizer that fails leaves the heuristic in charge, and says so once', async () => {
    const errors: unknown[] = [];
    const ledger = new PayloadLedger((err) => errors.push(err));
    ledger.useCounter({ name: 'broken', count: async () => Promise.reject(new Error('ranks missing')) });
    ledger.reset(messages(3), '');
    await ledger.counted();
    assert.equal(errors.length, 1);
    const measure = ledger.measure('', '');
    assert.equal(measure.counter, 'heuristic');
    assert.equal(measure.pending, 0);
  });

  it('a long reloaded history is measured newest first, a slice at a time: the rest counts by its length until then', async () => {
    const history = Array.from({ length: 4_000 }, (_, i): ChatMessage => ({ role: i % 2 ? 'assistant' : 'user', content: `${i} ${'text, and 漢字 '.repeat(20)}` }));
    const ledger = new PayloadLedger();
    ledger.reset(history, '');
    const first = ledger.measure('S', '');
    assert.ok(first.rough > 0 && first.rough < history.length, `${first.rough} messages still counted by length`);
    assert.equal(first.pending, first.rough + 0, 'no tokenizer: only the unmeasured ones are pending');
    // The tail a projection reads is exact at once.
    ledger.append({ role: 'user', content: 'new' });
    const change = ledger.measure('S', '').since(first.mark);
    assert.equal(change?.tokens, measureMessage({ role: 'user', content: 'new' }).heuristic);
    await ledger.counted();
    const done = ledger.measure('S', '');
    assert.equal(done.rough, 0);
    const full = [...history, { role: 'user', content: 'new' } as ChatMessage].reduce((n, m) => n + heuristic(m), 0) + heuristic({ role: 'system', content: 'S' });
    assert.equal(done.tokens, full + REPLY_PRIMING);
  });
});
