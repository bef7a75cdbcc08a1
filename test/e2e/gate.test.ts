// The anchored compaction gate as a user meets it: the gauge, its warning
// state, drift.jsonl, a model switch, and an automatic compaction.
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import {
  eventually, quickInputType, quickPickSelect, readJsonl, runCommand, screenshot, statusBarItem,
  useWorkbench, webviewFrame, writeScenario,
} from './harness';
import { openChat, readGauge, sendMessage, waitForTranscript, waitIdle } from './candor';

type DriftLine = Record<string, unknown> & { event: string; reason?: string; model: string; provider: string };

const percent = (text: string): number => Number(/^(\d+)%/.exec(text)?.[1] ?? NaN);

describe('the context gate in VS Code', function () {
  const ctx = useWorkbench({
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.contextWindow': 8000,
        'candor.compaction.thresholdPercent': 60,
        'candor.compaction.keepTurns': 1,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            { match: { system: '^You compact' }, respond: { text: 'Summary: the user sent numbered messages.' } },
            { match: { user: 'quiet' }, usage: false, respond: { text: 'This reply has no usage numbers.' } },
            { respond: { text: `Reply. ${'lorem ipsum dolor sit amet '.repeat(45)}` }, chunkChars: 200, chunkDelayMs: 1 },
          ],
        }),
      },
    }),
  });
  const drift = (): DriftLine[] => readJsonl(path.join(ctx.ws.dataDir, 'drift.jsonl')) as DriftLine[];

  async function say(text: string): Promise<void> {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, text);
    await waitForTranscript(frame, text);
    await waitIdle(ctx.page);
  }

  it('the gauge moves as the chat grows', async () => {
    await say('message one');
    const first = await eventually(async () => {
      const g = await readGauge(ctx.page);
      return /anchored/.test(g.ariaLabel) ? g : undefined;
    });
    await say('message two');
    const second = await eventually(async () => {
      const g = await readGauge(ctx.page);
      return percent(g.text) > percent(first.text) ? g : undefined;
    }, 15_000, 'the percentage grows');
    assert.match(second.ariaLabel, /anchored/);
    assert.equal(second.warning, false);
  });

  it('a reply without usage warns the moment it ends, once, and writes anchor_loss', async () => {
    await say('quiet one');
    // No next message: the loss is known when the stream ends, and the gauge says so at once.
    const warned = await eventually(async () => {
      const g = await readGauge(ctx.page);
      return g.warning ? g : undefined;
    }, 15_000, 'the gauge turns to its warning state right after the reply without usage');
    assert.match(warned.ariaLabel, /estimated/);
    const frame = await openChat(ctx.page);
    await waitForTranscript(frame, 'did not report usage');
    assert.equal(drift().filter((e) => e.event === 'anchor_loss').length, 1, 'anchor_loss is written with the warning, not one request later');
    await say('quiet two');
    assert.equal((await readGauge(ctx.page)).warning, true, 'still warning while the provider stays silent');
    const losses = drift().filter((e) => e.event === 'anchor_loss');
    assert.equal(losses.length, 1, 'one loss per window');
    assert.equal(losses[0]?.reason, 'no-usage');
    assert.equal(losses[0]?.provider, 'offline');
    await screenshot(ctx.page, 'gate-warning');
  });

  it('usage back writes anchor_drift with the window\'s evidence and ends the warning', async () => {
    await say('talk normally again');
    const line = await eventually(() => drift().find((e) => e.event === 'anchor_drift'), 15_000, 'an anchor_drift line');
    assert.equal(line.loss_model, 'candor-offline');
    assert.equal(line.model, 'candor-offline');
    assert.equal(typeof line.delta, 'number');
    const loss = drift().find((e) => e.event === 'anchor_loss');
    assert.equal(typeof line.window, 'string');
    assert.equal(line.window, loss?.window, 'the drift closes the window its loss opened');
    const ests = line.window_ests as number[];
    assert.equal(ests.length, line.window_requests, 'one estimate per request sent while the window was open');
    assert.equal(line.window_max_est, Math.max(...ests));
    assert.deepEqual(line.totals, { windows: 1, warned: 1, drifts: 1, abs_delta_sum: Math.abs(line.delta as number) });
    await eventually(async () => ((await readGauge(ctx.page)).warning ? undefined : true), 15_000, 'the warning ends');
  });

  it('a model switch writes a switch loss without a warning', async () => {
    await runCommand(ctx.page, 'Candor: Select Model');
    await quickPickSelect(ctx.page, 'Enter a model id…');
    await quickInputType(ctx.page, 'other-model');
    await eventually(async () => {
      const frame = await openChat(ctx.page);
      return (await frame.locator('#provider').innerText()).includes('other-model') ? true : undefined;
    }, 15_000, 'the chat header shows the new model');
    await say('after the switch');
    const switched = await eventually(() => drift().find((e) => e.event === 'anchor_loss' && e.reason === 'switch'), 15_000, 'a switch loss');
    assert.equal(switched.model, 'candor-offline', 'the loss names the identity that was left');
    assert.equal((await readGauge(ctx.page)).warning, false, 'a switch does not warn');
    const closed = await eventually(() => drift().filter((e) => e.event === 'anchor_drift')[1], 15_000, 're-anchored under the new model');
    assert.equal(closed.loss_model, 'candor-offline');
    assert.equal(closed.model, 'other-model');
  });

  it('an automatic compaction fires at the threshold and the gauge drops', async () => {
    const frame = await openChat(ctx.page);
    let before = 0;
    for (let i = 0; i < 20; i++) {
      const g = await readGauge(ctx.page);
      before = percent(g.text);
      await say(`numbered message ${i}`);
      if ((await frame.locator('#transcript').innerText()).includes('Compacted')) break;
    }
    await waitForTranscript(frame, /Compacted \d+ earlier messages into a summary/);
    const after = await eventually(async () => {
      const g = await readGauge(ctx.page);
      return percent(g.text) < before ? g : undefined;
    }, 15_000, 'the gauge drops after compaction');
    assert.ok(before >= 50, `the gauge was near the threshold before (${before}%)`);
    assert.ok(percent(after.text) < 60);
    await screenshot(ctx.page, 'gate-compacted');
  });

  it('clicking the gauge opens the drift view with the totals', async () => {
    await statusBarItem(ctx.page, 'candor.gauge').click();
    const frame = await webviewFrame(ctx.page, '#drift-view');
    await frame.locator('#drift-view').waitFor({ state: 'visible', timeout: 15_000 });
    const text = await frame.locator('#drift-view').innerText();
    // One window lost the count (a reply without usage), the other was the switch: counted apart.
    assert.match(text, /Model switches\s*1/);
    assert.match(text, /Times the provider's count was missing or not trusted\s*1/);
    assert.match(text, /Times re-anchored\s*2/);
    // Every loss line belongs to one of the two windows the totals count.
    assert.equal(new Set(drift().filter((e) => e.event === 'anchor_loss').map((e) => e.window)).size, 2);
    await frame.locator('svg.drift-chart circle').first().waitFor({ state: 'attached' });
    assert.equal(await frame.locator('svg.drift-chart rect.window-max').count(), 2, 'each closed window\'s maximum beside its |delta|');
    assert.match(text, /Bars, right axis: the largest estimate sent while the provider was not counting/);
    assert.match(text, /time \(UTC\)/, 'the chart has a time axis');
    await screenshot(ctx.page, 'gate-drift-view');
  });
});
