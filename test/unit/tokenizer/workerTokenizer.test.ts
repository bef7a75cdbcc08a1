import * as assert from 'node:assert/strict';
import { PrimedEstimator, WorkerTokenizer } from '../../../src/core/context/tokenizer/workerTokenizer';
import { installedTokenizerModules } from '../../../src/core/context/tokenizer/installedModules';
import { IncrementalEstimate, tiktokenEstimator } from '../../../src/core/context';
import type { ChatMessage } from '../../../src/core/messages';

describe('the tokenizer in a worker thread', function () {
  this.timeout(60_000);
  let worker: WorkerTokenizer;
  before(() => {
    worker = new WorkerTokenizer('o200k_base', installedTokenizerModules());
  });
  after(() => worker.dispose());

  it('loading does not block the calling thread', async () => {
    // Ticks of a 10 ms timer keep coming while the worker builds its tables.
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    const started = Date.now();
    await worker.ready;
    clearInterval(timer);
    const elapsed = Date.now() - started;
    assert.ok(ticks >= Math.floor(elapsed / 10) * 0.5, `the event loop ran (${ticks} ticks in ${elapsed} ms)`);
  });

  it('counts exactly as js-tiktoken does in-thread', async () => {
    const texts = ['hello world', '漢字とかなの混じった文', '{"json": [1, 2, 3]}', '<|endoftext|> is plain text here', ''];
    const inThread = await tiktokenEstimator('o200k_base');
    assert.deepEqual(await worker.count(texts), texts.map((t) => inThread.countText(t)));
  });

  it('a primed estimator answers synchronously and agrees with the in-thread estimator per message', async () => {
    const primed = new PrimedEstimator(worker);
    const inThread = await tiktokenEstimator('o200k_base');
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You are Candor.' },
      { role: 'user', content: 'list the files 日本語' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'list_files', arguments: '{"path":"."}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'a.txt\nb.txt' },
    ];
    assert.throws(() => primed.countMessage(messages[1] as ChatMessage), /not primed/, 'counting unprimed text is an error, never a silent guess');
    await primed.prime(messages);
    const incremental = new IncrementalEstimate(primed);
    assert.equal(incremental.total(messages), messages.reduce((n, m) => n + inThread.countMessage(m), 0));
  });

  it('a tokenizer that cannot load fails loudly', async () => {
    const broken = new WorkerTokenizer('o200k_base', { tiktoken: '/nonexistent/tiktoken.js', ranks: () => '/nonexistent/ranks.js' });
    await assert.rejects(broken.count(['x']), /could not load/);
    broken.dispose();
  });
});
