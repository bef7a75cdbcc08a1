import assert from 'node:assert/strict';
import type { TiktokenBPE } from 'js-tiktoken/lite';
import {
  defaultRanksLoader,
  encodingForModel,
  estimatorForModel,
  heuristicEstimator,
  tiktokenEstimator,
  type TiktokenEncodingName,
} from '../../../src/core/context/estimator';
import type { ChatMessage } from '../../../src/core/messages';

describe('gate/estimator', () => {
  describe('heuristic', () => {
    const h = heuristicEstimator();

    it('counts other scripts at 4 characters per token, rounded up', () => {
      assert.equal(h.countText(''), 0);
      assert.equal(h.countText('abcd'), 1);
      assert.equal(h.countText('abcde'), 2);
    });

    it('counts CJK ideographs, kana, hangul and fullwidth forms at 2 characters per token', () => {
      assert.equal(h.countText('你好世界'), 2);
      assert.equal(h.countText('ひらがなカタカナ'), 4);
      assert.equal(h.countText('안녕하세'), 2);
      assert.equal(h.countText('ＡＢ'), 1);
      assert.equal(h.countText('ab你好'), 2, 'ceil(2/4 + 2/2)');
    });

    it('counts an astral ideograph (surrogate pair) as one character', () => {
      assert.equal(h.countText('𠀀𠀀𠀀𠀀'), 2);
    });

    it('adds 3 per message and counts role, content, tool calls and tool_call_id', () => {
      assert.equal(h.countMessage({ role: 'user', content: 'abcdefgh' }), 3 + 1 + 2);
      const call: ChatMessage = {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'read', arguments: '{"p":"a"}' } }],
      };
      assert.equal(h.countMessage(call), 3 + 3 + 1 + 3, 'assistant(9→3) + read(1) + {"p":"a"}(9→3)');
      assert.equal(h.countMessage({ role: 'tool', tool_call_id: 'call_123', content: 'ok' }), 3 + 1 + 1 + 2);
    });
  });

  describe('js-tiktoken', () => {
    it('counts "hello world" as 2 tokens in o200k_base and cl100k_base', async () => {
      assert.equal((await tiktokenEstimator('o200k_base')).countText('hello world'), 2);
      assert.equal((await tiktokenEstimator('cl100k_base')).countText('hello world'), 2);
    });

    it('counts a message as 3 + role + content', async () => {
      const o200k = await tiktokenEstimator('o200k_base');
      assert.equal(o200k.countMessage({ role: 'user', content: 'hello world' }), 3 + 1 + 2);
    });

    it('counts special-token text as plain text instead of throwing', async () => {
      const o200k = await tiktokenEstimator('o200k_base');
      assert.ok(o200k.countText('<|endoftext|>') > 1);
    });

    it('loads ranks through an injected loader, once per loader and encoding', async () => {
      const asked: TiktokenEncodingName[] = [];
      const loader = async (encoding: TiktokenEncodingName): Promise<TiktokenBPE> => {
        asked.push(encoding);
        return defaultRanksLoader(encoding);
      };
      const first = await estimatorForModel('gpt-4.1-mini', loader);
      const second = await tiktokenEstimator('o200k_base', loader);
      assert.deepEqual(asked, ['o200k_base']);
      assert.equal(first.name, 'tiktoken:o200k_base');
      assert.equal(second.countText('hello world'), 2);
    });

    it('lets a later load retry after a failed one', async () => {
      let calls = 0;
      const flaky = (encoding: TiktokenEncodingName): TiktokenBPE => {
        calls++;
        if (calls === 1) throw new Error('ranks file missing');
        return defaultRanksLoader(encoding);
      };
      await assert.rejects(tiktokenEstimator('cl100k_base', flaky), /ranks file missing/);
      assert.equal((await tiktokenEstimator('cl100k_base', flaky)).countText('hello world'), 2);
    });
  });

  describe('encoding by model', () => {
    it('maps OpenAI model families to their encoding and unknown models to none', () => {
      const cases: Array<[string, TiktokenEncodingName | undefined]> = [
        ['gpt-4o', 'o200k_base'],
        ['gpt-4o-mini-2024-07-18', 'o200k_base'],
        ['gpt-4.1-nano', 'o200k_base'],
        ['o1', 'o200k_base'],
        ['o3-mini', 'o200k_base'],
        ['o4-mini', 'o200k_base'],
        ['gpt-5', 'o200k_base'],
        ['openai/gpt-5-mini', 'o200k_base'],
        ['gpt-4', 'cl100k_base'],
        ['gpt-4-turbo', 'cl100k_base'],
        ['gpt-3.5-turbo-0125', 'cl100k_base'],
        ['text-embedding-3-small', 'cl100k_base'],
        ['llama3.1:8b', undefined],
        ['o10-preview', undefined],
        ['candor-offline', undefined],
      ];
      for (const [model, encoding] of cases) assert.equal(encodingForModel(model), encoding, model);
    });

    it('uses the heuristic for a model with no known tokenizer', async () => {
      assert.equal((await estimatorForModel('qwen2.5-coder')).name, 'heuristic');
    });
  });
});
