// A new user's first minutes, as the first-run findings describe them: the
// chat opens by itself once with the cursor in it, the palette runs Rant for
// "Candor: Rant", Find counts matches, and a wrong base URL says what was
// tried and what is likely missing. Each test says what it tried.
import * as assert from 'node:assert/strict';
import * as http from 'node:http';
import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import {
  activityBarItem, chatInputFocused, eventually, openActivityView, quickInputPrompt, runCommand, screenshot,
  useWorkbench, waitForWorkbench, webviewByRole, webviewFrame, writeScenario,
} from './harness';
import { gaugeTooltip, openChat, sendMessage, transcriptText, waitForTranscript, waitIdle } from './candor';

/** The side bar's heading ("CANDOR: CHAT", "EXPLORER"), '' while it is hidden. */
async function sideBarHeading(page: Page): Promise<string> {
  if (!(await page.locator('.part.sidebar').isVisible())) return '';
  return (await page.locator('.part.sidebar .composite.title h2').first().innerText().catch(() => '')).trim().toUpperCase();
}

/** Gives the keyboard to the workbench (the editor area), away from the chat. */
async function focusWorkbench(page: Page): Promise<void> {
  await page.evaluate(() => {
    const active = document.activeElement;
    if (active instanceof HTMLElement && active.tagName === 'IFRAME') active.blur();
  });
  await page.locator('.part.editor').click({ position: { x: 300, y: 200 } });
}

