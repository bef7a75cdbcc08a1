import assert from 'node:assert/strict';
import { encodingForModel, type TiktokenEncodingName } from '../../../../src/core/context/estimator';
import { FEATURES, heuristicTokens, measureText, zeroFeatures } from '../../../../src/core/context/heuristic';
import type { ChatMessage } from '../../../../src/core/messages';
import { messageOverhead, messageParts } from '../../../../src/core/context/messageParts';
import { measureMessage } from '../../../helpers/core';

const feature = (name: (typeof FEATURES)[number]): number => FEATURES.indexOf(name);

describe('gate/estimator', () => {
  describe('heuristic', () => {
    it('counts other scripts at 4 characters per token, rounded up', () => {
      assert.equal(heuristicTokens(''), 0);
      assert.equal(heuristicTokens('abcd'), 1);
      assert.equal(heuristicTokens('abcde'), 2);
    });

    it('counts CJK ideographs, kana, hangul and fullwidth forms at 2 characters per token', () => {
      assert.equal(heuristicTokens('你好世界'), 2);
      assert.equal(heuristicTokens('ひらがなカタカナ'), 4);
      assert.equal(heuristicTokens('안녕하세'), 2);
      assert.equal(heuristicTokens('ＡＢ'), 1);
      assert.equal(heuristicTokens('ab你好'), 2, 'ceil(2/4 + 2/2)');
    });

    it('counts an astral ideograph (surrogate pair) as one character', () => {
      assert.equal(heuristicTokens('𠀀𠀀𠀀𠀀'), 2);
    });

    it('adds 3 per message and counts role, content and tool calls, but no id (OpenAI counts none)', () => {
      assert.equal(measureMessage({ role: 'user', content: 'abcdefgh' }).heuristic, 3 + 1 + 2);
      const call: ChatMessage = {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_Qx7v2kP9mZtR4wLs8NbY1cDe', type: 'function', function: { name: 'read', arguments: '{"p":"a"}' } }],
      };
      assert.equal(measureMessage(call).heuristic, 3 + 3 + 1 + 3, 'assistant(9→3) + read(1) + {"p":"a"}(9→3), the id left out');
      assert.equal(measureMessage({ role: 'tool', tool_call_id: 'call_Qx7v2kP9mZtR4wLs8NbY1cDe', content: 'ok' }).heuristic, 3 + 1 + 1);
      assert.deepEqual(messageParts({ role: 'tool', tool_call_id: 'call_Qx7v2kP9mZtR4wLs8NbY1cDe', content: 'ok' }), ['tool', 'ok']);
    });

    it('a name is counted, with one token more for it, as OpenAI\'s recipe does', () => {
      const named = { role: 'system', name: 'example_user', content: 'New synergies.' } as ChatMessage;
      assert.deepEqual(messageParts(named), ['system', 'New synergies.', 'example_user']);
      assert.equal(messageOverhead(named), 3 + 1);
      assert.equal(messageOverhead({ role: 'user', content: 'hi' }), 3);
    });

    it('counts the characters of each script class in the same pass, for the calibration', () => {
      const features = zeroFeatures();
      measureText('Ab1 {"x"}\n漢字、かなハングル한국𠀀😀', features);
      assert.equal(features[feature('letters')], 3, 'A b x');
      assert.equal(features[feature('digits')], 1);
      assert.equal(features[feature('spaces')], 1);
      assert.equal(features[feature('newlines')], 1);
      assert.equal(features[feature('punctuation')], 4 + 1, '{ " " } and the emoji');
      assert.equal(features[feature('han')], 2 + 1 + 1, 'two ideographs, the ideographic comma, one astral ideograph');
      assert.equal(features[feature('kana')], 2 + 4);
      assert.equal(features[feature('hangul')], 2);
      const message = measureMessage({ role: 'user', content: 'hi' });
      assert.equal(message.features[feature('messages')], 1);
      assert.equal(message.features[feature('letters')], 4 + 2, 'the role is counted too');
    });
  });

  describe('encoding by model', () => {
    it('maps OpenAI model families to their encoding and unknown models to none (the heuristic)', () => {
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
        ['qwen2.5-coder', undefined],
        ['o10-preview', undefined],
        ['candor-offline', undefined],
      ];
      for (const [model, encoding] of cases) assert.equal(encodingForModel(model), encoding, model);
    });
  });
});
