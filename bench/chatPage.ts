// The chat webview alone in Chromium: the page VS Code shows (CHAT_BODY),
// the webview bundle built from webview/main.ts into a temp folder, and a
// stand-in for VS Code's `acquireVsCodeApi` that records what the view posts.
// Messages from the host are dispatched as VS Code delivers them, as
// `message` events.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { CHAT_BODY } from '../src/host/chat/chatPage';
import type { HostMessage, TranscriptEntry, WebviewMessage } from '../src/protocol/chat';

const root = path.resolve(__dirname, '..');

export interface ChatPage {
  readonly page: Page;
  /** Delivers a host message to the view. */
  post(message: HostMessage): Promise<void>;
  /** What the view posted so far. */
  posted(): Promise<WebviewMessage[]>;
  close(): Promise<void>;
}

let built: string | undefined;

/** Builds the webview bundle once per process, into a temp folder (dist/ is left alone). */
async function bundle(): Promise<string> {
  if (built) return built;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-chat-page-'));
  await esbuild.build({ entryPoints: [path.join(root, 'webview/main.ts')], bundle: true, platform: 'browser', target: 'chrome120', format: 'iife', outfile: path.join(dir, 'webview.js'), logLevel: 'warning' });
  fs.copyFileSync(path.join(root, 'webview/chat.css'), path.join(dir, 'webview.css'));
  fs.writeFileSync(path.join(dir, 'index.html'), `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8"><link rel="stylesheet" href="webview.css"><title>Candor</title></head><body>${CHAT_BODY}<script src="webview.js"></script></body></html>`);
  built = dir;
  return dir;
}

export async function openChatPage(browser: Browser, viewport = { width: 420, height: 800 }): Promise<ChatPage> {
  const dir = await bundle();
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  // A string, not a function: the script runs in the page as written (no helpers of this file's compiler).
  await page.addInitScript(`
    window.candorPosted = [];
    window.acquireVsCodeApi = () => ({
      postMessage: (m) => window.candorPosted.push(m),
      getState: () => undefined,
      setState: () => undefined,
    });
  `);
  await page.goto(`file://${path.join(dir, 'index.html')}`);
  await page.waitForFunction(() => (window as unknown as { candorPosted: Array<{ type: string }> }).candorPosted.some((m) => m.type === 'ready'));
  return {
    page,
    post: async (message) => {
      await page.evaluate((m) => void window.dispatchEvent(new MessageEvent('message', { data: m })), message);
    },
    posted: () => page.evaluate(() => (window as unknown as { candorPosted: WebviewMessage[] }).candorPosted.slice()),
    close: () => context.close(),
  };
}

/** An init message as the host posts it. */
export function initMessage(session: string, entries: readonly TranscriptEntry[], more: boolean): Extract<HostMessage, { type: 'init' }> {
  return {
    type: 'init',
    session,
    entries,
    more,
    busy: false,
    provider: { label: 'Offline demo — scripted replies, not a model', name: 'candor-offline', host: '', title: 'Offline demo — scripted replies, not a model: candor-offline', model: 'candor-offline', provider: 'offline', offline: true },
    trusted: true,
    welcome: false,
    sessionTitle: 'bench',
  };
}

/** `count` entries alternating between the user and short markdown replies. */
export function sampleEntries(count: number, from = 0): TranscriptEntry[] {
  return Array.from({ length: count }, (_, k) => {
    const i = from + k;
    return i % 2 === 0
      ? { id: `e${i}`, kind: 'user' as const, text: `Question ${i}: how does part ${i} of the system work?` }
      : { id: `e${i}`, kind: 'assistant' as const, text: `Reply ${i}: it **works** like this:\n\n- one step\n- another step with \`code\`\n\nThat is all for part ${i}.` };
  });
}
