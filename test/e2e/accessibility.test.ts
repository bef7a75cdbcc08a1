// The chat webview against WCAG 2.1 A/AA with axe-core, in the four themes a
// user may run (Light Modern, Dark Modern, High Contrast Dark and Light):
// after a conversation with a tool call, after a provider error, with the
// gauge warning, and in the drift view. Text must reach 4.5:1 everywhere.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import { assertAxeClean, describeViolations, runAxe, runCommand, screenshot, useWorkbench, webviewFrame, writeScenario } from './harness';
import { chatButton, openChat, sendMessage, waitForTranscript, waitIdle } from './candor';
import { skipUnless } from '../helpers/preconditions';

const THEMES = ['Default Light Modern', 'Default Dark Modern', 'Default High Contrast', 'Default High Contrast Light'] as const;

/** The webview's own background colour, so a wrong theme cannot pass unnoticed. */
async function background(frame: Frame): Promise<string> {
  return frame.evaluate(() => getComputedStyle(document.body).backgroundColor);
}

const backgrounds = new Map<string, string>();

for (const theme of THEMES) {
  describe(`accessibility of the chat: ${theme}`, function () {
    const ctx = useWorkbench({
      start: (ws) => {
        // An uncommitted change: the header's git line says the workspace is read-only, with its warning.
        fs.writeFileSync(path.join(ws.dir, 'README.md'), 'changed and not committed\n');
        return {
          settings: {
            'workbench.colorTheme': theme,
            'candor.dataDir': ws.dataDir,
            'candor.request.maxRetries': 0,
            'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
              rules: [
                { match: { lastRole: 'tool' }, respond: { text: 'The folder holds `src/`, `test/` and a [README](https://example.invalid/readme).\n\n```js\nconsole.log("hi");\n```' } },
                { match: { user: 'list' }, respond: { toolCalls: [{ name: 'list_files', arguments: { path: '.' } }] } },
                { match: { user: 'propose' }, respond: { toolCalls: [{ name: 'propose_edit', arguments: { path: 'README.md', content: 'proposed\n' } }, { name: 'run_command', arguments: { command: 'echo hi\u202e' } }] } },
                { match: { user: 'break' }, respond: { error: { status: 500, message: 'scripted outage' } } },
                { match: { user: 'no usage' }, usage: false, respond: { text: 'A reply without usage.' } },
                { respond: { text: 'Plain **reply**.' } },
              ],
            }),
          },
        };
      },
    });

    it('after a conversation with a tool call: no WCAG 2.1 A/AA violation', async () => {
      // A tall window, so the whole conversation is on screen: axe leaves what is scrolled away unchecked.
      await ctx.page.setViewportSize({ width: 1400, height: 2400 });
      const frame = await openChat(ctx.page);
      backgrounds.set(theme, await background(frame));
      await sendMessage(ctx.page, 'list the files');
      await waitForTranscript(frame, 'The folder holds');
      await waitIdle(ctx.page);
      await frame.locator('.entry.tool-result summary').first().click();
      await frame.locator('#git.dirty').waitFor({ state: 'visible', timeout: 20_000 });
      assertAxeClean(await runAxe(frame), `${theme}, after a tool call`);
    });

    it('a pending proposal and a command waiting for its answer: no violation', async () => {
      await ctx.page.setViewportSize({ width: 1400, height: 2400 });
      const frame = await openChat(ctx.page);
      await sendMessage(ctx.page, 'propose and run');
      const deny = await chatButton(ctx.page, /^Deny echo hi/);
      await frame.locator('.entry.proposal').last().waitFor({ state: 'visible', timeout: 20_000 });
      assertAxeClean(await runAxe(frame), `${theme}, a proposal and a command waiting`);
      await deny.click();
      await waitIdle(ctx.page);
    });

    it('after a provider error and a reply without usage: no violation', async () => {
      const frame = await openChat(ctx.page);
      await sendMessage(ctx.page, 'break it');
      await waitForTranscript(frame, 'HTTP 500: scripted outage');
      await waitIdle(ctx.page);
      await sendMessage(ctx.page, 'no usage please');
      await waitForTranscript(frame, 'A reply without usage.');
      await waitIdle(ctx.page);
      await frame.locator('#gauge.warning').waitFor({ state: 'visible', timeout: 20_000 });
      await frame.locator('#rants-panel > summary').click();
      assertAxeClean(await runAxe(frame), `${theme}, after a provider error`);
      await screenshot(ctx.page, `a11y-${theme}`);
    });

    if (theme === 'Default Light Modern') {
      it('the check is real: the error notice in --vscode-errorForeground, as it was drawn before, fails it', async () => {
        const frame = await openChat(ctx.page);
        await frame.locator('.entry.notice.error').last().scrollIntoViewIfNeeded();
        // CSSOM, not a style attribute: the webview's CSP stays as it is.
        await frame.evaluate(() => {
          for (const el of document.querySelectorAll<HTMLElement>('.entry.notice.error .body')) el.style.color = 'var(--vscode-errorForeground)';
        });
        const { violations } = await runAxe(frame);
        await frame.evaluate(() => {
          for (const el of document.querySelectorAll<HTMLElement>('.entry.notice.error .body')) el.style.color = '';
        });
        const contrast = violations.find((v) => v.id === 'color-contrast');
        assert.ok(contrast, `axe finds the old colour too low: ${describeViolations(violations)}`);
        assert.ok(contrast.nodes.some((n) => n.target.join(' ').includes('body') || n.html.includes('HTTP 500')), describeViolations([contrast]));
      });
    }

    it('the drift view, with its chart and its axes: no violation', async () => {
      const chat = await openChat(ctx.page);
      // A reply with usage after the one without: the provider counts again, and the chart has a point.
      await sendMessage(ctx.page, 'and now with usage');
      await waitForTranscript(chat, 'Plain reply.');
      await waitIdle(ctx.page);
      await runCommand(ctx.page, 'Candor: Show Drift');
      const frame = await webviewFrame(ctx.page, '#drift-view');
      await frame.locator('#drift-view').waitFor({ state: 'visible', timeout: 15_000 });
      const view = await frame.locator('#drift-view').innerText();
      assert.match(view, /Times the provider's count was missing or not trusted\s+1\b/);
      assert.match(view, /Total difference from Candor's estimates\s+[\d,]+ tokens/);
      assert.deepEqual(await frame.locator('.drift-chart .axis-label').allTextContents().then((t) => t.filter((l) => /time|difference|estimate/.test(l))), ['time (UTC)', 'difference', 'estimate']);
      assertAxeClean(await runAxe(frame), `${theme}, the drift view`);
      // The chart's numbers and titles are drawn in the colour of the text axe checked (the foreground), on the same background.
      const colours = await frame.evaluate(() => ({
        text: getComputedStyle(document.querySelector('.drift-totals dd') as Element).color,
        labels: [...document.querySelectorAll('.drift-chart .axis-label')].map((l) => getComputedStyle(l).fill),
        chart: getComputedStyle(document.querySelector('.drift-chart') as Element).backgroundColor,
      }));
      assert.ok(colours.labels.length >= 6 && colours.labels.every((fill) => fill === colours.text), JSON.stringify(colours));
      assert.equal(colours.chart, 'rgba(0, 0, 0, 0)', 'the chart has no background of its own');
      await frame.getByRole('button', { name: 'Back to chat' }).click();
    });
  });
}

describe('accessibility: the four themes were four themes', function () {
  it('each theme gave the chat its own background', function () {
    skipUnless(this, backgrounds.size < THEMES.length ? `only ${backgrounds.size} of the ${THEMES.length} themes ran (a --grep, or a failure above)` : undefined);
    assert.equal(new Set(backgrounds.values()).size, THEMES.length, JSON.stringify([...backgrounds]));
  });
});
