// Prompt evolution as a user meets it: the chat runs on the workspace's
// .candor/prompt.md, `Candor: Run Prompt Evolution` runs as a task in a
// terminal, a candidate that adds a phrase is promoted into the file (saved
// to disk), one that removes a frozen block is rejected by frozen_sections,
// the review panel shows the numbers, and `Candor: Roll Back Prompt` restores
// the first version.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { workspaceIdFor } from '../../src/core/workspaceId';
import { PromptRegistry } from '../../src/core/promptEvolution/registry';
import {
  eventually, findInWebview, quickPickSelect, runCommand, screenshot, statusBarItem, useWorkbench, waitForNotification, writeScenario,
} from './harness';
import { openChat, sendMessage, waitForTranscript, waitIdle } from './candor';

const PHRASE = 'Echo the task input verbatim.';
const PROMPT = [
  'You are Candor, a coding assistant inside VS Code.',
  'Be direct and honest: say what you know, what you do not, and what you did.',
  '<!-- frozen -->',
  "Never suggest commands that discard the user's uncommitted work.",
  '<!-- /frozen -->',
  'Use the tools to read the workspace before you answer questions about it.',
  'Keep answers short.',
  '',
].join('\n');
const WITH_PHRASE = PROMPT.replace('Keep answers short.', `Keep answers short.\n${PHRASE}`);
const WITHOUT_FROZEN = PROMPT.replace(/<!-- frozen -->\n.*\n<!-- \/frozen -->\n/, '');

/** 24 exact-match tasks: the right answer is the input itself. */
const TASKS = Array.from({ length: 24 }, (_, i) => {
  const id = `t${String(i + 1).padStart(2, '0')}`;
  return JSON.stringify({ id, input: `answer-${id}`, expected: `answer-${id}`, scorer: 'exact' });
}).join('\n');

/** Text of the terminal rows in the DOM (the harness turns GPU rendering off). */
async function terminalText(page: Page): Promise<string> {
  const rows = await page.locator('.xterm-rows').allInnerTexts();
  return rows.join('\n').replace(/\u00a0/g, ' ');
}

/** The registry as the window sees it: the scope of its (first) workspace folder. */
async function withRegistry<T>(ws: { dataDir: string; dir: string }, read: (registry: PromptRegistry) => Promise<T>): Promise<T> {
  const registry = await PromptRegistry.open({ file: path.join(ws.dataDir, 'traces.sqlite'), scope: workspaceIdFor(ws.dir) });
  try {
    return await read(registry);
  } finally {
    registry.close();
  }
}

