// Workspace memory as a user meets it: the agent's remember tool, the memory
// in the system prompt, Candor: Condense Memory with its bytes-saved notice,
// and the refusal to condense a file an editor holds unsaved changes to.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { workspaceIdFor } from '../../src/core/workspaceId';
import { eventually, runCommand, screenshot, useWorkbench, waitForNotification, writeScenario } from './harness';
import { openChat, sendMessage, transcriptText, waitForTranscript, waitIdle } from './candor';

const NOTE = 'The build command is npm run package (e2e note).';
const SUMMARY = 'Condensed: builds with npm run package; tests with npm test; the user prefers short answers.';

/** A memory file worth condensing: many notes, some of them repeated, with multibyte text. */
const PREPARED = [
  '# Candor memory: notes the agent keeps about this workspace',
  ...Array.from({ length: 60 }, (_, i) => `\n## 2026-01-${String((i % 28) + 1).padStart(2, '0')}T10:00:00Z\nNote ${i}: the user prefers short answers — kurze Antworten, 短い答え.`),
  '',
].join('\n');

const bytesIn = (text: string): number => Number(text.replace(/,/g, ''));

describe('workspace memory', function () {
  let memoryFile = '';
  const ctx = useWorkbench({
    start: (ws) => {
      // The default place: <dataDir>/memory/<workspace id>/memory.md, prepared before start.
      memoryFile = path.join(ws.dataDir, 'memory', workspaceIdFor(ws.dir), 'memory.md');
      fs.mkdirSync(path.dirname(memoryFile), { recursive: true });
      fs.writeFileSync(memoryFile, PREPARED);
      return {
        settings: {
          'candor.dataDir': ws.dataDir,
          // VS Code for the Web saves after a delay by default; test 4 needs a buffer that stays unsaved.
          'files.autoSave': 'off',
          'candor.request.maxRetries': 0,
          // Far above this test's file: only the palette command condenses.
          'candor.memory.condenseAboveBytes': 10_000_000,
          'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
            rules: [
              // One summary only: a second summary request fails loudly (test 3 relies on it).
              { match: { system: '^You condense' }, respond: { text: SUMMARY }, times: 1 },
              { match: { system: '^You condense' }, respond: { error: { status: 500, message: 'e2e: a second summary request was made' } } },
              { match: { lastRole: 'tool' }, respond: { text: 'Noted. The tool said: done.' } },
              { match: { user: 'remember' }, respond: { toolCalls: [{ name: 'remember', arguments: { text: NOTE } }] } },
              {
                match: { user: 'recall', system: 'Workspace memory[\\s\\S]*npm run package \\(e2e note\\)' },
                respond: { text: 'The note is in my system prompt.' },
              },
              { match: { user: 'recall' }, respond: { text: 'The note is NOT in my system prompt.' } },
              { respond: { text: 'Plain reply.' } },
            ],
          }),
        },
      };
    },
  });

  const read = (file: string): string => fs.readFileSync(file, 'utf8');
  /** The progress notification closes once the outcome is known. */
  const progressGone = (): Promise<void> => ctx.page
    .locator('.notifications-toasts .notification-list-item-message', { hasText: 'waiting for the summary' })
    .first().waitFor({ state: 'hidden', timeout: 10_000 });
  const leftovers = (): string[] => fs.readdirSync(path.dirname(memoryFile)).filter((f) => f.includes('.condense-'));

  it('the remember tool appends a dated entry to memory.md in the data folder, and the workspace stays clean', async () => {
    const frame = await openChat(ctx.page);
    const started = Date.now();
    await sendMessage(ctx.page, 'please remember the build command');
    await waitForTranscript(frame, 'Noted. The tool said: done.');
    await waitIdle(ctx.page);

    const text = read(memoryFile);
    assert.ok(text.startsWith(PREPARED), 'append-only: the earlier notes are untouched');
    const entry = text.slice(PREPARED.length);
    const match = /^\n## (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)\n(.*)\n$/.exec(entry);
    assert.ok(match, `one dated entry was appended: ${JSON.stringify(entry)}`);
    assert.equal(match[2], NOTE);
    const stamp = Date.parse(match[1] ?? '');
    assert.ok(stamp >= Math.floor(started / 1000) * 1000 - 1000 && stamp <= Date.now() + 1000, `the entry is dated now: ${match[1]}`);

    const rel = path.relative(ctx.ws.dir, memoryFile);
    assert.ok(rel.startsWith('..'), 'memory.md lies outside the workspace folder');
    assert.equal(ctx.ws.git('status', '--porcelain'), '', 'the repository is not dirty');
  });

  it('the memory goes into the system prompt of the next request', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'what do you recall?');
    await waitForTranscript(frame, /The note is (NOT )?in my system prompt\./);
    await waitIdle(ctx.page);
    assert.doesNotMatch(await transcriptText(frame), /NOT in my system prompt/);
  });

  it('Candor: Condense Memory shrinks the file, shows the bytes saved, and keeps memory.md.bak', async () => {
    const before = read(memoryFile);
    await runCommand(ctx.page, 'Candor: Condense Memory');
    const toast = await waitForNotification(ctx.page, /memory condensed/, 30_000);
    await progressGone();
    await screenshot(ctx.page, 'memory-condensed');

    const after = read(memoryFile);
    assert.equal(after, `${SUMMARY}\n`);
    assert.equal(read(`${memoryFile}.bak`), before, 'the backup holds the previous content');
    assert.deepEqual(leftovers(), [], 'no temp file is left');

    const numbers = /([\d,]+) bytes → ([\d,]+) bytes, ([\d,]+) bytes saved \(carried ([\d,]+) bytes/.exec(toast);
    assert.ok(numbers, `the notification states the bytes: ${toast}`);
    assert.equal(bytesIn(numbers[1] ?? ''), Buffer.byteLength(before));
    assert.equal(bytesIn(numbers[2] ?? ''), Buffer.byteLength(after));
    assert.equal(bytesIn(numbers[3] ?? ''), Buffer.byteLength(before) - Buffer.byteLength(after));
    assert.equal(bytesIn(numbers[4] ?? ''), 0);
    assert.equal(ctx.ws.git('status', '--porcelain'), '');
  });

  it('an unsaved editor buffer of memory.md refuses the condense with source-unsaved before any summary request', async () => {
    const before = read(memoryFile);
    const backup = read(`${memoryFile}.bak`);
    await runCommand(ctx.page, 'Candor: Open Memory');
    const tab = ctx.page.locator('.tabs-container .tab.active', { hasText: 'memory.md' });
    await tab.waitFor({ state: 'visible', timeout: 15_000 });
    await ctx.page.locator('.editor-instance .monaco-editor .view-lines').first().click();
    await ctx.page.keyboard.press('Control+End');
    await ctx.page.keyboard.type('\nA line typed but not saved.');
    await ctx.page.locator('.tabs-container .tab.active.dirty', { hasText: 'memory.md' }).waitFor({ state: 'visible', timeout: 10_000 });

    await runCommand(ctx.page, 'Candor: Condense Memory');
    const toast = await waitForNotification(ctx.page, /source-unsaved/, 30_000);
    await progressGone();
    await screenshot(ctx.page, 'memory-source-unsaved');
    assert.match(toast, /unsaved changes/, 'the reason is said in plain words');
    assert.match(toast, /Save or revert/, 'with a next step');

    // A summary request would have hit the scenario's second summary rule and ended in model-failed.
    assert.doesNotMatch(toast, /model-failed/);
    assert.equal(read(memoryFile), before, 'memory.md is unchanged on disk');
    assert.equal(read(`${memoryFile}.bak`), backup, 'no new backup was written');
    assert.deepEqual(leftovers(), [], 'no temp file is left');
    await eventually(() => (/memory condense aborted \(source-unsaved\)/.test(ctx.vs.candorLog()) ? true : undefined), 15_000, 'the outcome is logged');
  });
});

