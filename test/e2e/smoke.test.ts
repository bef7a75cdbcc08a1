// The packaged VSIX installs into a real VS Code and shows itself.
import * as assert from 'node:assert/strict';
import {
  activityBarItem, eventually, openActivityView, screenshot, statusBarItem, statusBarText,
  useWorkbench, webviewByRole,
} from './harness';

describe('smoke: the packaged VSIX in code-server', function () {
  const ctx = useWorkbench();

  it('shows Candor in the activity bar', async function () {
    await activityBarItem(ctx.page, 'Candor').first().waitFor({ state: 'visible', timeout: 30_000 });
  });

  it('shows the candor.gauge status bar item', async function () {
    const gauge = statusBarItem(ctx.page, 'candor.gauge');
    await gauge.waitFor({ state: 'visible', timeout: 60_000 });
    // "$(pulse) 0% 0/128K": the codicon has no text, the numbers do.
    const { text } = await eventually(async () => {
      const t = await statusBarText(gauge);
      return /%/.test(t.text) ? t : undefined;
    }, 30_000, 'gauge shows a percentage');
    assert.match(text, /\d+% \S+\/\S+/);
    await screenshot(ctx.page, 'smoke-workbench');
  });

  it('opens the chat view with its message input', async function () {
    await openActivityView(ctx.page, 'Candor');
    const input = await webviewByRole(ctx.page, 'textbox', 'Message Candor', 30_000);
    await input.waitFor({ state: 'visible' });
    await screenshot(ctx.page, 'smoke-chat');
  });
});
