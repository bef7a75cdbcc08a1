// Drives the workbench served by code-server in Debian's Chromium through
// playwright-core (never `playwright install`: it downloads a browser).
//
// DOM facts relied on here (VS Code 1.100.3 in code-server, checked by hand):
// - the workbench is ready when `.statusbar` is visible (the extension host
//   comes up a few seconds later: wait for an extension's own elements);
// - a status bar entry is a `.statusbar-item` whose `id` is
//   `<publisher>.<name>.<item id>`: Candor's `candor.gauge` is
//   `candor.candor.candor.gauge`. Its text is in `a.statusbar-item-label`, whose
//   aria-label is the item's accessibility label; `$(pulse)` renders as
//   `span.codicon.codicon-pulse` with no text, so innerText is "37% 47.2K/128K";
// - an activity bar entry is `li.action-item` (role tab) holding
//   `a.action-label[aria-label="Candor"]` ("Explorer (Ctrl+Shift+E)" for built-ins);
//   the selected one has class `checked` and `aria-selected="true"`; the side
//   bar title is then `.part.sidebar .composite.title h2` "Candor: Chat";
// - palette rows are `.quick-input-list .monaco-list-row` (role option) with the
//   label in `.label-name` (and usually in the row's aria-label); the first row
//   is focused, and "Candor: Dismiss Rant" sorts before "Candor: Rant";
// - an input box's prompt is in `.quick-input-message` ("What went wrong?
//   (Press 'Enter' to confirm or 'Escape' to cancel)");
// - toasts are `.notifications-toasts .notification-list-item-message`;
// - a webview view is `iframe.webview.ready` (.../webview/browser/pre/index.html,
//   same origin as code-server) holding `iframe#active-frame` with the
//   extension's HTML: walk page.frames(), query each.
import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  chromium, type Browser, type BrowserContext, type Frame, type Locator, type Page,
} from 'playwright-core';
import { artifactsDir, candorExtensionId, folderUrl, safeName } from './codeServer';

export const chromiumPath = process.env.CANDOR_E2E_CHROMIUM ?? '/usr/bin/chromium';

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath,
    headless: process.env.CANDOR_E2E_HEADED ? false : true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export interface Workbench {
  browser: Browser;
  context: BrowserContext;
  page: Page;
  /** Closes the browser (SecretStorage lives in it: gone with it). */
  close(): Promise<void>;
}

/**
 * Opens `url/?folder=FOLDER` in a fresh browser and waits for the status bar.
 * Pass `browser` to open a new context in one you already have.
 */
export async function openWorkbench(url: string, folder: string, browser?: Browser): Promise<Workbench> {
  const ownBrowser = browser === undefined;
  const b = browser ?? await launchBrowser();
  const context = await b.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  await page.goto(folderUrl(url, folder));
  await waitForWorkbench(page);
  return {
    browser: b,
    context,
    page,
    async close() {
      await context.close().catch(() => undefined);
      if (ownBrowser) await b.close().catch(() => undefined);
    },
  };
}

/** Waits for the workbench after a load or reload. */
export async function waitForWorkbench(page: Page, timeout = 60_000): Promise<void> {
  await page.locator('.monaco-workbench .statusbar').waitFor({ state: 'visible', timeout });
  await page.locator('.activitybar').waitFor({ state: 'visible', timeout });
}

/** Reloads the window the way `Developer: Reload Window` does, and waits for it. */
export async function reloadWorkbench(page: Page): Promise<void> {
  await page.reload();
  await waitForWorkbench(page);
}

/**
 * Runs a palette command by its exact title ("Candor: Rant"). The palette
 * matches words with gaps ("Candor: Rant" also lists "Candor: Dismiss Rant")
 * and Enter may pick the wrong row, so this clicks the row whose label is
 * exactly the title.
 */
export async function runCommand(page: Page, title: string, timeout = 15_000): Promise<void> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  const row = page.locator('.quick-input-list .monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(title)}$`) }),
    visible: true,
  });
  // A page that takes the focus just after it opened (a walkthrough does)
  // closes the palette under the test; then the palette is opened again.
  const attempts = 3;
  for (let attempt = 1; ; attempt++) {
    try {
      await openPalette(page);
      await input.fill(`>${title}`, { timeout: 5_000 });
      await row.first().waitFor({ state: 'visible', timeout: attempt === attempts ? timeout : 5_000 });
      break;
    } catch (error) {
      if (attempt < attempts) {
        await page.waitForTimeout(500);
        continue;
      }
      const seen = await page.locator('.quick-input-list .monaco-list-row .label-name').allInnerTexts();
      await page.keyboard.press('Escape');
      throw new Error(`no palette row labelled exactly "${title}"; rows: ${JSON.stringify(seen)} (${String(error)})`);
    }
  }
  await row.first().click();
}

