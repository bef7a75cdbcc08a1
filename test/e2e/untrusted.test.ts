// In Restricted Mode Candor chats, but its file tools and everything that
// runs commands are off, and it says why.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { eventually, readJsonl, runCommand, useWorkbench, writeScenario } from './harness';
import { openChat, sendMessage, waitForTranscript, waitIdle } from './candor';

describe('an untrusted workspace', function () {
  const ctx = useWorkbench({
    start: (ws) => ({
      trust: false,
      settings: {
        'candor.dataDir': ws.dataDir,
        // A user-level scenario still applies; a workspace one would not.
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            { match: { lastRole: 'tool' }, respond: { text: 'Tool replied.' } },
            { match: { user: 'read it' }, respond: { toolCalls: [{ name: 'read_file', arguments: { path: 'README.md' } }] } },
            { respond: { text: 'Plain reply.' } },
          ],
        }),
      },
    }),
  });

  it('the chat says why tools are off, and still answers', async () => {
    const frame = await openChat(ctx.page);
    await eventually(async () => ((await frame.locator('#untrusted').isVisible()) ? true : undefined), 20_000, 'the untrusted notice');
    assert.match(await frame.locator('#untrusted').innerText(), /not trusted/);
    await sendMessage(ctx.page, 'hello');
    await waitForTranscript(frame, 'Plain reply.');
  });

  it('offers no run_command, and the header says why in one line', async () => {
    const frame = await openChat(ctx.page);
    const line = await eventually(async () => {
      const text = await frame.locator('#tools-commands').innerText().catch(() => '');
      return text !== '' ? text : undefined;
    }, 20_000, 'the commands line');
    assert.equal(line, 'Commands: not offered in an untrusted workspace');
  });

  it('a tool call gets no workspace content', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'read it');
    await waitForTranscript(frame, 'Tool replied.');
    await waitIdle(ctx.page);
    const result = (await frame.locator('.entry.tool-result pre').last().textContent()) ?? '';
    assert.match(result, /not available/);
    assert.doesNotMatch(result, /Candor demo workspace/);
  });

  it('Run Evolution refuses to run commands', async () => {
    await runCommand(ctx.page, 'Candor: Run Evolution');
    // Either VS Code's own Restricted Mode dialog stops it, or Candor's warning does.
    const refusal = await eventually(async () => {
      const dialog = ctx.page.locator('.monaco-dialog-box');
      if (await dialog.isVisible()) return `dialog: ${await dialog.innerText()}`;
      const toast = ctx.page.locator('.notifications-toasts .notification-list-item-message', { hasText: 'off in an untrusted workspace' });
      return (await toast.count()) > 0 ? 'candor warning' : undefined;
    }, 20_000, 'a refusal is shown');
    if (refusal.startsWith('dialog')) {
      assert.match(refusal, /trust/i);
      await ctx.page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Cancel' }).click();
    }
    await new Promise((r) => setTimeout(r, 2000));
    assert.deepEqual(readJsonl(path.join(ctx.ws.dataDir, 'evolution.jsonl')), [], 'no run was recorded');
  });
});
