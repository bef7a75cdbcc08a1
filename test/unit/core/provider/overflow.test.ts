// Overflow errors as each server writes them: every row of the table parses
// its own recorded example, the SDK's path over HTTP keeps the figures, and
// an error that is no overflow is none.
import * as assert from 'node:assert/strict';
import { OVERFLOW_SHAPES, parseOverflow, providerErrorOf } from '../../../../src/core/provider/overflow';
import type { ModelEvent } from '../../../../src/core/provider/chatModel';
import { eventsOf, modelAt } from './models';
import { startScriptedServer, type ScriptedServer } from './scriptedServer';

/** What each row's recorded example says: [parser, real, window, output]. */
const EXPECTED: Record<string, [number | null, number | null, number | undefined]> = {
  'llama.cpp': [2109, 2048, undefined],
  'vllm-requested': [4500, 4096, 500],
  'vllm-output': [130049, 131072, 1024],
  'vllm-max-tokens': [2778, 4096, 8000],
  'vllm-input': [4176, 1536, undefined],
  'vllm-decoder': [8825, 8192, undefined],
  openai: [null, null, undefined],
  anthropic: [213462, 200000, undefined],
  'lm-studio': [null, 4096, undefined],
};

describe('overflow errors: one table of the shapes servers use', () => {
  for (const shape of OVERFLOW_SHAPES) {
    it(`${shape.name}: its recorded example (${shape.example.source}) gives the server's figures`, () => {
      const found = parseOverflow(providerErrorOf(shape.example.status, shape.example.body, ''));
      const [real, window, output] = EXPECTED[shape.name] ?? [];
      assert.deepEqual(found, { parser: shape.name, real, window, ...(output !== undefined ? { output } : {}) });
    });
  }

  it('every row has an expectation here, and no example is read by an earlier row', () => {
    assert.deepEqual(OVERFLOW_SHAPES.map((s) => s.name).sort(), Object.keys(EXPECTED).sort());
  });

  it('errors that are not overflows are none: a rate limit, a bad key, a 5xx that mentions the context, garbage figures', () => {
    const none = [
      providerErrorOf(429, { error: { message: 'Rate limit reached for tokens per min', code: 'rate_limit_exceeded' } }, ''),
      providerErrorOf(401, { error: { message: 'Incorrect API key provided', code: 'invalid_api_key' } }, ''),
      providerErrorOf(500, { error: { message: 'request (5000 tokens) exceeds the available context size (4096 tokens)', type: 'exceed_context_size_error' } }, ''),
      providerErrorOf(400, { error: { message: 'messages: too long' } }, ''),
    ];
    for (const error of none) assert.equal(parseOverflow(error), undefined, error.message);
    const huge = parseOverflow(providerErrorOf(400, { error: { message: 'prompt is too long: 1e400 tokens > 99999999999999999999 maximum' } }, ''));
    assert.equal(huge, undefined, 'no count in that message reads as a number');
    const hostile = parseOverflow(providerErrorOf(400, { error: { type: 'exceed_context_size_error', n_prompt_tokens: 1e300, n_ctx: -5, message: 'x' } }, ''));
    assert.deepEqual(hostile, { parser: 'llama.cpp', real: null, window: null }, 'a figure out of range is no figure');
  });

  describe('through the SDK, over HTTP', () => {
    let server: ScriptedServer | undefined;
    afterEach(async () => server?.close());
    const lastError = (events: ModelEvent[]) => {
      const last = events.at(-1);
      if (last?.type !== 'error') throw new Error(`expected an error, got ${JSON.stringify(last)}`);
      return last.error;
    };

    it("OpenAI's current message carries no numbers: an overflow all the same, and the message is the provider's", async () => {
      const body = OVERFLOW_SHAPES.find((s) => s.name === 'openai')?.example.body;
      server = await startScriptedServer([{ status: 400, body }]);
      const error = lastError(await eventsOf(modelAt(server.baseUrl, { policy: { maxRetries: 2 } }).stream({ messages: [{ role: 'user', content: 'hi' }] })));
      assert.deepEqual(error.overflow, { parser: 'openai', real: null, window: null });
      assert.match(error.describe(), /HTTP 400: Your input exceeds the context window of this model/);
      assert.equal(server.bodies.length, 1, 'not retried');
    });

    it("vLLM's \"you requested\" counts max_tokens: the prompt is the part \"in the messages\"", async () => {
      server = await startScriptedServer([{ status: 400, body: { error: { message: "This model's maximum context length is 32768 tokens. However, you requested 36000 tokens (31904 in the messages, 4096 in the completion). Please reduce the length of the messages or completion.", type: 'BadRequestError', param: null, code: 400 } } }]);
      const error = lastError(await eventsOf(modelAt(server.baseUrl).stream({ messages: [{ role: 'user', content: 'hi' }] })));
      assert.deepEqual(error.overflow, { parser: 'vllm-requested', real: 31904, window: 32768, output: 4096 });
    });

    it("LM Studio's error is a bare string: its window is read from it", async () => {
      const body = OVERFLOW_SHAPES.find((s) => s.name === 'lm-studio')?.example.body;
      server = await startScriptedServer([{ status: 400, body }]);
      const error = lastError(await eventsOf(modelAt(server.baseUrl).stream({ messages: [{ role: 'user', content: 'hi' }] })));
      assert.deepEqual(error.overflow, { parser: 'lm-studio', real: null, window: 4096 });
    });
  });
});