describe('prompt evolution in VS Code', function () {
  const ctx = useWorkbench({
    workspace: { files: { '.candor/prompt.md': PROMPT, '.candor/evals/tasks.jsonl': `${TASKS}\n` } },
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.request.maxRetries': 0,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            // The proposer (src/core/promptEvolution/proposer.ts): one good candidate, one that drops the frozen block.
            {
              match: { system: '^You improve the system prompt' },
              respond: { text: JSON.stringify([{ prompt: WITH_PHRASE, rationale: 'answer with the input' }, { prompt: WITHOUT_FROZEN, rationale: 'a shorter prompt' }]) },
            },
            // The chat, to show which prompt it ran on.
            { match: { user: '^which prompt\\?$', system: 'Keep answers short' }, respond: { text: 'The workspace prompt is in force.' } },
            { match: { user: '^which prompt\\?$' }, respond: { text: 'The built-in prompt is in force.' } },
            // A/B tasks: right only under a prompt that holds the phrase.
            { match: { system: 'Echo the task input verbatim' }, respond: { text: '{{user}}' } },
            // Slow enough that a run can be cancelled mid-A/B.
            { respond: { text: 'I am not sure.' }, holdMs: 800 },
          ],
        }),
      },
    }),
  });

  it('the chat runs on .candor/prompt.md and each request lands in traces.sqlite', async () => {
    await statusBarItem(ctx.page, 'candor.gauge').waitFor({ state: 'visible', timeout: 60_000 });
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'which prompt?');
    await waitForTranscript(frame, 'The workspace prompt is in force.');
    await waitIdle(ctx.page);
    const traces = await eventually(
      () => withRegistry(ctx.ws, async (r) => {
        const all = await r.traces();
        return all.length > 0 ? all : undefined;
      }),
      15_000,
      'a trace in traces.sqlite',
    );
    assert.equal(traces[0]?.provider, 'offline');
    assert.equal(traces[0]?.model, 'candor-offline');
    assert.ok((traces[0]?.promptTokens ?? 0) > 0, 'the real prompt_tokens are kept');
    assert.ok(traces[0]?.replyId, 'the reply id is kept for thumbs up/down');
  });

  it('Run Prompt Evolution promotes the phrase into .candor/prompt.md and rejects the frozen-block removal', async () => {
    await runCommand(ctx.page, 'Candor: Run Prompt Evolution');
    const shown = await eventually(async () => {
      const text = await terminalText(ctx.page);
      return /Outcome: promote/.test(text) ? text : undefined;
    }, 90_000, 'the terminal shows the outcome');
    assert.match(shown, /Outcome: promote c-[0-9a-f]{12}/);

    const onDisk = await eventually(() => {
      const text = fs.readFileSync(path.join(ctx.ws.dir, '.candor', 'prompt.md'), 'utf8');
      return text.includes(PHRASE) ? text : undefined;
    }, 20_000, '.candor/prompt.md saved with the phrase');
    assert.equal(onDisk, WITH_PHRASE);
    assert.match(await terminalText(ctx.page), /Written to \.candor\/prompt\.md and saved/);
    await screenshot(ctx.page, 'prompt-evolution-terminal');

    // The review panel opens on a promotion: each candidate's checks and diff.
    const { frame } = await findInWebview(ctx.page, '#review article[data-candidate]', 30_000);
    const rejected = frame.locator('#last-run article.verdict-reject');
    await rejected.waitFor({ state: 'visible', timeout: 15_000 });
    assert.equal(await rejected.locator('tr.check-failed').count(), 1);
    assert.equal(await rejected.locator('tr.check-failed').getAttribute('data-check'), 'frozen_sections');
    assert.match(await rejected.locator('.verdict').innerText(), /rejected by frozen_sections/);
    const passed = frame.locator('#last-run article.verdict-pass');
    assert.equal(await passed.locator('tr.check-passed').count(), 6, 'all six checks shown, all passed');
    assert.match(await passed.locator('tr[data-check="confidence"]').innerText(), /p = 1\.192e-7/);
    assert.match(await passed.locator('pre.diff').innerText(), /\+Echo the task input verbatim\./);
    assert.match(await frame.locator('#versions').innerText(), /v2 — promotion of v1 \(in force\)[\s\S]*N=24 · b=24 · c=0/);
    await screenshot(ctx.page, 'prompt-evolution-review');

    const versions = await withRegistry(ctx.ws, (r) => r.versions());
    assert.deepEqual(versions.map((v) => v.kind), ['root', 'promotion']);
    assert.equal(versions[1]?.lineage?.n, 24);
    assert.equal(versions[1]?.lineage?.b, 24);
    assert.equal(versions[1]?.lineage?.c, 0);
  });

  it('Roll Back Prompt restores the first version, saved, and records the rollback', async () => {
    await runCommand(ctx.page, 'Candor: Roll Back Prompt');
    await quickPickSelect(ctx.page, 'v1 root');
    await waitForNotification(ctx.page, /restored v1/);
    await eventually(() => (fs.readFileSync(path.join(ctx.ws.dir, '.candor', 'prompt.md'), 'utf8') === PROMPT ? true : undefined), 15_000, 'the first prompt back on disk');
    const versions = await withRegistry(ctx.ws, (r) => r.versions());
    assert.deepEqual(versions.map((v) => v.kind), ['root', 'promotion', 'rollback']);
    assert.equal(versions[2]?.restores, versions[0]?.id);
    // The open review panel refreshes on the rollback; a refresh that lands
    // while the next quick pick is open takes the focus and closes it.
    const open = await findInWebview(ctx.page, '#versions article[data-version]', 20_000);
    await eventually(async () => ((await open.frame.locator('#versions article').count()) === 3 ? true : undefined), 15_000, 'the open panel shows the rollback');

    await runCommand(ctx.page, 'Candor: Roll Back Prompt');
    await quickPickSelect(ctx.page, 'Show prompt history…');
    const { frame } = await findInWebview(ctx.page, '#versions article[data-version]', 20_000);
    await eventually(async () => ((await frame.locator('#versions article').count()) === 3 ? true : undefined), 15_000, 'three versions in the history');
    assert.match(await frame.locator('#versions').innerText(), /v3 — rollback to v1 \(in force\)/);
  });

  it('closing the terminal cancels a run: nothing recorded, nothing written', async () => {
    await runCommand(ctx.page, 'Candor: Run Prompt Evolution');
    await eventually(async () => {
      const text = await terminalText(ctx.page);
      // The task's terminal is cleared for each run: no outcome yet means this run's A/B test is going.
      return /A\/B test: \d+\/48/.test(text) && !/Outcome:/.test(text) ? true : undefined;
    }, 30_000, 'the A/B test under way');
    await runCommand(ctx.page, 'Terminal: Kill the Active Terminal Instance');
    await eventually(() => (/cancelled during ab-test/.test(ctx.vs.candorLog()) ? true : undefined), 20_000, 'the log says the run was cancelled');
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    assert.equal(fs.readFileSync(path.join(ctx.ws.dir, '.candor', 'prompt.md'), 'utf8'), PROMPT);
    const versions = await withRegistry(ctx.ws, (r) => r.versions());
    assert.deepEqual(versions.map((v) => v.kind), ['root', 'promotion', 'rollback'], 'no new version');
  });
});

