// MCP tools in VS Code: servers from the workspace's own .vscode/mcp.json and
// .vscode/settings.json start only after a confirmation, every call waits for
// Allow, Deny or Always Allow, the server's environment holds no key, and the
// gauge says what the tool definitions take. The user's own servers ask once
// each. An untrusted window starts none.
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Page } from 'playwright-core';
import { isAlive } from '../../src/core/process/lockFile';
import { eventually, quickInputPrompt, quickInputType, reloadWorkbench, repoRoot, runCommand, useWorkbench, waitForNotification, writeScenario } from './harness';
import { answerDialog, chatButton, gaugeTooltip, openChat, sendMessage, waitForTranscript, waitIdle } from './candor';

const EVERYTHING = path.join(repoRoot, 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');
const MARKED = path.join(repoRoot, 'test', 'fixtures', 'mcp', 'marked.mjs');
const KEY = 'sk-e2e-mcp-0123456789abcdefghij';

/** Extension hosts of this machine whose environment holds KEY. */
function processesWithKey(): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('extensionHost') && fs.readFileSync(`/proc/${pid}/environ`, 'utf8').includes(KEY)) found.push(pid);
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

function mcpJson(extraEnv: Record<string, string> = {}): string {
  return `${JSON.stringify({ servers: { everything: { type: 'stdio', command: process.execPath, args: [EVERYTHING, 'stdio'], env: { FOO: 'bar', ...extraEnv } } } }, null, 2)}\n`;
}

/** The pids the marked fixture wrote, one per start. */
function markerPids(marker: string): number[] {
  return fs.existsSync(marker) ? fs.readFileSync(marker, 'utf8').split('\n').filter(Boolean).map(Number) : [];
}

/** After a reload, the next message starts the server a second time, with no dialog: what was confirmed (and typed) was kept. */
async function startsAgainWithoutAsking(page: Page, marker: string): Promise<void> {
  await reloadWorkbench(page);
  const frame = await openChat(page);
  await sendMessage(page, 'hello');
  await waitForTranscript(frame, 'ok', 30_000);
  await eventually(() => (markerPids(marker).length === 2 ? true : undefined), 20_000, 'a second start');
  assert.equal(await page.locator('.monaco-dialog-box').count(), 0, 'nothing was asked');
}

const rules = [
  { match: { lastRole: 'tool' as const }, respond: { text: 'Tool step done.' } },
  { match: { user: '^echo' }, respond: { toolCalls: [{ name: 'mcp_everything_echo', arguments: { message: 'hello mcp' } }] } },
  { match: { user: '^sum' }, respond: { toolCalls: [{ name: 'mcp_everything_get-sum', arguments: { a: 2, b: 3 } }] } },
  { match: { user: '^env' }, respond: { toolCalls: [{ name: 'mcp_everything_get-env', arguments: {} }] } },
  { respond: { text: 'ok' } },
];