async function openPalette(page: Page): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  if (await widget.isVisible()) await page.keyboard.press('Escape');
  // Keys go to the focused frame: while a webview has focus, F1 reaches the
  // webview, not the workbench. Blurring the focused iframe element hands
  // focus back to the main document without clicking anything.
  await page.evaluate(() => {
    const active = document.activeElement;
    if (active instanceof HTMLElement && active.tagName === 'IFRAME') active.blur();
  });
  await page.keyboard.press('F1');
  try {
    await widget.waitFor({ state: 'visible', timeout: 5_000 });
  } catch {
    await page.keyboard.press('Control+Shift+P');
    await widget.waitFor({ state: 'visible', timeout: 10_000 });
  }
}

/** Types into the open quick input (input box or quick pick) and presses Enter. */
export async function quickInputType(page: Page, text: string, timeout = 15_000): Promise<void> {
  const input = page.locator('.quick-input-widget .quick-input-box input');
  await input.waitFor({ state: 'visible', timeout });
  await input.fill(text);
  await input.press('Enter');
}

/** The quick input's prompt/message line (e.g. "What went wrong?" as placeholder or prompt). */
export async function quickInputPrompt(page: Page): Promise<{ placeholder: string; message: string; title: string }> {
  const widget = page.locator('.quick-input-widget');
  await widget.waitFor({ state: 'visible' });
  return {
    placeholder: (await widget.locator('.quick-input-box input').getAttribute('placeholder')) ?? '',
    message: (await widget.locator('.quick-input-message').innerText().catch(() => '')).trim(),
    title: (await widget.locator('.quick-input-title').innerText().catch(() => '')).trim(),
  };
}

/** Picks the quick pick row whose label is exactly LABEL. */
export async function quickPickSelect(page: Page, label: string, timeout = 15_000): Promise<void> {
  const row = page.locator('.quick-input-list .monaco-list-row').filter({
    has: page.locator('.label-name', { hasText: new RegExp(`^${escapeRegExp(label)}$`) }),
  });
  await row.first().waitFor({ state: 'visible', timeout });
  await row.first().click();
}

/**
 * A status bar item contributed by an extension, by the id it gave
 * `createStatusBarItem` ("candor.gauge"). VS Code prefixes it with the
 * extension id: the DOM id is "candor.candor.candor.gauge".
 */
export function statusBarItem(page: Page, id: string, extensionId = candorExtensionId): Locator {
  return page.locator(`.statusbar-item[id="${cssEscape(`${extensionId}.${id}`)}"]`);
}

/** Visible text and accessibility label of a status bar item. */
export async function statusBarText(item: Locator): Promise<{ text: string; ariaLabel: string }> {
  const label = item.locator('a.statusbar-item-label');
  return {
    text: (await label.innerText()).trim(),
    ariaLabel: (await label.getAttribute('aria-label')) ?? '',
  };
}

/**
 * Finds SELECTOR in any webview frame (webviews are nested iframes) and returns
 * it with its frame. Throws with the frames seen if it does not appear in time.
 */
export async function findInWebview(
  page: Page, selector: string, timeout = 20_000,
): Promise<{ frame: Frame; locator: Locator }> {
  const deadline = Date.now() + timeout;
  while (true) {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) continue;
      const locator = frame.locator(selector);
      try {
        if (await locator.count() > 0) return { frame, locator: locator.first() };
      } catch {
        // the frame navigated or detached while we looked
      }
    }
    if (Date.now() > deadline) {
      const urls = page.frames().map((f) => f.url().slice(0, 120));
      throw new Error(`"${selector}" not found in any webview frame within ${timeout} ms; frames: ${JSON.stringify(urls)}`);
    }
    await page.waitForTimeout(250);
  }
}

/**
 * The webview frame whose document contains SELECTOR, for role queries:
 * `(await webviewFrame(page, 'textarea')).getByRole('textbox', { name: 'Message Candor' })`.
 */
