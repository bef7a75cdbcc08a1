// Exact or bounded, as a user meets it: against a real llama.cpp server the
// gauge says "counted by the server"; against the offline provider with a
// model Candor has no tokenizer of, it shows ≈ and its band.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { eventually, readJsonl, screenshot, useWorkbench, writeScenario } from './harness';
import { openChat, readGauge, sendMessage, waitForTranscript, waitIdle } from './candor';
import { llamaOrSkip, startLlama, type LlamaServer } from '../helpers/llamaServer';

describe('exact or bounded: the gauge says where its number comes from', function () {
  describe('a real llama.cpp server that counts prompts itself', function () {
    let server: LlamaServer;
    // Registered before the workbench's hook, so the server is up when its settings are written.
    before(async function () {
      this.timeout(120_000);
      server = await startLlama(llamaOrSkip(this), { ctx: 8192, flags: ['-n', '8'] });
    });
    after(async () => server?.stop());
    const ctx = useWorkbench({
      start: (ws) => ({
        settings: {
          'candor.dataDir': ws.dataDir,
          'candor.baseUrl': server.baseUrl,
          'candor.model': server.modelPath,
          'candor.localServers': [{ port: server.port, kind: 'llamacpp' }],
          // The tiny model writes random text until its limit: a short reply.
          'candor.maxOutputTokens': 8,
        },
      }),
    });

    it('shows "counted by the server" with no ≈, from the server\'s own count of the payload', async () => {
      const frame = await openChat(ctx.page);
      await sendMessage(ctx.page, 'hi');
      await waitForTranscript(frame, 'hi');
      await waitIdle(ctx.page);
      const gauge = await eventually(async () => {
        const g = await readGauge(ctx.page);
        // Until the count of this very payload lands, the count of the one before plus what changed since ("plus or minus").
        return /counted by the server$/.test(g.ariaLabel) ? g : undefined;
      }, 60_000, 'the gauge says the server counted it, with no band');
      const mismatches = readJsonl(path.join(ctx.ws.dataDir, 'drift.jsonl')).filter((e) => (e as { event?: string }).event === 'count_mismatch');
      assert.deepEqual(mismatches, [], 'the server\'s count was the prompt_tokens it reported');
      assert.doesNotMatch(gauge.text, /≈/, gauge.ariaLabel);
      assert.match(gauge.text, /^\d+% \d/);
      await screenshot(ctx.page, 'exact-counted-by-server');
    });
  });

  describe('a model Candor has no tokenizer of, on the offline provider', function () {
    const ctx = useWorkbench({
      start: (ws) => ({
        settings: {
          'candor.dataDir': ws.dataDir,
          // The offline provider counts with js-tiktoken; this id names no tokenizer Candor knows.
          'candor.model': 'my-finetune-7b',
          'candor.contextWindow': 8000,
          'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), { rules: [{ respond: { text: 'Fine.' } }] }),
        },
      }),
    });

    it('shows ≈ and says "estimated, plus or minus" its half-width; after a reply, "anchored" with the band of what changed since', async () => {
      const first = await eventually(async () => {
        const g = await readGauge(ctx.page);
        return /estimated, plus or minus \d/.test(g.ariaLabel) ? g : undefined;
      }, 30_000, 'the gauge gives the estimate\'s band');
      assert.match(first.text, /≈/);
      const frame = await openChat(ctx.page);
      await sendMessage(ctx.page, 'hello there');
      await waitForTranscript(frame, 'Fine.');
      await waitIdle(ctx.page);
      const anchored = await eventually(async () => {
        const g = await readGauge(ctx.page);
        return /anchored/.test(g.ariaLabel) ? g : undefined;
      }, 30_000, 'anchored after the reply');
      assert.match(anchored.ariaLabel, /anchored, plus or minus \d+/);
      await screenshot(ctx.page, 'exact-band-unknown-model');
    });
  });
});