describe('MCP servers from the workspace\'s configuration', function () {
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-e2e-')), 'started');
  const ctx = useWorkbench({
    workspace: {
      files: {
        '.vscode/mcp.json': mcpJson(),
        // A workspace's own `mcp` setting is a workspace definition too: confirmed like mcp.json.
        '.vscode/settings.json': `${JSON.stringify({ mcp: { servers: { marked: { command: process.execPath, args: [MARKED], env: { MARKER_FILE: marker } } } } }, null, 2)}\n`,
      },
    },
    start: (ws) => ({
      env: { OPENAI_API_KEY: KEY },
      settings: { 'candor.dataDir': ws.dataDir, 'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), { rules }) },
    }),
  });

  it('asks to start each workspace server, naming it, before the first request lists tools', async () => {
    const frame = await openChat(ctx.page);
    await eventually(async () => ((await frame.locator('#tools-mcp').innerText()) === 'MCP: 2 servers defined, started with the first message' ? true : undefined), 20_000, 'the header counts the defined servers');
    assert.equal(fs.existsSync(marker), false, 'nothing started before the first message');
    await sendMessage(ctx.page, 'echo');
    const asked: string[] = [];
    for (let i = 0; i < 2; i++) asked.push(await answerDialog(ctx.page, /Start the MCP server "(everything|marked)"/, 'Start'));
    assert.ok(asked.some((t) => t.includes('"everything"') && t.includes('mcp.json')), asked.join('\n---\n'));
    assert.ok(asked.some((t) => t.includes('"marked"') && t.includes('settings.json')), 'the settings.json server asks too');
    assert.ok(asked.every((t) => /runs with your rights/.test(t)), 'the dialog says a server is not sandboxed');
    await eventually(() => (fs.existsSync(marker) ? true : undefined), 20_000, 'the settings.json server started once confirmed');
    await (await chatButton(ctx.page, 'Allow echo')).click();
    await waitForTranscript(frame, 'Tool step done.', 30_000);
    await waitIdle(ctx.page);
    assert.match((await frame.locator('.entry.tool-result pre').last().textContent()) ?? '', /Echo: hello mcp/);
    assert.match(await frame.locator('#tools-mcp').innerText(), /MCP: 2 servers, \d+ tools/);
  });

  it('Deny: the tool does not run; Always Allow: the next call runs without asking', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'sum');
    await (await chatButton(ctx.page, 'Deny get-sum')).click();
    await waitIdle(ctx.page);
    assert.match((await frame.locator('.entry.tool-result pre').last().textContent()) ?? '', /declined/);
    await sendMessage(ctx.page, 'sum');
    await (await chatButton(ctx.page, 'Always Allow get-sum')).click();
    await waitIdle(ctx.page);
    assert.match((await frame.locator('.entry.tool-result pre').last().textContent()) ?? '', /\b5\b/);
    const entries = await frame.locator('.entry.approval').count();
    await sendMessage(ctx.page, 'sum');
    await eventually(async () => ((await frame.locator('.entry.approval').count()) > entries ? true : undefined), 30_000, 'a new call entry');
    await waitIdle(ctx.page);
    const last = frame.locator('.entry.approval').last();
    assert.match(await last.innerText(), /Allowed by: Always Allow/);
    assert.equal(await last.getByRole('button', { name: /^Allow / }).count(), 0, 'it did not ask');
  });

  it('the server\'s environment holds no key and nothing its definition did not name', async () => {
    // The trap: the extension host that starts the server holds the key in its own environment.
    assert.ok(processesWithKey().length > 0, 'the extension host has OPENAI_API_KEY');
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'env');
    await (await chatButton(ctx.page, 'Allow get-env')).click();
    await waitIdle(ctx.page);
    const env = (await frame.locator('.entry.tool-result pre').last().textContent()) ?? '';
    assert.match(env, /"FOO": ?"bar"/);
    assert.doesNotMatch(env, /OPENAI_API_KEY|sk-e2e-mcp/);
    // The allow-list (src/core/mcp/serverEnv.ts and the core names) and the one variable the definition names.
    const names = [...env.matchAll(/"([A-Za-z_][A-Za-z0-9_]*)": ?"/g)].map((m) => m[1] ?? '');
    const unexpected = names.filter((name) => !/^(PATH|LANG|LANGUAGE|LC_\w+|TZ|TERM|COLORTERM|NO_COLOR|FORCE_COLOR|HOME|USER|LOGNAME|TMPDIR|TMP|TEMP|FOO)$/.test(name));
    assert.ok(names.includes('PATH'), env);
    assert.deepEqual(unexpected, [], 'nothing the definition did not name');
  });

  it('the gauge tooltip names the tokens the tool definitions take, and the server\'s share', async () => {
    const tip = await gaugeTooltip(ctx.page);
    assert.match(tip, /Tools: \d+, [\d.]+K? tokens; 'everything' [\d.]+K?/);
  });

  it('a changed definition asks again', async () => {
    fs.writeFileSync(path.join(ctx.ws.dir, '.vscode', 'mcp.json'), mcpJson({ EXTRA: 'changed' }));
    await new Promise((r) => setTimeout(r, 1500));
    await sendMessage(ctx.page, 'echo');
    const text = await answerDialog(ctx.page, 'Start the MCP server "everything"', 'Start');
    assert.match(text, /EXTRA=changed/);
    await (await chatButton(ctx.page, 'Allow echo')).click();
    await waitIdle(ctx.page);
  });

  it('turning candor.mcp.enabled off stops the running servers at once', async () => {
    const running = markerPids(marker).filter(isAlive);
    assert.ok(running.length > 0, 'the settings.json server runs');
    // The settings of a remote window's extension host live in the remote machine's settings file.
    fs.mkdirSync(path.join(ctx.vs.userDir, 'Machine'), { recursive: true });
    fs.writeFileSync(path.join(ctx.vs.userDir, 'Machine', 'settings.json'), `${JSON.stringify({ 'candor.mcp.enabled': false }, null, 2)}\n`);
    await eventually(() => (running.every((pid) => !isAlive(pid)) ? true : undefined), 20_000, 'the running server to stop, without a reload');
    const frame = await openChat(ctx.page);
    await eventually(async () => ((await frame.locator('#tools-mcp').count()) === 0 || (await frame.locator('#tools-mcp').innerText()) === '' ? true : undefined), 10_000, 'the header no longer names MCP');
  });
});

