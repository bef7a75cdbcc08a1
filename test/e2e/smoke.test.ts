// The packaged VSIX installs into a real VS Code and shows itself: what
// test/desktop/activation.test.ts checks from inside a desktop extension
// host, seen here as a person sees it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import {
  activityBarItem, chatInputFocused, eventually, openActivityView, repoRoot, runCommand, screenshot, statusBarItem, statusBarText,
  useWorkbench, webviewByRole,
} from './harness';

interface ContributedCommand {
  readonly command: string;
  readonly title: string;
  readonly category?: string;
}

/** The commands of the contract, as package.json (packaged into the VSIX) declares them. */
const contributed = (JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { contributes: { commands: ContributedCommand[] } })
  .contributes.commands;

/** The side bar's heading ("CANDOR: CHAT", "EXPLORER"), '' while it is hidden. */
async function sideBarHeading(page: Page): Promise<string> {
  if (!(await page.locator('.part.sidebar').isVisible())) return '';
  return (await page.locator('.part.sidebar .composite.title h2').first().innerText().catch(() => '')).trim().toUpperCase();
}

/**
 * Whether VS Code said it has no handler for `id`: run from the palette, such
 * a command ends in a dialog "Command '…' resulted in an error" whose detail
 * is "command '<id>' not found".
 */
async function saidNotFound(page: Page, id: string): Promise<boolean> {
  const shown = await page.locator('.monaco-dialog-box, .notifications-toasts').allInnerTexts();
  return shown.some((text) => text.includes(`command '${id}' not found`));
}

/** Closes what a command opened for input (a quick pick, an input box, a dialog), so the palette opens again. */
async function dismissPrompts(page: Page): Promise<void> {
  for (let i = 0; i < 3; i++) {
    const open = (await page.locator('.quick-input-widget').isVisible()) || (await page.locator('.monaco-dialog-box').isVisible());
    if (!open) return;
    await page.keyboard.press('Escape');
    await page.waitForTimeout(200);
  }
}

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

  it('Candor: Focus on Chat View shows the chat from another view, with the cursor in the message box', async function () {
    await openActivityView(ctx.page, 'Explorer');
    assert.ok(!(await sideBarHeading(ctx.page)).startsWith('CANDOR'), 'another view shows first');
    await runCommand(ctx.page, 'Candor: Focus on Chat View');
    await eventually(async () => ((await sideBarHeading(ctx.page)).startsWith('CANDOR') ? true : undefined), 15_000, 'the Candor view shows');
    const input = await webviewByRole(ctx.page, 'textbox', 'Message Candor', 15_000);
    await input.waitFor({ state: 'visible' });
    await eventually(async () => ((await chatInputFocused(ctx.page)) ? true : undefined), 15_000, 'the message box has the focus');
  });

  // Last: the commands leave what they open (editors, tasks, a new session) behind.
  it('every command of the contract is in the palette and runs: none is "not found"', async function () {
    this.timeout(300_000);
    assert.ok(contributed.length >= 10, `package.json declares ${contributed.length} commands`);
    const notFound: string[] = [];
    for (const { command, title, category } of contributed) {
      await runCommand(ctx.page, category ? `${category}: ${title}` : title);
      // The answer to a command with no handler comes at once; a second is ample.
      const missing = await eventually(async () => ((await saidNotFound(ctx.page, command)) ? true : undefined), 1_000, command).catch(() => false);
      if (missing) notFound.push(command);
      await dismissPrompts(ctx.page);
    }
    await screenshot(ctx.page, 'smoke-every-command');
    assert.deepEqual(notFound, []);
  });
});
