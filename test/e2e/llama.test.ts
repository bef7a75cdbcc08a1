// Candor in VS Code against a real llama.cpp llama-server (test/helpers/llamaServer.ts),
// listed in candor.localServers as a user lists it: the window read from the
// server, a real tool call run, the model's thinking shown above its answer
// and shown again after a reload, and a reply cut at the output limit.
import * as assert from 'node:assert/strict';
import { eventually, reloadWorkbench, screenshot, useWorkbench, webviewFrame } from './harness';
import { openChat, readGauge, sendMessage, transcriptText, waitForTranscript, waitIdle } from './candor';
import { llamaOrSkip, startLlama, type LlamaServer } from '../helpers/llamaServer';

describe('chat against a real llama-server', function () {
  let server: LlamaServer | undefined;
  // Before the workbench's own hook: its settings point at this server.
  before(async function () {
    this.timeout(120_000);
    server = await startLlama(llamaOrSkip(this), { ctx: 8192, model: 'toolcall' });
  });
  after(async () => server?.stop());

  const ctx = useWorkbench({
    start: (ws) => {
      if (!server) throw new Error('the llama-server did not start');
      return {
        settings: {
          'candor.dataDir': ws.dataDir,
          'candor.baseUrl': server.baseUrl,
          'candor.model': server.modelPath,
          'candor.localServers': [{ port: server.port, kind: 'llamacpp' }],
          'candor.request.maxRetries': 0,
        },
      };
    },
  });

  it('a real tool call runs, and the thinking shows in its own block above the answer, live and after a reload', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'What files are in this project?');
    await waitForTranscript(frame, 'Tool call: list_files', 60_000);
    await waitForTranscript(frame, 'Done.', 60_000);
    await waitIdle(ctx.page);
    const reply = frame.locator('.entry.assistant').last();
    const thinking = reply.locator('details.thinking');
    assert.equal(await thinking.locator('summary').innerText(), 'Thinking');
    assert.equal(await thinking.locator('.thought').textContent(), 'The files are listed');
    assert.equal(await reply.locator('.body').innerText(), 'Done.', 'the answer alone, without the thinking');
    const order = await reply.evaluate((el) => [...el.children].map((c) => c.className));
    assert.ok(order.indexOf('thinking') < order.indexOf('body'), `the thinking is above the answer: ${order.join(', ')}`);
    const gauge = await eventually(async () => {
      const g = await readGauge(ctx.page);
      return /\/8\.2K$/.test(g.text) ? g : undefined;
    }, 30_000, 'the gauge counts against the server\'s window (8,192 from /props)');
    assert.match(gauge.text, /^\d+% ≈?[\d.]+K?\/8\.2K$/u);
    await thinking.locator('summary').click();
    assert.equal(await thinking.evaluate((d) => (d as HTMLDetailsElement).open), true, 'the block opens');
    await screenshot(ctx.page, 'llama-thinking');

    await reloadWorkbench(ctx.page);
    const again = await openChat(ctx.page);
    await waitForTranscript(again, 'Done.', 60_000);
    const shown = (await webviewFrame(ctx.page, '#transcript')).locator('.entry.assistant details.thinking .thought').last();
    assert.equal(await shown.textContent(), 'The files are listed', 'kept in the session and shown again');
    assert.match(await transcriptText(again), /Tool result: list_files/);
  });
});

describe('a reply cut at the output limit, against a real llama-server', function () {
  let server: LlamaServer | undefined;
  before(async function () {
    this.timeout(120_000);
    server = await startLlama(llamaOrSkip(this), { ctx: 8192, model: 'toolcall' });
  });
  after(async () => server?.stop());

  const ctx = useWorkbench({
    start: (ws) => {
      if (!server) throw new Error('the llama-server did not start');
      return {
        settings: {
          'candor.dataDir': ws.dataDir,
          'candor.baseUrl': server.baseUrl,
          'candor.model': server.modelPath,
          'candor.localServers': [{ port: server.port, kind: 'llamacpp' }],
          'candor.request.maxRetries': 0,
          // The tool call the model makes needs 12 tokens: at 10 its arguments arrive as "{".
          'candor.maxOutputTokens': 10,
        },
      };
    },
  });

  it('says so under the reply, with the setting, and its cut tool call is shown but not run; the next message is answered', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'What files are in this project?');
    await waitForTranscript(frame, 'Cut at the output limit: 10 tokens (candor.maxOutputTokens). Raise the setting for longer replies. Its tool call was not run.', 60_000);
    await waitIdle(ctx.page);
    const text = await transcriptText(frame);
    assert.match(text, /Tool call: list_files — [^\n]+, cut at the output limit, not run/);
    assert.ok(!/HTTP 500/.test(text), text);
    await screenshot(ctx.page, 'llama-cut');
    await sendMessage(ctx.page, 'Go on.');
    await waitIdle(ctx.page);
    await eventually(async () => ((await frame.locator('.entry.user').count()) === 2 ? true : undefined), 30_000, 'the second message is in the chat');
    assert.ok(!/HTTP 500/.test(await transcriptText(frame)), 'the session is not poisoned: the server took the history back');
  });
});