describe("a workspace server's ${input:} value", function () {
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-input-')), 'started');
  const definitions = {
    inputs: [{ type: 'promptString', id: 'token', description: 'Your GitHub token', password: true }],
    servers: { asker: { command: process.execPath, args: [MARKED], env: { MARKER_FILE: marker, TOKEN: '${input:token}' } } },
  };
  const ctx = useWorkbench({
    workspace: { files: { '.vscode/mcp.json': `${JSON.stringify(definitions, null, 2)}\n` } },
    start: (ws) => ({ settings: { 'candor.dataDir': ws.dataDir, 'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), { rules }) } }),
  });
  const typeToken = async (value: string): Promise<void> => {
    await eventually(async () => ((await quickInputPrompt(ctx.page)).title.includes('Your GitHub token') ? true : undefined), 30_000, 'the input box for the token');
    await quickInputType(ctx.page, value);
  };

  it('typed, then the server refused: nothing is kept, and the next start asks again', async () => {
    // What was tried: the workspace's server asks for a token before its start is confirmed; the user types it, then cancels the start.
    let frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'hello');
    await typeToken('ghp_e2e_refused_0123456789');
    await answerDialog(ctx.page, 'Start the MCP server "asker"', 'Cancel');
    await waitForTranscript(frame, 'ok', 30_000);
    await waitIdle(ctx.page);
    assert.equal(fs.existsSync(marker), false, 'the refused server never started');
    await reloadWorkbench(ctx.page);
    frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'hello');
    await typeToken('ghp_e2e_kept_0123456789');
    await answerDialog(ctx.page, 'Start the MCP server "asker"', 'Start');
    await waitForTranscript(frame, 'ok', 30_000);
    await eventually(() => (markerPids(marker).length === 1 ? true : undefined), 20_000, 'the confirmed server started');
    await waitIdle(ctx.page);
  });

  it('typed for a confirmed start: kept, so after a reload it starts without asking anything', async () => {
    await startsAgainWithoutAsking(ctx.page, marker);
    assert.equal(await ctx.page.locator('.quick-input-widget .quick-input-box input').isVisible(), false, 'no input box');
  });
});

describe("MCP servers of the user's own settings", function () {
  const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-user-')), 'started');
  const ctx = useWorkbench({
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), { rules }),
        mcp: { servers: { mine: { command: process.execPath, args: [MARKED], env: { MARKER_FILE: marker } } } },
      },
    }),
  });

  it('each asks once by name, in a dialog of its own, and starts when confirmed', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'hello');
    const text = await answerDialog(ctx.page, 'Start the MCP server "mine" of your user settings?', 'Start');
    assert.match(text, /marked\.mjs/, 'the dialog shows what it runs');
    await waitForTranscript(frame, 'ok', 30_000);
    await eventually(() => (fs.existsSync(marker) ? true : undefined), 20_000, "the user's server started once confirmed");
    await waitIdle(ctx.page);
  });

  it('after a reload it starts again without asking', async () => {
    await startsAgainWithoutAsking(ctx.page, marker);
  });
});

