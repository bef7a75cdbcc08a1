// run_command in VS Code: the agent runs the user's tests against its own
// pending proposal, in a sandboxed view of the workspace, and no command can
// change a byte of the user's work. Each call waits in the chat for Run,
// Deny, Always Allow or Run in Terminal.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { eventually, screenshot, useWorkbench, writeScenario } from './harness';
import { chatButton, openChat, openFile, sendMessage, waitForTranscript, waitIdle } from './candor';
import { hashTree } from '../helpers/hashTree';

const BUGGY = 'export const add = (a, b) => a - b;\n';
const TEST = [
  "import assert from 'node:assert/strict';",
  "import { test } from 'node:test';",
  "import { add } from '../src/add.js';",
  "test('adds', () => assert.equal(add(2, 3), 5));",
  '',
].join('\n');

/** Processes of this machine whose command line holds `marker`. */
function processesWith(marker: string): string[] {
  const found: string[] = [];
  for (const pid of fs.readdirSync('/proc').filter((p) => /^\d+$/.test(p))) {
    try {
      const cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
      if (cmdline.includes(marker) && !cmdline.includes('mocha')) found.push(`${pid}: ${cmdline}`);
    } catch {
      // gone meanwhile
    }
  }
  return found;
}

describe('commands the agent runs, in a sandboxed view of the workspace', function () {
  let loopback: http.Server;
  let port = 0;
  before(async () => {
    loopback = http.createServer((_req, res) => res.end('loopback-answered'));
    await new Promise<void>((resolve) => loopback.listen(0, '127.0.0.1', resolve));
    port = (loopback.address() as AddressInfo).port;
  });
  after(() => loopback.close());

  const ctx = useWorkbench({
    workspace: {
      files: {
        'src/add.js': BUGGY,
        'test/add.test.js': TEST,
        // An ignored folder, shown to commands only once candor.commands.bindIgnored names it.
        '.gitignore': 'deps/\n',
        'deps/lib.txt': 'from-the-ignored-folder\n',
        // Tried: the repository approves commands for itself. A user-only setting: ignored.
        '.vscode/settings.json': `${JSON.stringify({ 'candor.commands.autoApprove': ['npm test', 'node', 'sleep', 'echo'] }, null, 2)}\n`,
      },
    },
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            { match: { lastRole: 'tool' }, respond: { text: 'Tool step done.' } },
            {
              match: { user: '^fix add' },
              respond: {
                toolCalls: [
                  { name: 'propose_edit', arguments: { path: 'src/add.js', old_text: 'a - b', new_text: 'a + b' } },
                  { name: 'run_command', arguments: { command: 'npm test' } },
                ],
              },
            },
            { match: { user: '^test again' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'npm test' } }] } },
            { match: { user: '^deny this' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'echo should-not-run' } }] } },
            { match: { user: '^always' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'node -e "console.log(6*7)"' } }] } },
            { match: { user: '^chained' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'node -e "console.log(1)"; echo x' } }] } },
            { match: { user: '^long' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 317' } }] } },
            { match: { user: '^slow' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'sleep 318', timeoutSeconds: 2 } }] } },
            { match: { user: '^hostile' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'echo pwned > src/add.js; rm -rf test .git; echo done' } }] } },
            { match: { user: '^ignored' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'cat deps/lib.txt 2>/dev/null || echo no-deps-folder; test -f test/add.test.js && echo tracked-file-there' } }] } },
            { match: { user: '^auto ok' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'echo auto-approved ok' } }] } },
            { match: { user: '^auto chained' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'echo auto-approved; echo x' } }] } },
            { match: { user: '^reach' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: `node -e "fetch('http://127.0.0.1:${port}/').then(r => r.text()).then(console.log, e => { console.log('unreachable', e.cause?.code ?? e.message); process.exit(3) })"` } }] } },
            { respond: { text: 'ok' } },
          ],
        }),
      },
    }),
  });

  const approval = (frame: Awaited<ReturnType<typeof openChat>>) => frame.locator('.entry.approval').last();

  it('runs the test against the pending proposal in the view, while the file on disk stays as it was', async () => {
    const file = path.join(ctx.ws.dir, 'src', 'add.js');
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'fix add');
    // The workspace's own autoApprove is ignored: the call waits for a click.
    const run = await chatButton(ctx.page, 'Run npm test');
    await run.waitFor({ state: 'visible', timeout: 30_000 });
    assert.match(await approval(frame).innerText(), /network: off/);
    await screenshot(ctx.page, 'commands-approval');
    await run.click();
    await waitForTranscript(frame, 'Tool step done.', 60_000);
    await waitIdle(ctx.page);
    const entry = await approval(frame).innerText();
    assert.match(entry, /# fail 0/, 'every test passes in the view: the proposal fixed add');
    assert.match(entry, /# pass 4/);
    assert.match(entry, /exit 0/);
    assert.equal(fs.readFileSync(file, 'utf8'), BUGGY, 'the file on disk is byte-identical');
    assert.ok(await (await chatButton(ctx.page, 'Accept src/add.js')).isVisible(), 'the proposal is still pending');
    await screenshot(ctx.page, 'commands-passed-in-view');
  });

  it('after Accept and a save, a second run passes against the saved file', async () => {
    const file = path.join(ctx.ws.dir, 'src', 'add.js');
    const frame = await openChat(ctx.page);
    const accept = await chatButton(ctx.page, 'Accept src/add.js');
    // The chat follows its newest entry until the user scrolls up: as a user does, with the wheel.
    await frame.locator('#transcript').hover();
    await eventually(async () => {
      await ctx.page.mouse.wheel(0, -400);
      return (await accept.isVisible()) && (await frame.locator('.entry.proposal').last().evaluate((el) => el.getBoundingClientRect().top >= 0)) ? true : undefined;
    }, 10_000, 'the proposal scrolled into view');
    await screenshot(ctx.page, 'commands-proposal-pending');
    await accept.click();
    await eventually(async () => ((await ctx.page.locator('.monaco-editor:visible .view-lines').first().innerText()).replace(/\u00a0/g, ' ').includes('a + b') ? true : undefined), 15_000, 'the buffer holds the fix');
    assert.equal(fs.readFileSync(file, 'utf8'), BUGGY, 'accepting does not save');
    await ctx.page.locator('.monaco-editor:visible .view-lines').first().click();
    await ctx.page.keyboard.press('Control+S');
    await eventually(() => (fs.readFileSync(file, 'utf8').includes('a + b') ? true : undefined), 10_000, 'saved');
    await sendMessage(ctx.page, 'test again');
    await (await chatButton(ctx.page, 'Run npm test')).click();
    await waitIdle(ctx.page);
    assert.match(await approval(frame).innerText(), /# fail 0/);
  });

  it('Deny: nothing runs, and the model is told the user declined', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'deny this');
    await (await chatButton(ctx.page, 'Deny echo should-not-run')).click();
    await waitIdle(ctx.page);
    assert.match((await frame.locator('.entry.tool-result pre').last().textContent()) ?? '', /declined/);
    const entry = await approval(frame).innerText();
    assert.match(entry, /Denied/);
    assert.doesNotMatch(entry, /exit \d/, 'no ending: it never ran');
  });

  it('Always Allow: the next identical command runs without asking; a chained one still asks', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'always');
    await (await chatButton(ctx.page, 'Always Allow node -e "console.log(6*7)"')).click();
    const confirm = frame.getByRole('button', { name: /^Always Allow node -e/ }).last();
    await confirm.click();
    await waitIdle(ctx.page);
    assert.match(await approval(frame).innerText(), /42/);
    const entries = await frame.locator('.entry.approval').count();
    await sendMessage(ctx.page, 'always');
    await eventually(async () => ((await frame.locator('.entry.approval').count()) > entries ? true : undefined), 30_000, 'a new command entry');
    await waitIdle(ctx.page);
    const second = approval(frame);
    assert.match(await second.innerText(), /42/);
    assert.match(await second.innerText(), /Allowed by: Always Allow/);
    assert.equal(await second.getByRole('button', { name: /^Run / }).count(), 0, 'it did not ask');
    await sendMessage(ctx.page, 'chained');
    const deny = await chatButton(ctx.page, 'Deny node -e "console.log(1)"; echo x');
    await deny.waitFor({ state: 'visible', timeout: 30_000 });
    await deny.click();
    await waitIdle(ctx.page);
  });

  it('Stop during a long command ends it and everything it started', async () => {
    await openChat(ctx.page);
    await sendMessage(ctx.page, 'long');
    await (await chatButton(ctx.page, 'Run sleep 317')).click();
    await eventually(() => (processesWith('sleep 317').length > 0 ? true : undefined), 20_000, 'the command runs');
    await (await chatButton(ctx.page, 'Stop')).click();
    await waitIdle(ctx.page);
    await eventually(() => (processesWith('sleep 317').length === 0 ? true : undefined), 10_000, 'no process of it is left');
  });

  it('a command past its timeout is stopped and the chat says so', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'slow');
    await (await chatButton(ctx.page, 'Run sleep 318')).click();
    await waitIdle(ctx.page, 60_000);
    assert.match(await approval(frame).innerText(), /timed out after 2 s/);
    assert.deepEqual(processesWith('sleep 318'), []);
  });

  it('a hostile command cannot change the workspace, .git included, and the model learns why', async () => {
    const before = hashTree(ctx.ws.dir, () => false, false);
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'hostile');
    await (await chatButton(ctx.page, /^Run echo pwned/)).click();
    await waitIdle(ctx.page);
    assert.deepEqual(hashTree(ctx.ws.dir, () => false, false), before, 'the workspace is byte-identical');
    assert.match(await approval(frame).innerText(), /done/, 'the command ran, in the view');
    assert.match((await frame.locator('.entry.tool-result pre').last().textContent()) ?? '', /\.git.*which commands may only read/, 'the model is told why .git could not be removed');
  });

  it('with the network off, a loopback server on this machine is unreachable, and the chat says why', async () => {
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), 'loopback-answered', 'the trap: the server answers on this machine');
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'reach');
    await (await chatButton(ctx.page, /^Run node -e "fetch/)).click();
    await waitIdle(ctx.page);
    const entry = await approval(frame).innerText();
    assert.match(entry, /unreachable/);
    assert.doesNotMatch(entry, /loopback-answered/);
    assert.match((await frame.locator('.entry.tool-result pre').last().textContent()) ?? '', /network/);
  });

  describe('with the user\'s own settings', () => {
    // User-only settings of a remote window live in the remote machine's settings file.
    before(async function () {
      this.timeout(60_000);
      fs.mkdirSync(path.join(ctx.vs.userDir, 'Machine'), { recursive: true });
      fs.writeFileSync(path.join(ctx.vs.userDir, 'Machine', 'settings.json'), `${JSON.stringify({ 'candor.commands.autoApprove': ['echo auto-approved'], 'candor.commands.network': 'on' }, null, 2)}\n`);
      await new Promise((r) => setTimeout(r, 3000));
    });

    it('candor.commands.autoApprove runs a covered line without asking, and still asks for a chained one', async () => {
      const frame = await openChat(ctx.page);
      const entries = await frame.locator('.entry.approval').count();
      await sendMessage(ctx.page, 'auto ok');
      await eventually(async () => ((await frame.locator('.entry.approval').count()) > entries ? true : undefined), 30_000, 'a new command entry');
      await waitIdle(ctx.page);
      assert.match(await approval(frame).innerText(), /Allowed by: candor\.commands\.autoApprove "echo auto-approved"/);
      await sendMessage(ctx.page, 'auto chained');
      const deny = await chatButton(ctx.page, 'Deny echo auto-approved; echo x');
      await deny.click();
      await waitIdle(ctx.page);
    });

    it('a folder added to candor.commands.bindIgnored shows in the next command, without a reload', async () => {
      const frame = await openChat(ctx.page);
      const ignored = async (): Promise<string> => {
        await sendMessage(ctx.page, 'ignored');
        await (await chatButton(ctx.page, /^Run cat deps\/lib\.txt/)).click();
        await waitIdle(ctx.page);
        return approval(frame).innerText();
      };
      // The view was built by the commands before, with no such name.
      // The command's own line names the word too: its output is the line that is only it.
      assert.match(await ignored(), /^no-deps-folder$/m);
      const settingsFile = path.join(ctx.vs.userDir, 'Machine', 'settings.json');
      const settings = JSON.parse(fs.readFileSync(settingsFile, 'utf8')) as Record<string, unknown>;
      fs.writeFileSync(settingsFile, `${JSON.stringify({ ...settings, 'candor.commands.bindIgnored': ['deps'] }, null, 2)}\n`);
      await new Promise((r) => setTimeout(r, 3000));
      const entry = await ignored();
      assert.match(entry, /from-the-ignored-folder/, 'the view made before the change still hid the folder');
      assert.doesNotMatch(entry, /^no-deps-folder$/m);
      assert.match(entry, /^tracked-file-there$/m, 'the view built anew holds the workspace files too');
    });

    it('with candor.commands.network "on", a loopback service on this machine answers', async () => {
      const frame = await openChat(ctx.page);
      await sendMessage(ctx.page, 'reach');
      const run = await chatButton(ctx.page, /^Run node -e "fetch/);
      assert.match(await approval(frame).innerText(), /network: on/);
      await run.click();
      await waitIdle(ctx.page);
      assert.match(await approval(frame).innerText(), /loopback-answered/);
    });
  });
});