describe('workspace memory at candor.memory.path, condensed automatically', function () {
  let memoryFile = '';
  const ctx = useWorkbench({
    start: (ws) => {
      // A path of the user's choice outside the workspace, and a threshold the prepared file already passes.
      memoryFile = path.join(ws.dataDir, '..', 'elsewhere', 'notes.md');
      fs.mkdirSync(path.dirname(memoryFile), { recursive: true });
      fs.writeFileSync(memoryFile, PREPARED);
      return {
        settings: {
          'candor.dataDir': ws.dataDir,
          'candor.memory.path': memoryFile,
          'candor.memory.condenseAboveBytes': 2048,
          'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
            rules: [
              { match: { system: '^You condense' }, respond: { text: SUMMARY } },
              { match: { lastRole: 'tool' }, respond: { text: 'Noted.' } },
              { match: { user: 'remember' }, respond: { toolCalls: [{ name: 'remember', arguments: { text: NOTE } }] } },
              { respond: { text: 'Plain reply.' } },
            ],
          }),
        },
      };
    },
  });

  it('a note that takes the file past condenseAboveBytes starts a condense on its own, and it is shown', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'remember the build command');
    await waitForTranscript(frame, 'Noted.');
    const toast = await waitForNotification(ctx.page, /memory condensed/, 30_000);
    assert.match(toast, /bytes saved/);
    const backup = fs.readFileSync(`${memoryFile}.bak`, 'utf8');
    assert.ok(backup.startsWith(PREPARED) && backup.endsWith(`\n${NOTE}\n`), 'the backup holds the notes and the new entry');
    assert.equal(fs.readFileSync(memoryFile, 'utf8'), `${SUMMARY}\n`);
    assert.equal(fs.existsSync(path.join(ctx.ws.dataDir, 'memory')), false, 'nothing was written to the default place');
    assert.equal(ctx.ws.git('status', '--porcelain'), '');
  });
});