describe('MCP in an untrusted window', function () {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-mcp-untrusted-'));
  const byPath = path.join(dir, 'by-path');
  const byNpx = path.join(dir, 'by-npx');
  const byUser = path.join(dir, 'by-user');
  // `npx --no-install marked-server` in `dir` runs the project's own bin: the same fixture, started the way npx-launched servers are.
  const bin = path.join(dir, 'node_modules', '.bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'marked-server'), `#!/bin/sh\nexec "${process.execPath}" "${MARKED}"\n`, { mode: 0o755 });
  const definitions = { servers: { byPath: { command: process.execPath, args: [MARKED], env: { MARKER_FILE: byPath } }, byNpx: { command: 'npx', args: ['--no-install', 'marked-server'], cwd: dir, env: { MARKER_FILE: byNpx } } } };

  before(function () {
    this.timeout(60_000);
    // Armed: each definition, run by hand on this host, starts the fixture and writes its marker.
    for (const [marker, command, args] of [[byPath, process.execPath, [MARKED]], [byNpx, 'npx', ['--no-install', 'marked-server']]] as const) {
      try {
        execFileSync(command, [...args], { cwd: dir, env: { ...process.env, MARKER_FILE: marker }, input: '', timeout: 30_000, stdio: ['pipe', 'ignore', 'ignore'] });
      } catch {
        // It exits when its stdin closes, or is stopped by the timeout: what counts is the marker.
      }
      assert.ok(fs.existsSync(marker), `the trap is armed: ${command} ${args.join(' ')} starts the fixture`);
      fs.rmSync(marker);
    }
  });

  const ctx = useWorkbench({
    workspace: { files: { '.vscode/mcp.json': `${JSON.stringify(definitions, null, 2)}\n` } },
    start: (ws) => ({
      trust: false,
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), { rules }),
        // The user's own server too: no process starts in an untrusted window, whoever defined it.
        mcp: { servers: { byUser: { command: process.execPath, args: [MARKED], env: { MARKER_FILE: byUser } } } },
      },
    }),
  });

  it('Candor: MCP Servers says why nothing starts, and offers no Restart', async () => {
    await runCommand(ctx.page, 'Candor: MCP Servers');
    await waitForNotification(ctx.page, /do not start in an untrusted window/);
    assert.equal(await ctx.page.locator('.quick-input-widget .quick-input-list .monaco-list-row', { hasText: 'byUser' }).count(), 0, 'no list of servers to restart');
    assert.equal(fs.existsSync(byUser), false, "the user's server never started");
  });

  it('starts no process, by absolute path or through npx, and asks nothing', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'hello');
    await waitForTranscript(frame, 'ok', 30_000);
    await waitIdle(ctx.page);
    await new Promise((r) => setTimeout(r, 2000));
    assert.equal(await ctx.page.locator('.monaco-dialog-box').count(), 0, 'no confirmation was asked');
    assert.equal(fs.existsSync(byPath), false, 'the server named by path never started');
    assert.equal(fs.existsSync(byNpx), false, 'the server started through npx never started');
    assert.equal(fs.existsSync(byUser), false, "the user's own server never started");
  });
});
