import * as assert from 'node:assert/strict';
import { findLlama, llamaOrSkip, startLlama } from '../../helpers/llamaServer';

describe('the real llama-server the provider tests use', function () {
  this.timeout(90_000);

  it('starts on a free loopback port, reports its window per slot from /props, and is gone once stopped by its pid', async function () {
    const found = llamaOrSkip(this);
    const server = await startLlama(found, { ctx: 4096, flags: ['-np', '2'] });
    try {
      const props = (await (await fetch(`${server.origin}/props`)).json()) as { default_generation_settings: { n_ctx: number } };
      assert.equal(props.default_generation_settings.n_ctx, 2048);
      const models = (await (await fetch(`${server.baseUrl}/models`)).json()) as { data: { id: string }[] };
      assert.equal(models.data[0]?.id, server.modelPath);
    } finally {
      await server.stop();
    }
    assert.throws(() => process.kill(server.pid, 0), /ESRCH/);
    await assert.rejects(fetch(`${server.origin}/health`));
  });

  it('names what is missing when CANDOR_LLAMA_SERVER points at nothing', () => {
    const found = findLlama({ CANDOR_LLAMA_SERVER: '/nonexistent/llama-server' });
    assert.ok('missing' in found);
    assert.match(found.missing, /CANDOR_LLAMA_SERVER \(\/nonexistent\/llama-server\) is not an executable file/);
  });
});