export async function webviewFrame(page: Page, selector: string, timeout = 20_000): Promise<Frame> {
  return (await findInWebview(page, selector, timeout)).frame;
}

/**
 * The element with ROLE and accessible NAME in any webview frame, e.g.
 * `webviewByRole(page, 'textbox', 'Message Candor')` or `(page, 'button', 'Send')`.
 * Role queries pierce the toolkit's shadow DOM.
 */
export async function webviewByRole(
  page: Page, role: Parameters<Frame['getByRole']>[0], name: string | RegExp, timeout = 20_000,
): Promise<Locator> {
  const deadline = Date.now() + timeout;
  while (true) {
    for (const frame of page.frames()) {
      if (frame === page.mainFrame()) continue;
      const locator = frame.getByRole(role, { name, exact: typeof name === 'string' });
      try {
        if (await locator.count() > 0) return locator.first();
      } catch {
        // the frame navigated or detached while we looked
      }
    }
    if (Date.now() > deadline) {
      throw new Error(`no ${role} named ${String(name)} in any webview frame within ${timeout} ms`);
    }
    await page.waitForTimeout(250);
  }
}

/** The activity bar entry whose aria-label is TITLE (or "TITLE (shortcut)"). */
export function activityBarItem(page: Page, title: string): Locator {
  return page.locator('.activitybar .action-item').filter({
    has: page.locator(`a.action-label[aria-label="${cssEscape(title)}"], a.action-label[aria-label^="${cssEscape(title)} ("]`),
  });
}

/**
 * Shows the view container TITLE in the side bar. Clicking an already
 * selected icon hides the side bar (iconClickBehavior "toggle"), and right
 * after a load or reload the workbench may still be restoring the side bar,
 * so: click only when TITLE is not showing, and check again until it shows
 * steadily.
 */
export async function openActivityView(page: Page, title: string, timeout = 30_000): Promise<void> {
  const item = activityBarItem(page, title).first();
  await item.waitFor({ state: 'visible', timeout });
  const showing = async (): Promise<boolean> => {
    if (!(await page.locator('.part.sidebar').isVisible())) return false;
    const heading = await page.locator('.part.sidebar .composite.title h2').first().innerText().catch(() => '');
    return heading.toUpperCase().startsWith(title.toUpperCase());
  };
  const deadline = Date.now() + timeout;
  while (true) {
    if (await showing()) {
      await page.waitForTimeout(500);
      if (await showing()) return;
    } else {
      await item.locator('a.action-label').click();
      await page.waitForTimeout(500);
    }
    if (Date.now() > deadline) throw new Error(`the side bar does not show "${title}" within ${timeout} ms`);
  }
}

/** Texts of the notification toasts now on screen. */
export async function notifications(page: Page): Promise<string[]> {
  const toasts = page.locator('.notifications-toasts .notification-toast .notification-list-item-message');
  return (await toasts.allInnerTexts()).map((t) => t.trim());
}

/** Waits for a toast whose text matches. */
export async function waitForNotification(page: Page, text: string | RegExp, timeout = 15_000): Promise<string> {
  const toast = page.locator('.notifications-toasts .notification-list-item-message', { hasText: text });
  await toast.first().waitFor({ state: 'visible', timeout });
  return (await toast.first().innerText()).trim();
}

/** Saves a PNG of the page to test-artifacts/NAME.png and returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  fs.mkdirSync(artifactsDir, { recursive: true });
  const file = path.join(artifactsDir, `${safeName(name)}.png`);
  await page.screenshot({ path: file });
  return file;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function cssEscape(s: string): string {
  return s.replace(/["\\]/g, '\\$&');
}

/**
 * Whether the keyboard is in the chat's message box: the webview frame that
 * holds it has the focus, and the box is its focused element.
 */
export async function chatInputFocused(page: Page): Promise<boolean> {
  for (const frame of page.frames()) {
    if (frame === page.mainFrame()) continue;
    try {
      const focused = await frame.evaluate(() => {
        const active = document.activeElement;
        return document.hasFocus() && active instanceof HTMLTextAreaElement && active.getAttribute('aria-label') === 'Message Candor';
      });
      if (focused) return true;
    } catch {
      // the frame navigated or detached while we looked
    }
  }
  return false;
}