describe('prompt evolution: a near-miss waits in the review queue', function () {
  // Right on only four of 24 tasks: ahead, but 4 discordant pairs are under
  // the sample floor of 6, so the gate neither promotes nor forgets it.
  const ctx = useWorkbench({
    workspace: { files: { '.candor/prompt.md': PROMPT, '.candor/evals/tasks.jsonl': `${TASKS}\n` } },
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.request.maxRetries': 0,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            { match: { system: '^You improve the system prompt' }, respond: { text: JSON.stringify([{ prompt: WITH_PHRASE, rationale: 'answer with the input' }]) } },
            { match: { system: 'Echo the task input verbatim', user: '^answer-t0[1-4]$' }, respond: { text: '{{user}}' } },
            { respond: { text: 'I am not sure.' } },
          ],
        }),
      },
    }),
  });

  it('the run ends as a near-miss, the prompt is unchanged, and the panel shows the candidate with its numbers and Re-test', async () => {
    await runCommand(ctx.page, 'Candor: Run Prompt Evolution');
    await eventually(async () => (/Outcome: near-miss/.test(await terminalText(ctx.page)) ? true : undefined), 90_000, 'the terminal shows a near-miss');
    assert.equal(fs.readFileSync(path.join(ctx.ws.dir, '.candor', 'prompt.md'), 'utf8'), PROMPT, 'a near-miss changes nothing');
    const { frame } = await findInWebview(ctx.page, '#queue article.verdict-near-miss', 30_000);
    const item = frame.locator('#queue article.verdict-near-miss').first();
    const text = await item.innerText();
    assert.match(text, /sample_floor/);
    assert.match(text, new RegExp(PHRASE.replace(/\./g, '\\.')), 'the diff shows the added line');
    await item.getByRole('button', { name: /^Re-test / }).waitFor({ state: 'visible' });
    const queued = await withRegistry(ctx.ws, (r) => r.nearMisses());
    assert.equal(queued.length, 1, 'the registry keeps the near-miss for review');
    await screenshot(ctx.page, 'prompt-evolution-near-miss');
  });

  it('Promote Anyway, confirmed, writes the candidate and records a human override; the queue drains', async () => {
    const { frame } = await findInWebview(ctx.page, '#queue article.verdict-near-miss', 30_000);
    await frame.locator('#queue article.verdict-near-miss').first().getByRole('button', { name: /^Promote .* anyway$/ }).click();
    const dialog = ctx.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 10_000 });
    assert.match(await dialog.innerText(), /records it as your override/);
    await dialog.getByRole('button', { name: 'Promote Anyway' }).click();
    await waitForNotification(ctx.page, /promoted anyway \(a human override of sample_floor\)/);
    assert.equal(fs.readFileSync(path.join(ctx.ws.dir, '.candor', 'prompt.md'), 'utf8'), WITH_PHRASE);
    const current = await withRegistry(ctx.ws, (r) => r.current());
    assert.deepEqual([current?.kind, current?.lineage?.humanOverride], ['promotion', { failedCheck: 'sample_floor' }]);
    assert.deepEqual(await withRegistry(ctx.ws, (r) => r.nearMisses()), []);
    await eventually(async () => (/No near-misses waiting/.test(await frame.locator('#queue').innerText()) ? true : undefined), 15_000, 'the queue is empty');
    assert.match(await frame.locator('#versions').innerText(), /promoted anyway by you of v1[\s\S]*human override \(the gate stopped it at sample_floor\)/);
    await screenshot(ctx.page, 'prompt-evolution-promote-anyway');
  });
});
