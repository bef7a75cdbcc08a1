import assert from 'node:assert/strict';
import { familyOfTemplate, llamaCppFamily, lmStudioFamily, ollamaFamily } from '../../../../src/core/provider/serverFamily';

/** Shapes as the servers answer (trimmed): llama.cpp's /props and /v1/models, Ollama's /api/show, LM Studio's /api/v0/models. */
const QWEN_TEMPLATE = "{%- if tools %}{{- '<|im_start|>system\\n' }}…<tool_call>…{%- endif %}";
const LLAMA3_TEMPLATE = "{{- bos_token }}…'<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n'… '<|eot_id|>'";
const models = (nVocab: number) => ({ object: 'list', data: [{ id: '/home/u/llama.cpp/models/Qwen3-8B-Q4_K_M.gguf', object: 'model', meta: { vocab_type: 2, n_vocab: nVocab, n_ctx_train: 40960 } }] });

describe('provider/serverFamily: the family from the server\'s own metadata', () => {
  it('llama.cpp: the template\'s markers, confirmed by the vocabulary; the model\'s path is never read', () => {
    assert.equal(llamaCppFamily({ chat_template: QWEN_TEMPLATE }, models(151_936)), 'qwen3');
    assert.equal(llamaCppFamily({ chat_template: LLAMA3_TEMPLATE }, models(128_256)), 'llama3');
    // A template of one family over another's vocabulary (a fine-tune's own template): neither is trusted.
    assert.equal(llamaCppFamily({ chat_template: QWEN_TEMPLATE }, models(32_000)), undefined);
    assert.equal(llamaCppFamily({ chat_template: 'plain {{ messages }}' }, models(151_936)), undefined);
    // An older server without the vocabulary in its list: the template alone.
    assert.equal(llamaCppFamily({ chat_template: QWEN_TEMPLATE }, { data: [{ id: 'x' }] }), 'qwen3');
    assert.equal(familyOfTemplate("…'<｜User｜>' + message['content']…'<｜Assistant｜>'…"), 'deepseek_v3');
    assert.equal(familyOfTemplate(42), undefined);
  });

  it('Ollama: the architecture and its vocabulary\'s size; a Llama 2 is not a Llama 3', () => {
    assert.equal(ollamaFamily({ details: { family: 'qwen3' }, model_info: { 'general.architecture': 'qwen3', 'qwen3.vocab_size': 151_936 } }), 'qwen3');
    assert.equal(ollamaFamily({ details: { family: 'qwen2' }, model_info: { 'general.architecture': 'qwen2' } }), 'qwen3');
    assert.equal(ollamaFamily({ details: { family: 'llama' }, model_info: { 'general.architecture': 'llama', 'llama.vocab_size': 128_256 } }), 'llama3');
    assert.equal(ollamaFamily({ details: { family: 'llama' }, model_info: { 'general.architecture': 'llama', 'llama.vocab_size': 32_000 } }), undefined);
    assert.equal(ollamaFamily({ details: { family: 'gemma3' }, model_info: { 'general.architecture': 'gemma3' } }), undefined);
    assert.equal(ollamaFamily('not json'), undefined);
  });

  it('LM Studio: the arch of the model in its list; "llama" alone says nothing of the vocabulary', () => {
    const list = { data: [{ id: 'qwen2.5-coder-7b-instruct', arch: 'qwen2' }, { id: 'meta-llama-3.1-8b-instruct', arch: 'llama' }] };
    assert.equal(lmStudioFamily(list, 'qwen2.5-coder-7b-instruct'), 'qwen3');
    assert.equal(lmStudioFamily(list, 'meta-llama-3.1-8b-instruct'), undefined);
    assert.equal(lmStudioFamily(list, 'missing'), undefined);
  });
});
