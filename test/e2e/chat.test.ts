// The chat on the embedded offline provider, as a person uses it: each test
// says what it tried and asserts on what is seen and what lands on disk.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  eventually, quickInputPrompt, quickInputType, readJsonl, reloadWorkbench, runCommand, screenshot,
  useWorkbench, waitForNotification, webviewByRole, writeScenario,
} from './harness';
import { chatButton, openChat, readGauge, sendMessage, transcriptText, waitForTranscript, waitIdle } from './candor';

describe('chat on the offline provider', function () {
  const ctx = useWorkbench({
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.request.maxRetries': 0,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            { match: { user: 'slow' }, respond: { text: 'slow '.repeat(400) }, chunkChars: 5, chunkDelayMs: 40 },
            { match: { user: 'break' }, respond: { error: { status: 500, message: 'scripted outage' } }, times: 1 },
            { match: { user: 'break' }, respond: { text: 'Recovered after the outage.' } },
            { respond: { text: 'Streamed **reply** to: {{user}}' }, chunkChars: 3, chunkDelayMs: 15 },
          ],
        }),
      },
    }),
  });

  it('the sidebar opens with the offline label and the accessible input', async () => {
    const frame = await openChat(ctx.page);
    await eventually(async () => ((await frame.locator('#provider').innerText()).includes('Offline demo — scripted replies, not a model') ? true : undefined), 20_000, 'the offline label');
    assert.match(await frame.locator('#welcome').innerText(), /offline demo/);
    await webviewByRole(ctx.page, 'button', 'Send');
    await webviewByRole(ctx.page, 'button', 'Stop');
  });

  it('a message gets a streamed, rendered reply, and the gauge updates after the request', async () => {
    const before = await readGauge(ctx.page);
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'hello candor');
    await waitForTranscript(frame, 'Streamed reply to: hello candor');
    assert.equal(await frame.locator('.entry.assistant strong').first().innerText(), 'reply', 'markdown is rendered');
    await waitIdle(ctx.page);
    const after = await eventually(async () => {
      const g = await readGauge(ctx.page);
      return g.text !== before.text && /anchored/.test(g.ariaLabel) ? g : undefined;
    }, 20_000, 'the gauge moves and is anchored after a reply with usage');
    // The reply since the anchor is Candor's estimate: the number carries ≈ while its band is not zero.
    assert.match(after.text, /^\d+% ≈?[\d.]+K?\/128K$/);
    await screenshot(ctx.page, 'chat-reply');
  });

  it('Stop cancels a streaming reply and keeps what arrived, with Retry', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'something slow please');
    await waitForTranscript(frame, 'slow slow');
    await (await chatButton(ctx.page, 'Stop')).click();
    await waitForTranscript(frame, 'Stopped.');
    await waitIdle(ctx.page);
    const text = await transcriptText(frame);
    assert.match(text, /Candor \(incomplete reply\)/);
    assert.ok((text.match(/slow/g) ?? []).length < 400, 'the stream did not run to its end');
  });

  it('an HTTP 500 shows an error with Retry, and Retry succeeds once the provider recovers', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'break it');
    await waitForTranscript(frame, 'HTTP 500: scripted outage');
    await waitIdle(ctx.page);
    await (await chatButton(ctx.page, 'Retry')).click();
    await waitForTranscript(frame, 'Recovered after the outage.');
    const users = (await transcriptText(frame)).match(/break it/g) ?? [];
    assert.equal(users.length, 1, 'Retry does not repeat the user message');
    await screenshot(ctx.page, 'chat-retry');
  });

  it('Candor: Rant from the palette asks "What went wrong?" and lands in rants.jsonl', async () => {
    await runCommand(ctx.page, 'Candor: Rant');
    const prompt = await quickInputPrompt(ctx.page);
    assert.match(`${prompt.message} ${prompt.placeholder}`, /What went wrong\?/);
    await quickInputType(ctx.page, 'the palette rant works');
    await waitForNotification(ctx.page, 'Rant saved');
    const rants = await eventually(() => {
      const lines = readJsonl(path.join(ctx.ws.dataDir, 'rants.jsonl')) as Array<Record<string, unknown>>;
      return lines.find((r) => r.text === 'the palette rant works') ? lines : undefined;
    });
    const rant = rants.find((r) => r.text === 'the palette rant works');
    assert.equal(rant?.v, 1);
    assert.equal(rant?.project, path.basename(ctx.ws.dir));
    assert.match(String(rant?.id), /^[0-9a-z]{26}$/);
    assert.match(String(rant?.ts), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.equal(typeof rant?.session, 'string', 'the current chat session is linked');
  });

  it('ctrl+alt+shift+r opens the same Rant input', async () => {
    await ctx.page.keyboard.press('Escape');
    await ctx.page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
    await ctx.page.locator('.monaco-workbench').click({ position: { x: 700, y: 400 } });
    await ctx.page.keyboard.press('Control+Alt+Shift+R');
    const prompt = await quickInputPrompt(ctx.page);
    assert.match(`${prompt.message} ${prompt.placeholder}`, /What went wrong\?/);
    await quickInputType(ctx.page, 'keybinding rant');
    await waitForNotification(ctx.page, 'Rant saved');
    await eventually(() => (readJsonl(path.join(ctx.ws.dataDir, 'rants.jsonl')) as Array<{ text: string }>).find((r) => r.text === 'keybinding rant'));
  });

  it('/rant in the chat saves a rant too', async () => {
    await openChat(ctx.page);
    await sendMessage(ctx.page, '/rant the chat rant works too');
    await waitForNotification(ctx.page, 'Rant saved');
    await eventually(() => (readJsonl(path.join(ctx.ws.dataDir, 'rants.jsonl')) as Array<{ text: string }>).find((r) => r.text === 'the chat rant works too'));
  });

  it('a window reload restores the transcript', async () => {
    await reloadWorkbench(ctx.page);
    const frame = await openChat(ctx.page);
    const text = await waitForTranscript(frame, 'Recovered after the outage.', 60_000);
    assert.match(text, /hello candor/);
    assert.match(text, /Streamed reply to: hello candor/);
    await screenshot(ctx.page, 'chat-after-reload');
  });
});
