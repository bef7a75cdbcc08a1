import * as assert from 'node:assert/strict';
import { warningText } from '../../../../src/core/chat/gateNotices';

describe('what the chat says when a loss window warns', () => {
  // What llama.cpp reports as the model id: the GGUF's path.
  const identity = { provider: 'http://127.0.0.1:8080/v1', model: '/home/ada/models/llama.cpp/Qwen3-8B-Q4_K_M.gguf' };

  it('names the model by its short name, as the rest of the chat does, not its file path', () => {
    for (const kind of ['usage-unsupported', undefined] as const) {
      const text = warningText({ warningKind: kind }, identity);
      assert.match(text, /\(Qwen3-8B-Q4_K_M\.gguf @ http:\/\/127\.0\.0\.1:8080\/v1\)/);
      assert.doesNotMatch(text, /\/home\/ada/);
    }
  });

  it('an id that is no path is shown as it is', () => {
    assert.match(warningText({}, { provider: 'openai', model: 'meta-llama/Llama-3.1-8B-Instruct' }), /\(meta-llama\/Llama-3\.1-8B-Instruct @ openai\)/);
  });
});
