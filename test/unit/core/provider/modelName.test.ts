import * as assert from 'node:assert/strict';
import { isModelFilePath, shortModelName } from '../../../../src/core/provider/modelName';

describe('model ids on screen: the short name', () => {
  it('a path (llama.cpp names a model by the file it loaded) is its base name', () => {
    assert.equal(shortModelName('/work/shared/llama/models/tiny-qwen3tok-toolcall.gguf'), 'tiny-qwen3tok-toolcall.gguf');
    assert.equal(shortModelName('models/qwen2.5-7b-instruct-q4_k_m.gguf'), 'qwen2.5-7b-instruct-q4_k_m.gguf');
    assert.equal(shortModelName('./q.gguf'), 'q.gguf');
    assert.equal(shortModelName('~/llms/phi-3.gguf'), 'phi-3.gguf');
    assert.equal(shortModelName('C:\\Users\\ada\\models\\llama-3.2-1b.Q8_0.gguf'), 'llama-3.2-1b.Q8_0.gguf');
    assert.equal(shortModelName(`/${'deep/'.repeat(40)}m.gguf`), 'm.gguf');
  });

  it('a hub id, a tag or a plain name stays as it is: it is not a path', () => {
    for (const id of ['meta-llama/Llama-3.1-8B-Instruct', 'qwen2.5-coder:7b', 'gpt-4o', 'hf.co/bartowski/Llama-3.2-1B-Instruct-GGUF:Q4_K_M']) {
      assert.equal(shortModelName(id), id);
      assert.equal(isModelFilePath(id), false, id);
    }
  });

  it('the server\'s alias wins when it lists one; an alias that is itself a path or the id does not count', () => {
    const id = '/models/tiny-qwen3tok-toolcall.gguf';
    assert.equal(shortModelName(id, [id]), 'tiny-qwen3tok-toolcall.gguf', 'llama.cpp lists the id among its aliases');
    assert.equal(shortModelName(id, [id, 'tiny-tools', 'a-much-longer-alias']), 'tiny-tools');
    assert.equal(shortModelName(id, ['', '/other/path.gguf']), 'tiny-qwen3tok-toolcall.gguf');
  });
});