describe('commands in a workspace opened through a symlinked path', function () {
  const ctx = useWorkbench({
    // Tried: the folder is opened by a link to it, so the editor names its buffers by the link's path, not the real one the view is kept for.
    openThroughLink: true,
    workspace: { files: { 'src/add.js': BUGGY } },
    start: (ws) => ({
      settings: {
        'candor.dataDir': ws.dataDir,
        'candor.offline.scenario': writeScenario(path.join(ws.dataDir, '..'), {
          rules: [
            { match: { lastRole: 'tool' }, respond: { text: 'Tool step done.' } },
            { match: { user: '^show add' }, respond: { toolCalls: [{ name: 'run_command', arguments: { command: 'cat src/add.js' } }] } },
            { match: { user: '^fix add' }, respond: { toolCalls: [{ name: 'propose_edit', arguments: { path: 'src/add.js', old_text: 'a - b', new_text: 'a + b' } }] } },
            { respond: { text: 'ok' } },
          ],
        }),
      },
    }),
  });

  it('an unsaved buffer is what the command sees, and the file on disk stays as it was', async () => {
    await openFile(ctx.page, 'add.js');
    const editor = ctx.page.locator('.monaco-editor:visible .view-lines').first();
    await editor.waitFor({ state: 'visible', timeout: 15_000 });
    await editor.click();
    await ctx.page.keyboard.press('Control+End');
    await ctx.page.keyboard.type('// unsaved through the link');
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'show add');
    await (await chatButton(ctx.page, 'Run cat src/add.js')).click();
    await waitForTranscript(frame, 'Tool step done.', 60_000);
    await waitIdle(ctx.page);
    const shown = await frame.locator('.entry.approval').last().innerText();
    assert.match(shown, /exit 0/, 'it ran in the view: the folder\'s repository was found by its real path');
    assert.match(shown, /\/\/ unsaved through the link/, 'the command read the buffer, not the disk');
    assert.equal(fs.readFileSync(path.join(ctx.ws.dir, 'src', 'add.js'), 'utf8'), BUGGY, 'nothing was saved');
  });

  it('a proposal is made against that buffer, and Accept changes it in its own tab, not in a second one for the real path', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'fix add');
    await waitForTranscript(frame, 'Tool step done.', 60_000);
    await waitIdle(ctx.page);
    await (await chatButton(ctx.page, 'Accept src/add.js')).click();
    const buffer = async (): Promise<string> => (await ctx.page.locator('.monaco-editor:visible .view-lines').first().innerText()).replace(/\u00a0/g, ' ');
    await eventually(async () => ((await buffer()).includes('a + b') ? true : undefined), 15_000, 'the buffer holds the fix');
    assert.match(await buffer(), /\/\/ unsaved through the link/, 'the unsaved line the proposal was made against is still there');
    assert.equal(await ctx.page.locator('.tabs-container .tab', { hasText: 'add.js' }).count(), 1, 'one tab for the file');
    assert.equal(fs.readFileSync(path.join(ctx.ws.dir, 'src', 'add.js'), 'utf8'), BUGGY, 'accepting does not save');
  });
});
