// Candor-specific steps for e2e tests: what a person does in the chat view.
import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { eventually, openActivityView, statusBarItem, statusBarText, webviewByRole, webviewFrame } from './harness';

/** Opens the Candor view and returns the chat webview's frame. */
export async function openChat(page: Page): Promise<Frame> {
  await openActivityView(page, 'Candor');
  const input = await webviewByRole(page, 'textbox', 'Message Candor', 60_000);
  await input.waitFor({ state: 'visible', timeout: 30_000 });
  return webviewFrame(page, '#transcript');
}

/** Types a message into "Message Candor" and presses Enter, as a user does. */
export async function sendMessage(page: Page, text: string): Promise<void> {
  const input = await webviewByRole(page, 'textbox', 'Message Candor');
  await input.click();
  await input.fill(text);
  await input.press('Enter');
}

export async function transcriptText(frame: Frame): Promise<string> {
  return frame.locator('#transcript').innerText();
}

/** Waits until the transcript shows TEXT. */
export async function waitForTranscript(frame: Frame, text: string | RegExp, timeout = 30_000): Promise<string> {
  return eventually(async () => {
    const all = await transcriptText(frame);
    return (typeof text === 'string' ? all.includes(text) : text.test(all)) ? all : undefined;
  }, timeout, `transcript shows ${String(text)}`);
}

/** Waits until no reply is streaming (Send enabled again). */
export async function waitIdle(page: Page, timeout = 60_000): Promise<void> {
  const frame = await webviewFrame(page, '#transcript');
  await frame.waitForFunction(() => !document.body.classList.contains('busy'), undefined, { timeout });
}

export async function chatButton(page: Page, name: string | RegExp): Promise<Locator> {
  return webviewByRole(page, 'button', name);
}

export interface Gauge {
  text: string;
  ariaLabel: string;
  warning: boolean;
}

/** The candor.gauge status bar item as a person sees it. */
export async function readGauge(page: Page): Promise<Gauge> {
  const item = statusBarItem(page, 'candor.gauge');
  await item.waitFor({ state: 'visible', timeout: 30_000 });
  const { text, ariaLabel } = await statusBarText(item);
  const warning = await item.evaluate((el) => {
    // VS Code paints the warning background as an inline colour on the item.
    const bg = getComputedStyle(el).backgroundColor;
    return el.classList.contains('warning-kind') || (bg !== '' && bg !== 'rgba(0, 0, 0, 0)' && bg !== 'transparent');
  });
  return { text, ariaLabel, warning };
}

/** Opens a file with Quick Open, as a user does (Ctrl+P, its name or absolute path, Enter). */
export async function openFile(page: Page, name: string): Promise<void> {
  // Keys go to the focused frame: hand focus back to the workbench first.
  await page.evaluate(() => {
    const active = document.activeElement;
    if (active instanceof HTMLElement && active.tagName === 'IFRAME') active.blur();
  });
  await page.keyboard.press('Control+P');
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout: 10_000 });
  await input.fill(name);
  // Pick the row of exactly that file: right after typing, the list may still
  // show recently opened files, and Enter would open the wrong one.
  const base = path.basename(name);
  const row = page.locator('.quick-input-list .monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^${base.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }),
  });
  await row.first().waitFor({ state: 'visible', timeout: 10_000 });
  await row.first().click();
  await page.locator(`.tabs-container .tab[aria-label^="${base}"]`).first().waitFor({ state: 'visible', timeout: 10_000 });
}

/** The gauge's tooltip, as hovering it shows it. */
export async function gaugeTooltip(page: Page): Promise<string> {
  await page.mouse.move(10, 10);
  await page.locator('.statusbar-item[id="candor.candor.candor.gauge"]').hover();
  const hover = page.locator('.workbench-hover, .monaco-hover').filter({ hasText: 'Context:' }).first();
  await hover.waitFor({ state: 'visible', timeout: 10_000 });
  const text = await hover.innerText();
  await page.mouse.move(10, 10);
  return text;
}

/** Answers a modal dialog of the workbench (VS Code's own, not the chat's) with the button named `button`, after checking it says `says`. */
export async function answerDialog(page: Page, says: string | RegExp, button: string, timeout = 30_000): Promise<string> {
  const dialog = page.locator('.monaco-dialog-box');
  await dialog.waitFor({ state: 'visible', timeout });
  const text = await dialog.innerText();
  if (typeof says === 'string' ? !text.includes(says) : !says.test(text)) throw new Error(`the dialog says ${JSON.stringify(text)}, not ${String(says)}`);
  await dialog.locator('.monaco-button', { hasText: button }).first().click();
  await dialog.waitFor({ state: 'hidden', timeout: 10_000 });
  return text;
}
