// Rant → evolution task → a tested commit on a branch in the scratch clone →
// the user takes it; and the same run is read-only while a buffer is unsaved.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  eventually, quickInputType, quickPickSelect, readJsonl, runCommand, screenshot, useWorkbench,
  waitForNotification, webviewByRole, writeScenario,
} from './harness';
import { openChat, openFile } from './candor';

type Run = { outcome: string; branch: string | null; commit: string | null; rants: string[]; reason: string; gate: { passed: boolean } | null };

/** What the task's terminal shows (gpuAcceleration is off, so its rows are DOM text). */
async function terminalText(page: import('playwright-core').Page): Promise<string> {
  return (await page.locator('.terminal .xterm-rows').allInnerTexts()).join('\n').replace(/\u00a0/g, ' ');
}

describe('evolution runs as a VS Code task', function () {
  const ctx = useWorkbench({
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.evolution.testCommand': 'npm test',
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            { match: { system: '^You triage' }, respond: { text: '[{"index": 0, "class": "bug", "note": "the word count is off"}]' } },
            {
              match: { system: 'scratch clone', lastRole: 'user' },
              respond: { toolCalls: [{ name: 'write_file', arguments: { path: 'NOTES-evolution.md', content: 'The word count counts CJK characters one by one.\n' } }] },
            },
            { match: { lastRole: 'tool' }, respond: { text: 'Documented how words are counted.' }, chunkChars: 500 },
            { respond: { text: 'ok' } },
          ],
        }),
      },
    }),
  });
  const runs = (): Run[] => readJsonl(path.join(ctx.ws.dataDir, 'evolution.jsonl')) as Run[];
  const snapshot = (): string => [
    ctx.ws.git('status', '--porcelain=v2', '--branch'),
    ctx.ws.git('ls-files', '--stage'),
    ctx.ws.git('for-each-ref'),
    ctx.ws.git('stash', 'list'),
    ctx.ws.git('reflog', '--all'),
  ].join('\n---\n');

  it('a rant, then Run Evolution from the palette: phases in the terminal, a shipped branch, the workspace untouched', async () => {
    await runCommand(ctx.page, 'Candor: Rant');
    await quickInputType(ctx.page, 'word counts look wrong for Japanese text');
    await waitForNotification(ctx.page, 'Rant saved');
    const before = snapshot();
    await runCommand(ctx.page, 'Candor: Run Evolution');
    // The terminal shows only its visible rows: collect them while the run goes,
    // so every phase is seen as it is printed.
    const seen = new Set<string>();
    await eventually(async () => {
      const t = await terminalText(ctx.page);
      for (const line of t.split('\n')) seen.add(line);
      return /Outcome: /.test(t) ? t : undefined;
    }, 120_000, 'the run ends with an outcome line');
    const text = [...seen].join('\n');
    await screenshot(ctx.page, 'evolution-terminal');
    for (const phase of ['triage', 'scratch clone', 'change', 'gate', 'ship', 'record']) assert.match(text, new RegExp(`── ${phase}`), `phase ${phase} was printed`);
    assert.match(text, /Outcome: shipped — branch candor\/rant-[0-9a-z]+/);
    const run = runs().at(-1);
    assert.equal(run?.outcome, 'shipped');
    assert.equal(run?.gate?.passed, true);
    assert.equal(snapshot(), before, 'the workspace: status, index, refs, stash and reflog are unchanged');
  });

  it('the chat lists the rant as acted on and the run with its branch', async () => {
    const frame = await openChat(ctx.page);
    await frame.locator('#rants-summary').click();
    const panel = await eventually(async () => {
      const t = await frame.locator('#rants-panel').innerText();
      return /acted/.test(t) && /shipped/.test(t) ? t : undefined;
    }, 20_000, 'the rants panel shows the acted rant and the shipped run');
    assert.match(panel, /word counts look wrong/);
    await frame.locator('details.run summary').first().click();
    await screenshot(ctx.page, 'evolution-rants-panel');
    await (await webviewByRole(ctx.page, 'button', /^Show the diff of candor\/rant-/)).click();
    const editor = ctx.page.locator('.monaco-editor:visible .view-lines').first();
    const diff = await eventually(async () => {
      const text = (await editor.innerText()).replace(/\u00a0/g, ' ');
      return text.includes('NOTES-evolution.md') ? text : undefined;
    }, 20_000, 'the diff opens in an editor');
    assert.match(diff, /Candor-Rant: /);
  });

  it('Take Evolution Branch fetches the branch into the workspace without checking it out', async () => {
    const run = runs().at(-1);
    assert.ok(run?.branch);
    const head = ctx.ws.git('rev-parse', 'HEAD');
    await runCommand(ctx.page, 'Candor: Take Evolution Branch');
    await quickPickSelect(ctx.page, run.branch);
    await waitForNotification(ctx.page, `Branch ${run.branch} is now in the workspace`);
    assert.equal(ctx.ws.git('rev-parse', `refs/heads/${run.branch}`).trim(), run.commit);
    assert.equal(ctx.ws.git('rev-parse', 'HEAD'), head, 'HEAD did not move');
    assert.equal(ctx.ws.git('status', '--porcelain'), '', 'the working tree is untouched');
    assert.match(ctx.ws.git('log', '-1', '--format=%B', run.branch), new RegExp(`Candor-Rant: ${run.rants[0]}`));
  });

  it('with an unsaved buffer the same run is read-only', async () => {
    await openFile(ctx.page, 'package.json');
    await ctx.page.locator('.monaco-editor:visible .view-lines').first().click();
    await ctx.page.keyboard.press('Control+End');
    await ctx.page.keyboard.type(' ');
    const before = snapshot();
    const runsBefore = runs().length;
    await runCommand(ctx.page, 'Candor: Run Evolution');
    const record = await eventually(() => (runs().length > runsBefore ? runs().at(-1) : undefined), 60_000, 'a new run is recorded');
    assert.equal(record.outcome, 'read-only');
    assert.match(record.reason, /dirty working tree — read-only cycle/);
    assert.match(record.reason, /package\.json/);
    await eventually(async () => ((await terminalText(ctx.page)).includes('read-only') ? true : undefined), 20_000, 'the terminal says read-only');
    assert.equal(snapshot(), before);
  });
});
