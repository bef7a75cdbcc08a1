// Reopening a session after a window reload, in code-server, for a session of
// 2 messages and one of 10,000 (docs/architecture.md, "Sessions"):
//   npm run bench -- sessionReopen [candor.vsix]
// The figure is the chat webview's own: from its `ready` message to the
// first frame painted after `init` (the user-timing marks `candor:ready` and
// `candor:init-shown`), the median of 5 reloads of each, interleaved
// (2, 10,000, 2, 10,000…) so that load on the machine falls on both alike.
// Target: the medians less than 500 ms apart.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { openActivityView, openWorkbench, quickPickSelect, reloadWorkbench, runCommand, statusBarItem, webviewFrame } from '../test/e2e/harness/browser';
import { startVsCode } from '../test/e2e/harness/codeServer';
import { packagedVsix } from '../test/e2e/harness/suite';
import { writeLongSession } from '../test/unit/core/session/longSession';

const RELOADS = 5;
const SIZES = [2, 10_000] as const;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

const titleOf = (size: number): string => `Bench session of ${size} messages`;

/** Reloads the window with the session of `size` messages current, and reads the chat's marks. */
async function reopen(page: Page, size: number): Promise<{ readyToShown: number; reloadToShown: number }> {
  await runCommand(page, 'Candor: Open Session…');
  await quickPickSelect(page, titleOf(size), 30_000);
  // The pick is shown (and remembered for the workspace) before the window reloads.
  const before = await webviewFrame(page, '#transcript', 90_000);
  await before.waitForFunction((title) => document.getElementById('session-title')?.textContent === title, titleOf(size), { timeout: 60_000 });
  await page.waitForTimeout(1000);
  const started = performance.now();
  await reloadWorkbench(page);
  await openActivityView(page, 'Candor', 60_000);
  const frame = await webviewFrame(page, '#transcript', 90_000);
  const marks = await frame.waitForFunction(() => {
    const ready = performance.getEntriesByName('candor:ready')[0];
    const shown = performance.getEntriesByName('candor:init-shown')[0];
    return ready && shown ? { ready: ready.startTime, shown: shown.startTime } : undefined;
  }, undefined, { timeout: 90_000, polling: 50 });
  const reloadToShown = performance.now() - started;
  const { ready, shown } = (await marks.jsonValue()) as { ready: number; shown: number };
  const title = await frame.locator('#session-title').innerText();
  if (title !== titleOf(size)) throw new Error(`the reopened session is "${title}", not the one of ${size} messages`);
  return { readyToShown: shown - ready, reloadToShown };
}

export async function run(args: readonly string[] = []): Promise<void> {
  const vsix = args[0] ?? packagedVsix();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-reopen-'));
  const workspace = path.join(root, 'ws');
  const dataDir = path.join(root, 'data');
  fs.mkdirSync(workspace, { recursive: true });
  fs.writeFileSync(path.join(workspace, 'README.md'), '# reopen\n');
  for (const size of SIZES) writeLongSession(path.join(dataDir, 'sessions'), { messages: size, id: `01jbench${String(size).padStart(18, '0')}`, first: titleOf(size), toolEvery: 25 });
  const vs = await startVsCode({ workspace, vsix, settings: { 'candor.dataDir': dataDir, 'candor.contextWindow': 4_000_000 } });
  try {
    const wb = await openWorkbench(vs.url, workspace);
    try {
      await statusBarItem(wb.page, 'candor.gauge').waitFor({ state: 'visible', timeout: 90_000 });
      await openActivityView(wb.page, 'Candor');
      const samples = new Map<number, Array<{ readyToShown: number; reloadToShown: number }>>(SIZES.map((s) => [s, []]));
      for (let i = 0; i < RELOADS; i++) {
        for (const size of SIZES) samples.get(size)?.push(await reopen(wb.page, size));
      }
      console.log(`reopening after a window reload, code-server, median of ${RELOADS} interleaved:`);
      for (const size of SIZES) {
        const list = samples.get(size) ?? [];
        console.log(`${String(size).padStart(6)} messages: ready → newest shown ${median(list.map((s) => s.readyToShown)).toFixed(0)} ms (runs: ${list.map((s) => s.readyToShown.toFixed(0)).join(', ')}); reload → shown ${median(list.map((s) => s.reloadToShown)).toFixed(0)} ms`);
      }
      const gap = median((samples.get(10_000) ?? []).map((s) => s.readyToShown)) - median((samples.get(2) ?? []).map((s) => s.readyToShown));
      console.log(`10,000 − 2 messages: ${gap.toFixed(0)} ms (target < 500 ms)`);
    } finally {
      await wb.close();
    }
  } finally {
    await vs.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }
}