describe('first run: the chat finds the user', function () {
  const ctx = useWorkbench({
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [{ respond: { text: 'An apple a day. Apple pie, and apples **again**.\n\n```sh\necho no fruit here\n```' } }],
        }),
      },
    }),
  });

  it('on the first activation the chat opens by itself, with the cursor in the message box', async () => {
    // Nothing was clicked: the harness only waited for the workbench.
    await eventually(async () => ((await sideBarHeading(ctx.page)).startsWith('CANDOR') ? true : undefined), 30_000, 'the Candor view shows');
    await eventually(async () => ((await chatInputFocused(ctx.page)) ? true : undefined), 20_000, 'the message box has the focus');
    await ctx.page.keyboard.type('typed straight in');
    const input = await webviewByRole(ctx.page, 'textbox', 'Message Candor');
    assert.equal(await input.inputValue(), 'typed straight in');
    await input.fill('');
    await screenshot(ctx.page, 'first-run-chat');
  });

  it('before any reply, the gauge\'s tooltip says there is no provider count yet, in plain words', async () => {
    const tip = await gaugeTooltip(ctx.page);
    assert.match(tip, /No provider count yet: the number is Candor's own estimate/);
    assert.match(tip.split('\n')[0] ?? '', /^≈[\d,]+ ±[\d,]+ estimated by Candor \(no count from the provider to add to\)$/, 'the first sentence says what the number is');
    assert.match(tip, /Context: [\d,]+ of 128,000 tokens \(\d+%\)/);
    assert.match(tip, /History: 0 model switches; the provider's count was missing or not trusted 0 times, 0 with a warning; re-anchored 0 times, with a total difference of 0 tokens/);
    assert.ok(!/\(s\)/.test(tip), 'no "time(s)"');
    assert.ok(!/Anchor: none|\|delta\||loss windows/.test(tip), tip);
  });

  it('typing "Candor: Rant" in the palette and pressing Enter runs Rant, not Dismiss (a fresh profile)', async () => {
    // The harness's runCommand clicks the exact row; a person types and presses Enter: so does this test.
    await focusWorkbench(ctx.page);
    await ctx.page.keyboard.press('F1');
    const box = ctx.page.locator('.quick-input-widget .quick-input-box input');
    await box.waitFor({ state: 'visible', timeout: 10_000 });
    await box.fill('>Candor: Rant');
    await ctx.page.locator('.quick-input-list .monaco-list-row .label-name', { hasText: 'Candor: Rant' }).first().waitFor({ timeout: 10_000 });
    const rows = await ctx.page.locator('.quick-input-list .monaco-list-row .label-name').allInnerTexts();
    assert.equal(rows[0]?.trim(), 'Candor: Rant', `first row: ${JSON.stringify(rows)}`);
    await box.press('Enter');
    const prompt = await quickInputPrompt(ctx.page);
    assert.match(`${prompt.message} ${prompt.placeholder}`, /What went wrong\?/);
    assert.equal(prompt.title, 'Candor: Rant');
    await ctx.page.keyboard.press('Escape');
  });

  it('Candor: Focus on Chat View and Candor: New Session put the cursor in the message box', async () => {
    for (const title of ['Candor: Focus on Chat View', 'Candor: New Session']) {
      await focusWorkbench(ctx.page);
      assert.equal(await chatInputFocused(ctx.page), false, 'the editor has the keyboard first');
      await runCommand(ctx.page, title);
      await eventually(async () => ((await chatInputFocused(ctx.page)) ? true : undefined), 15_000, `the message box has the focus after ${title}`);
    }
  });

  it('a new session says what to do instead of showing an empty pane, and one name for it', async () => {
    const frame = await openChat(ctx.page);
    const hint = frame.locator('#empty-hint');
    // The offline demo shows its welcome in a new session; the hint is for every other provider.
    const welcome = frame.locator('#welcome');
    await eventually(async () => ((await hint.isVisible()) || (await welcome.isVisible()) ? true : undefined), 10_000, 'a hint or the welcome');
    assert.equal(await frame.locator('#session-title').innerText(), 'New session');
  });

  it('Find counts the matches, not the messages, and steps through them in one message', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'tell me about apples');
    await waitForTranscript(frame, 'Apple pie');
    await waitIdle(ctx.page);
    // "apple" is once in the question and three times in the reply: 4 matches in 2 messages.
    await frame.locator('#transcript').click();
    await ctx.page.keyboard.press('Control+F');
    const find = frame.getByRole('textbox', { name: 'Find in chat' });
    await find.waitFor({ state: 'visible', timeout: 10_000 });
    await find.fill('apple');
    const status = frame.locator('.find-status');
    await eventually(async () => ((await status.innerText()) === '4 of 4 matches' ? true : undefined), 10_000, '"4 of 4 matches"');
    // Going older from the newest, the last match of the reply: the "apple" of "apples".
    assert.deepEqual(await frame.locator('.entry.found mark').evaluateAll((marks) => marks.map((m) => m.classList.contains('current'))), [false, false, true]);
    await find.press('Enter');
    await eventually(async () => ((await status.innerText()) === '3 of 4 matches' ? true : undefined), 5_000, '"3 of 4" after Enter');
    await find.press('Enter');
    await find.press('Enter');
    await eventually(async () => ((await status.innerText()) === '1 of 4 matches' ? true : undefined), 10_000, '"1 of 4": the question');
    assert.equal(await frame.locator('.entry.found .who').innerText(), 'You');
    await find.press('Shift+Enter');
    await eventually(async () => ((await status.innerText()) === '2 of 4 matches' ? true : undefined), 10_000, '"2 of 4" going newer');
    await screenshot(ctx.page, 'first-run-find');
    await find.press('Escape');
    // The reply brought usage: the tooltip names the provider's count, and Candor's estimate beside it.
    const tip = await eventually(async () => {
      const t = await gaugeTooltip(ctx.page);
      return /Last count from the provider/.test(t) ? t : undefined;
    }, 15_000, 'the tooltip shows the provider\'s count');
    assert.match(tip, /Last count from the provider: [\d,]+ tokens \(Candor had estimated [\d,]+\), candor-offline @ the offline demo/);
  });

  it('a reply and its code block each have a copy button that copies', async () => {
    await ctx.wb.context.grantPermissions(['clipboard-read', 'clipboard-write']);
    const frame = await openChat(ctx.page);
    const reply = frame.locator('.entry.assistant').last();
    const copy = reply.getByRole('button', { name: 'Copy reply' });
    await copy.click();
    await eventually(async () => ((await reply.getByRole('button', { name: 'Copied' }).count()) > 0 ? true : undefined), 5_000, 'the button says Copied');
    const copied = await ctx.page.evaluate(() => navigator.clipboard.readText());
    assert.match(copied, /Apple pie, and apples \*\*again\*\*\.\n\n```sh\n/, 'the reply as it came, markdown and all');
    const block = reply.locator('.code-block');
    await block.hover();
    await block.getByRole('button', { name: 'Copy code' }).click();
    await eventually(async () => ((await ctx.page.evaluate(() => navigator.clipboard.readText())) === 'echo no fruit here\n' ? true : undefined), 5_000, 'the code alone is copied');
    assert.equal(await reply.getByRole('button', { name: /^(Good|Bad) reply$/ }).count(), 2, 'the feedback buttons are there, with names');
    assert.equal((await reply.locator('.feedback').innerText()).replace(/\s/g, ''), '', 'icons, not ▲▼ glyphs');
  });

  it('closed by the user, the chat does not open by itself again', async () => {
    await activityBarItem(ctx.page, 'Explorer').first().locator('a.action-label').click();
    await eventually(async () => ((await sideBarHeading(ctx.page)).startsWith('EXPLORER') ? true : undefined), 10_000, 'the Explorer shows');
    // Reload Window, as a person does: VS Code saves the layout on the way (a bare page reload may not).
    await runCommand(ctx.page, 'Developer: Reload Window');
    await ctx.page.waitForTimeout(2_000);
    await waitForWorkbench(ctx.page);
    // Candor activates again (its gauge shows); give a wrongly repeated first run time to happen.
    await ctx.page.locator('.statusbar-item[id="candor.candor.candor.gauge"]').waitFor({ state: 'visible', timeout: 60_000 });
    await ctx.page.waitForTimeout(3_000);
    assert.ok((await sideBarHeading(ctx.page)).startsWith('EXPLORER'), `the side bar shows ${await sideBarHeading(ctx.page)}`);
    const shown = ctx.vs.candorLog().match(/first run: showing the chat/g) ?? [];
    assert.equal(shown.length, 1, 'shown once, on the first activation only');
    await openActivityView(ctx.page, 'Candor');
  });
});

describe('first run: the walkthrough', function () {
  const ctx = useWorkbench({
    start: (ws) => ({
      settings: { 'candor.dataDir': ws.dataDir, 'workbench.welcomePage.walkthroughs.openOnInstall': true },
    }),
  });

  async function openWalkthrough(page: Page): Promise<void> {
    await runCommand(page, 'Welcome: Open Walkthrough...');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Get started with Candor' });
    await row.first().waitFor({ state: 'visible', timeout: 15_000 });
    await row.first().click();
    await page.locator('.gettingStartedContainer').waitFor({ state: 'visible', timeout: 15_000 });
  }

  it('lists its steps: the chat, a model, the key, the gauge, Rant, the agent repository', async () => {
    await openWalkthrough(ctx.page);
    const titles = (await ctx.page.locator('.gettingStartedContainer .getting-started-step:visible .step-title').allInnerTexts()).map((t) => t.trim());
    assert.deepEqual(titles, ['Open the chat', 'Choose a model', 'Set the key', 'Read the gauge', 'Rant', 'Set the agent repository']);
    await screenshot(ctx.page, 'walkthrough');
  });

  /** Unfolds the step titled TITLE (a click on a step that is open already would do nothing else) and returns it. */
  async function openStep(page: Page, title: string): Promise<Locator> {
    const step = page.locator('.getting-started-step', { has: page.locator('.step-title', { hasText: title }) }).first();
    if (!(await step.evaluate((el) => el.classList.contains('expanded')))) await step.locator('.step-title').click();
    await eventually(async () => ((await step.evaluate((el) => el.classList.contains('expanded'))) ? true : undefined), 5_000, `the step "${title}" unfolds`);
    return step;
  }

  it('"Open Chat" shows the chat with the cursor in the message box', async () => {
    await openWalkthrough(ctx.page);
    const step = await openStep(ctx.page, 'Open the chat');
    // The keyboard is in the walkthrough, not in the chat, when the button is pressed.
    assert.equal(await chatInputFocused(ctx.page), false);
    await step.getByRole('button', { name: 'Open Chat' }).click();
    await eventually(async () => ((await chatInputFocused(ctx.page)) ? true : undefined), 15_000, 'the message box has the focus');
  });

  it('"Open Setting" lands on the tab where the agent repository can be set (Remote, in code-server)', async () => {
    await openWalkthrough(ctx.page);
    const step = await openStep(ctx.page, 'Set the agent repository');
    assert.match(await step.innerText(), /Remote tab/);
    await step.getByRole('button', { name: 'Open Setting' }).click();
    const editor = ctx.page.locator('.settings-editor');
    await editor.waitFor({ state: 'visible', timeout: 15_000 });
    const tab = editor.locator('.settings-tabs-widget [role="tab"][aria-selected="true"]');
    await eventually(async () => (/^Remote/.test(await tab.innerText()) ? true : undefined), 10_000, 'the Remote tab is selected');
    // The setting itself shows, not "No Settings Found".
    await editor.getByText('1 Setting Found').waitFor({ state: 'visible', timeout: 10_000 });
    await editor.getByText('Evolution: Repository').first().waitFor({ state: 'visible', timeout: 10_000 });
    assert.match(await editor.innerText(), /checkout of the agent itself/);
    await screenshot(ctx.page, 'walkthrough-open-setting');
  });
});

describe('first run: a base URL without /v1', function () {
  // An OpenAI-compatible server that serves its API under /v1 only, as most
  // do, and answers anything else with a plain-text 404.
  let server: http.Server;
  let port = 0;
  before(async () => {
    server = http.createServer((req, res) => {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('404 page not found');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    port = (server.address() as { port: number }).port;
  });
  after(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const ctx = useWorkbench({
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.baseUrl': `http://127.0.0.1:${port}`,
        'candor.model': 'some-model',
        'candor.request.maxRetries': 2,
      },
    }),
  });

  async function chat(): Promise<Frame> {
    await openChat(ctx.page);
    return webviewFrame(ctx.page, '#transcript');
  }

  it('the header names the provider by host and port, not by its slug', async () => {
    const frame = await chat();
    await eventually(async () => ((await frame.locator('#provider').innerText()) === `some-model @ 127.0.0.1:${port}` ? true : undefined), 15_000, 'host:port in the header');
    assert.ok(!(await frame.locator('#provider').innerText()).includes('127-0-0-1'));
    // Nothing sent yet, and no offline welcome for a real provider: the pane says what to do.
    assert.match(await frame.locator('#empty-hint').innerText(), /A new session\. Ask about the code in this workspace/);
  });

  it('a message says the URL tried, HTTP 404, and asks whether /v1 is missing', async () => {
    const frame = await chat();
    await sendMessage(ctx.page, 'hello');
    const text = await waitForTranscript(frame, 'HTTP 404');
    assert.match(text, new RegExp(`for http://127\\.0\\.0\\.1:${port}/chat/completions`));
    assert.match(text, /Is \/v1 missing from candor\.baseUrl\?/);
    await waitIdle(ctx.page);
  });

  it('Select Model says the list could not be read: "Could not list models: HTTP 404"', async () => {
    await runCommand(ctx.page, 'Candor: Select Model');
    const row = ctx.page.locator('.quick-input-list .monaco-list-row', { hasText: 'Could not list models: HTTP 404' });
    await row.first().waitFor({ state: 'visible', timeout: 15_000 });
    assert.match(await row.first().innerText(), new RegExp(`127\\.0\\.0\\.1:${port}/models`));
    assert.match(await row.first().innerText(), /Is \/v1 missing/);
    await screenshot(ctx.page, 'select-model-404');
    await ctx.page.keyboard.press('Escape');
  });

  it('a connection failure shows one error box, with no doubled punctuation', async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const frame = await chat();
    const before = await frame.locator('.entry.notice:visible').count();
    await sendMessage(ctx.page, 'are you there');
    await waitForTranscript(frame, 'Could not reach the provider', 30_000);
    await waitIdle(ctx.page);
    const boxes = frame.locator('.entry.notice.error:visible');
    assert.equal(await frame.locator('.entry.notice:visible').count() - before, 1, 'one box for the failure and its two retries');
    const said = await boxes.last().innerText();
    assert.match(said, new RegExp(`at http://127\\.0\\.0\\.1:${port}/chat/completions \\(Connection error\\)\\. Check`));
    assert.ok(!/\.\)\./.test(await transcriptText(frame)), 'no "(….)."');
    server = http.createServer();
  });
});
