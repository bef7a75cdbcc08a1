// A 10,000-message session as a user with a months-long chat meets it: it
// reopens after a window reload with its newest message in view, the chat
// answers in it, scrolling up brings older messages, and Ctrl+F finds its
// very first message. The window is large enough that nothing is compacted:
// this measures reopening, not compaction.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame } from 'playwright-core';
import {
  eventually, quickPickSelect, reloadWorkbench, runCommand, screenshot, useWorkbench, webviewByRole, writeScenario,
} from './harness';
import { openChat, sendMessage, waitForTranscript, waitIdle } from './candor';
import { writeLongSession } from '../unit/core/session/longSession';

const MESSAGES = 10_000;
const FIRST = 'Zebra-quartz opening question of the long session';

/** Text of the newest message record in the file, and of the one `back` messages before it. */
function messageText(file: string, back = 0): string {
  const messages = fs.readFileSync(file, 'utf8').trimEnd().split('\n')
    .map((line) => JSON.parse(line) as { type: string; message?: { role: string; content: string | null } })
    .filter((r) => r.type === 'message' && typeof r.message?.content === 'string' && r.message.role !== 'tool');
  return messages[messages.length - 1 - back]?.message?.content as string;
}

/** Entries in the chat's DOM, and whether the one with TEXT is within the transcript's visible box. */
async function transcriptState(frame: Frame, text: string): Promise<{ entries: number; visible: boolean }> {
  return frame.evaluate((wanted) => {
    const transcript = document.getElementById('transcript') as HTMLElement;
    const box = transcript.getBoundingClientRect();
    const entries = Array.from(transcript.querySelectorAll<HTMLElement>('.entry'));
    const hit = entries.find((e) => (e.textContent ?? '').includes(wanted));
    const r = hit?.getBoundingClientRect();
    return { entries: entries.length, visible: r !== undefined && r.bottom > box.top && r.top < box.bottom };
  }, text);
}

describe('a 10,000-message session', function () {
  let file = '';
  const ctx = useWorkbench({
    start: (ws) => {
      file = writeLongSession(path.join(ws.dataDir, 'sessions'), { messages: MESSAGES, id: '01jlongsession0000000000000', first: FIRST, toolEvery: 25 }).file;
      return {
        settings: {
          'candor.dataDir': ws.dataDir,
          'candor.contextWindow': 4_000_000,
          'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
            rules: [{ respond: { text: 'Streamed **answer** to: {{user}}' }, chunkChars: 4, chunkDelayMs: 15 }],
          }),
        },
      };
    },
  });

  it('opens from Open Session… and, after a window reload, reopens with the newest message in view', async function () {
    this.timeout(240_000);
    await openChat(ctx.page);
    await runCommand(ctx.page, 'Candor: Open Session…');
    await quickPickSelect(ctx.page, FIRST, 30_000);
    const newest = messageText(file);
    let frame = await openChat(ctx.page);
    await waitForTranscript(frame, 'Done with step', 60_000);

    await reloadWorkbench(ctx.page);
    const started = Date.now();
    frame = await openChat(ctx.page);
    const shown = await eventually(async () => {
      // Its last line has no markdown: the same text rendered or not.
      const state = await transcriptState(frame, newest.split('\n').at(-1) as string);
      return state.visible ? state : undefined;
    }, 90_000, 'the newest message in view after the reload');
    console.log(`      newest message in view ${Date.now() - started} ms after the chat view was opened; ${shown.entries} entries in the page`);
    assert.ok(shown.entries <= 600, `only the newest pages are in the page (${shown.entries} of ${MESSAGES})`);
    await screenshot(ctx.page, 'long-session-reopened');
  });

  it('the chat answers in it, and the streaming reply renders', async function () {
    this.timeout(180_000);
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'hello long session');
    await waitForTranscript(frame, 'Streamed answer to: hello long session', 120_000);
    assert.equal(await frame.locator('.entry.assistant strong', { hasText: 'answer' }).last().innerText(), 'answer', 'markdown is rendered');
    await waitIdle(ctx.page, 120_000);
    const lines = fs.readFileSync(file, 'utf8').trimEnd().split('\n').slice(-6).join('\n');
    assert.match(lines, /"content":"hello long session"/, 'the message went into the same session file');
    assert.match(lines, /Streamed \*\*answer\*\* to: hello long session/);
    const compacted = fs.readFileSync(file, 'utf8').includes('"type":"compaction"');
    assert.equal(compacted, false, 'reopening, not compaction');
  });

  it('scrolling up loads older messages', async function () {
    this.timeout(120_000);
    const frame = await openChat(ctx.page);
    const before = (await transcriptState(frame, '')).entries;
    const transcript = frame.locator('#transcript');
    await transcript.hover();
    const older = await eventually(async () => {
      await ctx.page.mouse.wheel(0, -4000);
      const state = await transcriptState(frame, '');
      return state.entries > before ? state : undefined;
    }, 60_000, 'older entries loaded');
    assert.ok(older.entries > before, `${before} → ${older.entries} entries`);
    const oldest = await frame.evaluate(() => document.querySelector<HTMLElement>('#transcript .entry')?.textContent ?? '');
    assert.ok(!oldest.includes(FIRST), 'paging brings the previous page, not the whole session');
    await screenshot(ctx.page, 'long-session-scrolled-up');
  });

  it('Ctrl+F finds the first message; Escape closes the find box', async function () {
    this.timeout(120_000);
    const frame = await openChat(ctx.page);
    await frame.locator('#transcript').click({ position: { x: 20, y: 20 } });
    await ctx.page.keyboard.press('Control+F');
    const box = await webviewByRole(ctx.page, 'textbox', 'Find in chat', 15_000);
    await box.waitFor({ state: 'visible', timeout: 15_000 });
    await box.fill('zebra-QUARTZ opening');
    await box.press('Enter');
    const found = await eventually(async () => {
      const state = await transcriptState(frame, FIRST);
      return state.visible ? state : undefined;
    }, 60_000, 'the first message scrolled into view');
    assert.ok(found.entries >= MESSAGES / 2, `the entries down to it were loaded (${found.entries})`);
    assert.equal(await frame.locator('.find-status').innerText(), '1 of 1 match', 'the one match, counted as a match');
    assert.match(await frame.locator('.entry.found').innerText(), /Zebra-quartz opening question/);
    await screenshot(ctx.page, 'long-session-found-first');
    await box.press('Escape');
    await eventually(async () => ((await frame.locator('#find').isHidden()) ? true : undefined), 10_000, 'the find box closed');
  });
});
