// The read-only git guard in VS Code: unsaved buffers make Candor read-only,
// propose_edit goes through the editor, and — with a git spy first on the
// extension host's PATH — nothing Candor runs in the workspace can stash,
// reset, clean or otherwise rewrite it.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { eventually, screenshot, useWorkbench, writeScenario } from './harness';
import { chatButton, openChat, openFile, sendMessage, waitForTranscript, waitIdle } from './candor';
import { callsIn, readSpyLog, spiedGit, writingCalls } from '../helpers/gitSpy';

describe('git guard and workspace tools in VS Code', function () {
  const spy = spiedGit();
  const ctx = useWorkbench({
    start: (ws) => ({
      pathPrefix: spy.pathPrefix,
      env: spy.env,
      settings: {
        'candor.dataDir': ws.dataDir,
        // VS Code's own git extension would also call git in the workspace; with it
        // off, every workspace call in the spy log is Candor's.
        'git.enabled': false,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            { match: { lastRole: 'tool' }, respond: { text: 'Tool said: done.' } },
            { match: { user: 'status please' }, respond: { toolCalls: [{ name: 'git_status', arguments: {} }] } },
            { match: { user: 'diff please' }, respond: { toolCalls: [{ name: 'git_diff', arguments: {} }] } },
            { match: { user: 'log please' }, respond: { toolCalls: [{ name: 'git_log', arguments: { count: 5 } }] } },
            { match: { user: 'escape please' }, respond: { toolCalls: [{ name: 'read_file', arguments: { path: '../../../../etc/passwd' } }] } },
            { match: { user: 'edit please' }, respond: { toolCalls: [{ name: 'propose_edit', arguments: { path: 'README.md', old_text: '# Candor demo workspace', new_text: '# Candor demo workspace, edited by Candor' } }] } },
            { respond: { text: 'ok' } },
          ],
        }),
      },
    }),
  });

  const header = async (): Promise<string> => (await openChat(ctx.page)).locator('#git').innerText();

  it('the chat header shows a clean workspace', async () => {
    await eventually(async () => ((await header()).includes('clean') ? true : undefined), 30_000, 'header says clean');
  });

  it('typing into an editor without saving turns Candor read-only; saving turns it back', async () => {
    await openFile(ctx.page, 'README.md');
    const editor = ctx.page.locator('.monaco-editor:visible .view-lines').first();
    await editor.waitFor({ state: 'visible', timeout: 15_000 });
    await editor.click();
    await ctx.page.keyboard.press('Control+End');
    await ctx.page.keyboard.type('\nunsaved words');
    const dirty = await eventually(async () => {
      const h = await header();
      return h.includes('read-only') && h.includes('unsaved') ? h : undefined;
    }, 20_000, 'header says dirty, unsaved, read-only');
    assert.match(dirty, /1 unsaved/);
    await screenshot(ctx.page, 'git-unsaved-read-only');
    await ctx.page.locator('.monaco-editor:visible .view-lines').first().click();
    await ctx.page.keyboard.press('Control+S');
    // Saved: now git sees the change on disk; still read-only, but for a disk change.
    await eventually(async () => ((await header()).includes('1 on disk') ? true : undefined), 20_000, 'dirty on disk after save');
    ctx.ws.git('checkout', '--', 'README.md');
    await eventually(async () => ((await header()).includes('clean') ? true : undefined), 20_000, 'clean again once the change is gone');
  });

  it('the git tools answer in the chat, bounded and collapsed', async () => {
    const frame = await openChat(ctx.page);
    for (const ask of ['status please', 'diff please', 'log please']) {
      await sendMessage(ctx.page, ask);
      await waitForTranscript(frame, ask);
      await waitIdle(ctx.page);
    }
    const text = await frame.locator('#transcript').innerText();
    assert.match(text, /Tool result: git_status \(\d[\d,]* bytes\)/);
    assert.match(text, /Tool result: git_log/);
    const details = frame.locator('.entry.tool-result details');
    assert.equal(await details.first().getAttribute('open'), null, 'tool results are collapsed');
  });

  it('a tool path that escapes the workspace gets a clear error, not a crash', async () => {
    const frame = await openChat(ctx.page);
    const results = frame.locator('.entry.tool-result');
    const before = await results.count();
    await sendMessage(ctx.page, 'escape please');
    await eventually(async () => ((await results.count()) > before ? true : undefined), 20_000, 'the tool result appears');
    const result = (await frame.locator('.entry.tool-result pre').last().textContent()) ?? '';
    assert.match(result, /^Error: /);
    assert.doesNotMatch(result, /root:x:0:0/);
  });

  it('propose_edit: the proposal waits in the chat; Accept puts the edit in the buffer, not on disk, and it can be undone', async () => {
    const readme = path.join(ctx.ws.dir, 'README.md');
    const before = fs.readFileSync(readme, 'utf8');
    const frame = await openChat(ctx.page);
    const results = await frame.locator('.entry.tool-result').count();
    await sendMessage(ctx.page, 'edit please');
    // The turn does not wait for the decision: the model got its answer at once.
    await eventually(async () => ((await frame.locator('.entry.tool-result').count()) > results ? true : undefined), 20_000, 'the tool result');
    await waitIdle(ctx.page);
    assert.match((await frame.locator('.entry.tool-result pre').last().textContent()) ?? '', /pending the user's decision/);
    assert.match(await frame.locator('.entry.proposal').last().innerText(), /\+# Candor demo workspace, edited by Candor/);
    await (await chatButton(ctx.page, 'Accept README.md')).click();
    await eventually(async () => ((await ctx.page.locator('.monaco-editor:visible .view-lines').first().innerText()).replace(/\u00a0/g, ' ').includes('edited by Candor') ? true : undefined), 15_000, 'the buffer shows the edit');
    assert.equal(fs.readFileSync(readme, 'utf8'), before, 'nothing was written to disk');
    await ctx.page.locator('.tabs-container .tab.dirty[aria-label^="README.md"]').first().waitFor({ state: 'visible', timeout: 10_000 });
    await eventually(async () => (/Accepted/.test(await frame.locator('.entry.proposal').last().innerText()) ? true : undefined), 10_000, 'the entry says accepted');
    await screenshot(ctx.page, 'git-propose-edit-accepted');
    await ctx.page.locator('.monaco-editor:visible .view-lines').first().click();
    await ctx.page.keyboard.press('Control+Z');
    await eventually(async () => ((await ctx.page.locator('.monaco-editor:visible .view-lines').first().innerText()).replace(/\u00a0/g, ' ').includes('edited by Candor') ? undefined : true), 15_000, 'undo removes the edit');
  });

  it('propose_edit: Reject changes nothing', async () => {
    const readme = path.join(ctx.ws.dir, 'README.md');
    const before = fs.readFileSync(readme, 'utf8');
    const frame = await openChat(ctx.page);
    const proposals = await frame.locator('.entry.proposal').count();
    await sendMessage(ctx.page, 'edit please');
    await waitIdle(ctx.page);
    await eventually(async () => ((await frame.locator('.entry.proposal').count()) > proposals ? true : undefined), 15_000, 'a new proposal');
    await (await chatButton(ctx.page, 'Reject README.md')).click();
    await eventually(async () => (/Rejected/.test(await frame.locator('.entry.proposal').last().innerText()) ? true : undefined), 10_000, 'the entry says rejected');
    assert.equal(fs.readFileSync(readme, 'utf8'), before);
  });

  it('the git spy saw Candor read the workspace and never run a forbidden subcommand there', () => {
    const inWorkspace = callsIn(readSpyLog(spy.log), fs.realpathSync(ctx.ws.dir));
    assert.ok(inWorkspace.length >= 5, `the spy logged Candor's reads (${inWorkspace.length} calls)`);
    assert.ok(inWorkspace.some((c) => c.verb === 'status'), 'status went through the shim');
    assert.deepEqual(writingCalls(inWorkspace), [], 'nothing that writes ran in the workspace');
  });
});
