// Mocha wiring for an e2e suite: one workspace, one code-server with the
// packaged VSIX, one browser per `describe`; on a failed test a screenshot
// and the logs (code-server, extension host, "Candor") go to test-artifacts/.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { chatInputFocused, openWorkbench, screenshot, statusBarItem, webviewByRole, type Workbench } from './browser';
import { repoRoot, startVsCode, type StartOptions, type VsCode } from './codeServer';
import { eventually, makeWorkspace, type TempWorkspace, type WorkspaceOptions } from './fixtures';

/** The VSIX `npm run package` builds: candor-<version>.vsix in the repository root. */
export function packagedVsix(): string {
  const { version } = JSON.parse(fs.readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  const file = path.join(repoRoot, `candor-${version}.vsix`);
  if (!fs.existsSync(file)) throw new Error(`${file} is missing: run \`npm run package\` (scripts/e2e.sh does)`);
  return file;
}

export interface SuiteOptions {
  /** How to make the temp workspace (default: a copy of demo/, committed). */
  workspace?: WorkspaceOptions;
  /**
   * code-server options, given the workspace (so settings can point into
   * ws.dataDir, say at a scenario file). The VSIX defaults to the packaged
   * one; return `vsix: ''` for a bare workbench.
   */
  start?: (ws: TempWorkspace) => Omit<StartOptions, 'workspace'>;
  /**
   * Candor shows its chat on the first activation after install; every suite
   * starts with a fresh profile, so the harness waits for it (default), and
   * a test's first step never races with it. false: do not wait.
   */
  chatAtStart?: boolean;
  /** Open the workspace through a symlink to it (as a folder under a linked home is opened), not by its real path. */
  openThroughLink?: boolean;
}

export interface SuiteContext {
  ws: TempWorkspace;
  vs: VsCode;
  wb: Workbench;
  /** The workbench page (wb.page). */
  page: Page;
}

/**
 * Call inside `describe`. Returns an object that `before` fills in: read its
 * fields inside hooks and tests, not at describe time.
 */
export function useWorkbench(options: SuiteOptions = {}): SuiteContext {
  const ctx = {} as SuiteContext;

  before(async function () {
    this.timeout(180_000);
    ctx.ws = makeWorkspace(options.workspace);
    const { vsix, ...start } = options.start?.(ctx.ws) ?? {};
    const opened = options.openThroughLink === true ? linkTo(ctx.ws.dir) : ctx.ws.dir;
    ctx.vs = await startVsCode({
      ...start,
      workspace: opened,
      vsix: vsix === undefined ? packagedVsix() : vsix || undefined,
    });
    try {
      ctx.wb = await openWorkbench(ctx.vs.url, opened);
      ctx.page = ctx.wb.page;
      // Candor activates on startup finished; its gauge appearing means its
      // commands are registered, so a test may open the palette at once.
      if (vsix !== '') await statusBarItem(ctx.page, 'candor.gauge').waitFor({ state: 'visible', timeout: 90_000 });
      if (vsix !== '' && options.chatAtStart !== false) await chatOpenedAtStart(ctx.page);
    } catch (err) {
      // afterEach does not run for a failed hook: keep the logs here.
      ctx.vs.saveDiagnostics(`FAILED ${this.test?.parent?.fullTitle() ?? 'suite'} before`);
      throw err;
    }
  });

  afterEach(async function () {
    const test = this.currentTest;
    if (test?.state !== 'failed' || !ctx.vs) return;
    const name = test.fullTitle();
    if (ctx.page) await screenshot(ctx.page, `FAILED ${name}`).catch(() => undefined);
    ctx.vs.saveDiagnostics(`FAILED ${name}`);
  });

  after(async function () {
    this.timeout(30_000);
    await ctx.wb?.close();
    await ctx.vs?.stop();
    ctx.ws?.remove();
  });

  return ctx;
}

/** A symlink to `dir` beside its temp folder, removed with it. */
function linkTo(dir: string): string {
  const link = path.join(path.dirname(dir), `${path.basename(dir)}-link`);
  fs.symlinkSync(dir, link);
  return link;
}

/**
 * The first run's chat: its message box shows, and takes the keyboard,
 * without anything being clicked. Waiting for the focus too means it has
 * landed before the test's first step: a palette opened earlier would close
 * when it does.
 */
async function chatOpenedAtStart(page: Page): Promise<void> {
  try {
    const input = await webviewByRole(page, 'textbox', 'Message Candor', 60_000);
    await input.waitFor({ state: 'visible', timeout: 30_000 });
    // VS Code focuses a view it opened once the webview has loaded, and Candor
    // puts the cursor in the message box once it says ready: in either order.
    // The focus counts when it stays for a second.
    await eventually(async () => {
      if (!(await chatInputFocused(page))) return undefined;
      await page.waitForTimeout(1_000);
      return (await chatInputFocused(page)) ? true : undefined;
    }, 30_000, 'the message box keeps the focus');
  } catch (err) {
    throw new Error(`the chat did not open by itself on the first activation, with the cursor in it: ${String(err)}`);
  }
}
