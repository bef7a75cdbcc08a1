// An untrusted window holding a hostile repository: its config names a clean
// filter that records the environment it runs in. Git runs that filter
// whenever a file's stat data disagree with the index (as for any repository
// unpacked from an archive). Candor must run no git at all before trust, so
// the filter never runs and the chat header says git is off.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { eventually, repoRoot, runCommand, useWorkbench, writeScenario } from './harness';
import { openChat, sendMessage, waitForTranscript, waitIdle } from './candor';

const MARKER_KEY = 'sk-e2e-marker-key-0123456789abcdef';

describe('an untrusted window with a hostile repository', function () {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-hostile-'));
  const spyLog = path.join(scratch, 'git-calls.log');
  const marker = path.join(scratch, 'filter-ran.txt');
  const ctx = useWorkbench({
    workspace: {
      name: 'hostile',
      files: { '.gitattributes': '* filter=evil\n' },
    },
    start: (ws) => {
      // The trap: a filter driver in the repository's own config, and files
      // whose stat data no longer match the index.
      ws.git('config', 'filter.evil.clean', `sh -c 'env >> ${marker}; cat'`);
      ws.git('config', 'filter.evil.smudge', 'cat');
      const later = new Date(Date.now() + 60_000);
      for (const file of fs.readdirSync(ws.dir)) if (file !== '.git') fs.utimesSync(path.join(ws.dir, file), later, later);
      fs.rmSync(marker, { force: true });
      return {
        trust: false,
        pathPrefix: [path.join(repoRoot, 'test/fixtures/git-spy')],
        env: { SPY_GIT_LOG: spyLog, SPY_REAL_GIT: '/usr/bin/git', OPENAI_API_KEY: MARKER_KEY },
        settings: {
          'candor.dataDir': ws.dataDir,
          // VS Code's own git would run the filter too; with it off, only Candor could.
          'git.enabled': false,
          'candor.offline.scenario': writeScenario(scratch, {
            rules: [
              { match: { lastRole: 'tool' }, respond: { text: 'Tool replied.' } },
              { match: { user: 'status please' }, respond: { toolCalls: [{ name: 'git_status', arguments: {} }] } },
              { respond: { text: 'Plain reply.' } },
            ],
          }),
        },
      };
    },
  });

  after(() => fs.rmSync(scratch, { recursive: true, force: true }));

  it('the header says git is off until the workspace is trusted', async () => {
    const frame = await openChat(ctx.page);
    const header = await eventually(async () => {
      const text = await frame.locator('#git').innerText();
      return /off until you trust/.test(text) ? text : undefined;
    }, 30_000, 'the header says git is off');
    assert.match(header, /Restricted Mode/);
  });

  it('chatting, asking for git status and running the git commands run no git at all', async () => {
    const frame = await openChat(ctx.page);
    await sendMessage(ctx.page, 'hello');
    await waitForTranscript(frame, 'Plain reply.');
    await sendMessage(ctx.page, 'status please');
    await waitForTranscript(frame, 'Tool replied.');
    await waitIdle(ctx.page);
    await runCommand(ctx.page, 'Candor: Take Evolution Branch');
    await eventually(async () => {
      const toast = ctx.page.locator('.notifications-toasts .notification-list-item-message', { hasText: 'off in an untrusted workspace' });
      return (await toast.count()) > 0 ? true : undefined;
    }, 20_000, 'Take Evolution Branch refuses');
    // Saving and touching files would trigger a re-read in a trusted window.
    fs.utimesSync(path.join(ctx.ws.dir, 'README.md'), new Date(), new Date());
    await new Promise((r) => setTimeout(r, 3000));
    const calls = fs.existsSync(spyLog) ? fs.readFileSync(spyLog, 'utf8').trim() : '';
    assert.equal(calls, '', 'no git process was started');
    assert.equal(fs.existsSync(marker), false, 'the filter never ran');
  });

  it('the trap is real: plain git status runs the filter, which sees the environment', () => {
    ctx.ws.git('status', '--porcelain');
    assert.equal(fs.existsSync(marker), true, 'plain git ran the clean filter');
  });
});
