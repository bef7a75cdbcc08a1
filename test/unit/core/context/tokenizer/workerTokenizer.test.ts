import * as assert from 'node:assert/strict';
import { o200kTokenizer } from '../../../../../bench/mixedSession';
import { PayloadLedger } from '../../../../../src/core/context/ledger';
import { messageParts, PER_MESSAGE_OVERHEAD, REPLY_PRIMING } from '../../../../../src/core/context/messageParts';
import { WorkerTokenizer } from '../../../../../src/core/context/tokenizer/workerTokenizer';
import { installedTokenizerModules } from '../../../../helpers/installedModules';
import type { ChatMessage } from '../../../../../src/core/messages';

describe('the tokenizer in a worker thread', function () {
  this.timeout(60_000);
  let worker: WorkerTokenizer;
  const inThread = o200kTokenizer();
  const count = (text: string): number => (text === '' ? 0 : inThread.encode(text, [], []).length);
  before(() => {
    worker = new WorkerTokenizer('o200k_base', installedTokenizerModules());
  });
  after(() => worker.dispose());

  it('loading does not block the calling thread', async () => {
    // The calling thread keeps taking turns of its event loop while a fresh worker
    // builds its tables; tables built on this thread would let none pass meanwhile.
    const loading = new WorkerTokenizer('o200k_base', installedTokenizerModules());
    let loaded = false;
    let turns = 0;
    const turn = (): void => {
      if (loaded) return;
      turns++;
      setImmediate(turn);
    };
    setImmediate(turn);
    await loading.ready.finally(() => { loaded = true; });
    loading.dispose();
    assert.ok(turns >= 10, `the event loop ran while the tables were built (${turns} turns)`);
  });

  it('counts exactly as js-tiktoken does in-thread', async () => {
    const texts = ['hello world', '漢字とかなの混じった文', '{"json": [1, 2, 3]}', '<|endoftext|> is plain text here', ''];
    assert.deepEqual(await worker.count(texts), texts.map(count));
  });

  it('a reloaded history counts by the heuristic at once, then exactly, message by message, as the counts land', async () => {
    const history: ChatMessage[] = [];
    for (let i = 0; i < 2_000; i++) {
      history.push(i % 3 === 2
        ? { role: 'tool', tool_call_id: `c${i}`, content: `{"line": ${i}, "text": "值 ${i}"}` }
        : { role: i % 3 ? 'assistant' : 'user', content: `message ${i}: ${'lorem ipsum '.repeat(i % 9)}日本語` });
    }
    const ledger = new PayloadLedger();
    ledger.useCounter(worker);
    ledger.reset(history, '');
    const first = ledger.measure('You are Candor.', '');
    assert.ok(first.pending > 1_000, 'the exact counts are still on their way');
    await ledger.counted();
    const after = ledger.measure('You are Candor.', '');
    assert.equal(after.pending, 0);
    const exact = history.reduce((n, m) => n + PER_MESSAGE_OVERHEAD + messageParts(m).reduce((s, p) => s + count(p), 0), 0);
    assert.equal(after.tokens, exact + PER_MESSAGE_OVERHEAD + count('system') + count('You are Candor.') + REPLY_PRIMING);
  });

  it('a tokenizer that cannot load fails loudly', async () => {
    const broken = new WorkerTokenizer('o200k_base', { tiktoken: '/nonexistent/tiktoken.js', ranks: () => '/nonexistent/ranks.js' });
    await assert.rejects(broken.count(['x']), /could not load/);
    broken.dispose();
  });
});
