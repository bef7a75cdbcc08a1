/**
 * Opening a long session, and streaming into one (docs/architecture.md,
 * "Sessions"):
 *
 *   npm run bench -- session
 *
 * 1. Host side: what the chat does before it posts `init` (read the newest
 *    entries backwards, the title from the head, redact and build the
 *    message), for sessions of 100, 1,000, 10,000 and 50,000 messages, side
 *    by side with the whole-file path it replaces (parse every line, map the
 *    whole transcript) and with the background load that follows (the
 *    history, the pages). Target: 10,000 within 2x of 100.
 * 2. Webview: main-thread time per streamed delta with 10,000 entries loaded
 *    against 10, in Chromium, measured by the browser's own task counters.
 *
 * The time from `ready` to the newest entry shown in code-server is
 * `npm run bench -- sessionReopen` (it starts VS Code).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { chromium } from 'playwright-core';
import { OpenedSession } from '../src/core/session/opened';
import { Session } from '../src/core/session/session';

import { ViewRedaction } from '../src/core/chat/viewRedaction';
import { SecretSet } from '../src/core/redact';
import type { HostMessage } from '../src/protocol/chat';
import { writeLongSession } from '../test/unit/core/session/longSession';
import { chromiumPath } from '../test/e2e/harness/browser';
import { initMessage, openChatPage, sampleEntries } from './chatPage';
import { transcriptOf } from '../test/helpers/core';

const SIZES = [100, 1_000, 10_000, 50_000];
const RUNS = 9;
const DELTAS = 300;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

function timed(fn: () => void): number {
  const started = performance.now();
  fn();
  return performance.now() - started;
}

async function hostSide(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-bench-session-'));
  const secrets = new SecretSet();
  secrets.add('bench-secret-value-0123456789');
  try {
    const rows: Array<{ size: number; bytes: number; open: number; whole: number; background: number }> = [];
    for (const size of SIZES) {
      const { file } = writeLongSession(dir, { messages: size, toolEvery: 5 });
      const opens: number[] = [];
      const wholes: number[] = [];
      const backgrounds: number[] = [];
      for (let run = 0; run < RUNS; run++) {
        let opened: OpenedSession | undefined;
        opens.push(timed(() => {
          // What ChatController.sendInit does before the post: the whole-file load is started, not awaited.
          opened = OpenedSession.open(file, { redactTitle: (t) => secrets.redact(t) });
          const page = opened.firstPage();
          new ViewRedaction(secrets).messages<HostMessage>({ ...initMessage(opened.id, page.entries, page.more), sessionTitle: page.title });
        }));
        const started = performance.now();
        await opened?.loaded;
        backgrounds.push(performance.now() - started);
        opened?.dispose();
        wholes.push(timed(() => {
          // The path before: every line parsed and the whole transcript mapped and posted.
          const session = Session.open(file);
          new ViewRedaction(secrets).messages<HostMessage>({ ...initMessage(session.id, transcriptOf(session), false), sessionTitle: session.title() });
        }));
      }
      rows.push({ size, bytes: fs.statSync(file).size, open: median(opens), whole: median(wholes), background: median(backgrounds) });
    }
    console.log(`host side, median of ${RUNS}:`);
    console.log('messages  file       open (init posted)  whole-file path  background load (after init)');
    for (const r of rows) {
      console.log(`${String(r.size).padStart(8)}  ${(r.bytes / 1024 / 1024).toFixed(2).padStart(6)} MB  ${r.open.toFixed(2).padStart(10)} ms  ${r.whole.toFixed(1).padStart(12)} ms  ${r.background.toFixed(1).padStart(14)} ms`);
    }
    const at = (size: number): number => rows.find((r) => r.size === size)?.open ?? NaN;
    console.log(`open: 10,000 / 100 = ${(at(10_000) / at(100)).toFixed(2)}x (target < 2x); 50,000 / 100 = ${(at(50_000) / at(100)).toFixed(2)}x`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

interface Metrics {
  readonly task: number;
  readonly layout: number;
  readonly style: number;
  readonly script: number;
}

async function webviewSide(): Promise<void> {
  const browser = await chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  try {
    const results: Array<{ loaded: number; perDelta: Metrics }> = [];
    for (const loaded of [10, 10_000, 10, 10_000]) results.push({ loaded, perDelta: await deltaCost(browser, loaded) });
    console.log(`\nwebview, main-thread time per streamed delta (${DELTAS} deltas, one per frame; two runs each, interleaved):`);
    for (const r of results) {
      const m = r.perDelta;
      console.log(`${String(r.loaded).padStart(6)} entries loaded: task ${m.task.toFixed(3)} ms (layout ${m.layout.toFixed(3)}, style ${m.style.toFixed(3)}, script ${m.script.toFixed(3)})`);
    }
    const mean = (loaded: number): number => results.filter((r) => r.loaded === loaded).reduce((sum, r) => sum + r.perDelta.task, 0) / 2;
    console.log(`per delta: 10,000 / 10 entries = ${(mean(10_000) / mean(10)).toFixed(2)}x`);
  } finally {
    await browser.close();
  }
}

/** Loads `loaded` entries (the newest 200 by `init`, the rest as found by find, as a jump back does), then streams a reply. */
async function deltaCost(browser: import('playwright-core').Browser, loaded: number): Promise<Metrics> {
  const chat = await openChatPage(browser);
  try {
    const newest = Math.min(loaded, 200);
    await chat.post(initMessage('bench', sampleEntries(newest, loaded - newest), loaded > newest));
    if (loaded > newest) {
      await chat.post({ type: 'found', session: 'bench', query: 'x', hit: null, ordinal: 0, total: 0, older: sampleEntries(loaded - newest, 0), more: false });
    }
    await chat.post({ type: 'entry', entry: { id: 'reply', kind: 'assistant', text: '', streaming: true } });
    await chat.page.waitForTimeout(500);
    const cdp = await chat.page.context().newCDPSession(chat.page);
    await cdp.send('Performance.enable');
    const read = async (): Promise<Metrics> => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      const get = (name: string): number => (metrics.find((m) => m.name === name)?.value ?? 0) * 1000;
      return { task: get('TaskDuration'), layout: get('LayoutDuration'), style: get('RecalcStyleDuration'), script: get('ScriptDuration') };
    };
    const before = await read();
    // One delta per frame, as a model streams: each is rendered at the next frame.
    await chat.page.evaluate(`new Promise((done) => {
      let k = 0;
      const next = () => {
        if (k === ${DELTAS}) return requestAnimationFrame(() => requestAnimationFrame(done));
        window.dispatchEvent(new MessageEvent('message', { data: { type: 'delta', id: 'reply', text: 'word ' + k + (k % 20 === 19 ? '\\n\\n' : ' ') } }));
        k++;
        requestAnimationFrame(next);
      };
      next();
    })`);
    const after = await read();
    const per = (key: keyof Metrics): number => (after[key] - before[key]) / DELTAS;
    return { task: per('task'), layout: per('layout'), style: per('style'), script: per('script') };
  } finally {
    await chat.close();
  }
}

export async function run(): Promise<void> {
  await hostSide();
  await webviewSide();
}

if (require.main === module) {
  run().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
