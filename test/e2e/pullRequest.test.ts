// Open Pull Request, as a user does it in code-server: a shipped evolution
// branch, the token stored with Set GitHub Token (code-server cannot sign in
// to GitHub offline), the preview, Push and Open. The remote is a real bare
// repository (origin's push URL); GitHub is a loopback fake whose every
// request and answer is checked against GitHub's OpenAPI description.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { eventually, quickInputType, runCommand, screenshot, useWorkbench, waitForNotification } from './harness';
import { openChat } from './candor';
import { GIT_SPY_DIR, callsIn, readSpyLog, writingCalls } from '../helpers/gitSpy';
import type { FakeGitHub } from '../helpers/fakeGitHub';
import { SECRET, SECRET_ENV, TOKEN, fakeWithAgent, filesHolding, refsOf, shippedRun, type Shipped } from '../unit/core/evolution/pullRequestHelpers';

describe('Open Pull Request: preview, push, pull request, and its CI in the rant list', function () {
  this.timeout(180_000);
  let shipped: Shipped;
  let fake: FakeGitHub;
  let spyLog: string;
  before(async () => {
    shipped = shippedRun();
    ({ fake } = await fakeWithAgent(shipped.bare));
    // The pushed commit's checks: queued at the first read, failed at the next.
    fake.setChecks(shipped.commit, [{ name: 'test (windows)', status: 'queued' }], [{ name: 'test (windows)', status: 'completed', conclusion: 'failure' }]);
    spyLog = path.join(shipped.dataDir, '..', `git-spy-${path.basename(shipped.dataDir)}.log`);
  });
  after(async () => {
    await fake.close();
  });

  const ctx = useWorkbench({
    start: () => ({
      pathPrefix: [GIT_SPY_DIR],
      // A credential of the user's environment, which the rant quotes: it must not go out.
      env: { SPY_GIT_LOG: spyLog, SPY_REAL_GIT: '/usr/bin/git', [SECRET_ENV]: SECRET },
      settings: { 'candor.dataDir': shipped.dataDir, 'git.enabled': false },
    }),
  });

  // Machine-scoped settings of a remote window live in the remote machine's settings file.
  before(async function () {
    this.timeout(60_000);
    fs.mkdirSync(path.join(ctx.vs.userDir, 'Machine'), { recursive: true });
    fs.writeFileSync(
      path.join(ctx.vs.userDir, 'Machine', 'settings.json'),
      `${JSON.stringify({ 'candor.evolution.repository': shipped.agent, 'candor.github.apiUrl': fake.apiUrl }, null, 2)}\n`,
    );
    await eventually(async () => {
      await runCommand(ctx.page, 'Notifications: Clear All Notifications');
      await runCommand(ctx.page, 'Candor: Set GitHub Token');
      const prompt = ctx.page.locator('.quick-input-widget');
      await prompt.waitFor({ state: 'visible', timeout: 5_000 });
      const text = await prompt.innerText();
      if (text.includes(fake.apiUrl)) return true;
      await ctx.page.keyboard.press('Escape');
      return undefined;
    }, 45_000, 'Set GitHub Token asks for the configured API URL');
  });

  it('Set GitHub Token keeps the token for the API URL of candor.github.apiUrl', async () => {
    await quickInputType(ctx.page, TOKEN);
    await waitForNotification(ctx.page, `GitHub token saved for ${fake.apiUrl}`);
  });

  it('Push and Open, after a preview of what goes out: only the branch is pushed, no hook runs, the pull request carries the trailer', async () => {
    const frame = await openChat(ctx.page);
    await frame.locator('#rants-summary').click();
    // The run's details fold open on its summary line, as a user opens them.
    await frame.locator('details.run summary', { hasText: shipped.branch }).click();
    const open = frame.getByRole('button', { name: `Open Pull Request for ${shipped.branch}` });
    await open.waitFor({ state: 'visible', timeout: 20_000 });
    await open.click();
    const dialog = ctx.page.locator('.monaco-dialog-box');
    await dialog.waitFor({ state: 'visible', timeout: 30_000 });
    const preview = await dialog.innerText();
    assert.match(preview, /Remote: https:\/\/github\.com\/alice\/agent\.git/);
    assert.match(preview, /public: anyone can read what is pushed/);
    assert.ok(preview.includes(`Branch: ${shipped.branch} → alice/agent:main`), preview);
    assert.match(preview, /remote\.origin\.pushurl sends it to another URL/, 'the test pushes to a local bare repository, and the preview says the push goes elsewhere');
    assert.match(preview, /Pull request: Make greet\(\) say hello world\./, 'the title is the change summary');
    assert.equal(preview.includes(SECRET), false, 'the password of the environment, quoted in the rant and the summary, is redacted in the preview');
    // The whole text (the commit message, the body with its trailer) is open beside the dialog, read-only.
    await ctx.page.locator('.tab', { hasText: `rant-${shipped.rantId}.md` }).waitFor({ state: 'visible', timeout: 10_000 });
    assert.equal(fake.state.pulls.length, 0, 'nothing is opened before the click');
    assert.deepEqual(refsOf(shipped.bare), [], 'nothing is pushed before the click');
    await screenshot(ctx.page, 'pull-request-preview');
    await dialog.getByRole('button', { name: 'Push and Open' }).click();
    await waitForNotification(ctx.page, /Pull request #\d+ is open/, 60_000);

    assert.deepEqual(refsOf(shipped.bare), [`refs/heads/${shipped.branch} ${shipped.commit}`], 'one branch, no tags');
    assert.equal(fs.existsSync(shipped.hookMarker), false, 'no pre-push hook ran');
    const pull = fake.state.pulls.at(-1);
    assert.equal(pull?.branch, shipped.branch);
    assert.equal(pull?.body.trimEnd().split('\n').at(-1), `Candor-Rant: ${shipped.rantId}`);
    assert.equal(pull?.body.includes(SECRET), false, 'nor in the pull request');
    assert.deepEqual(fake.violations, [], 'every request and answer fits GitHub\'s OpenAPI description');
    const calls = callsIn(readSpyLog(spyLog), shipped.agent);
    assert.ok(calls.some((call) => call.verb === 'push'), 'the push went through the spy');
    assert.deepEqual(writingCalls(calls), [], 'every write is the hand-off fetch or the push, each in its one shape');
  });

  it('the rant list follows the pull request\'s CI from running to failed, with links', async () => {
    const frame = await openChat(ctx.page);
    const panel = frame.locator('#rants-panel');
    // The run's summary line says it while folded: the list is redrawn when CI changes.
    await eventually(async () => ((await panel.innerText()).includes(`${shipped.branch} · #1 CI failed`) ? true : undefined), 120_000, 'the rant list shows CI failed').catch((err: unknown) => {
      console.log(ctx.vs.candorLog().split('\n').filter((l) => /CI|pull request/i.test(l)).join('\n'));
      throw err;
    });
    await frame.locator('details.run summary', { hasText: shipped.branch }).click();
    assert.match(await panel.innerText(), /Pull request #1 · CI failed/);
    const link = panel.getByRole('link', { name: 'Pull request #1' });
    const recorded = fs.readFileSync(path.join(shipped.dataDir, 'evolution.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { update?: string; pr?: { url: string } });
    assert.equal(await link.getAttribute('href'), recorded.find((r) => r.update === 'pr')?.pr?.url, 'the link is the one GitHub gave');
    assert.match(String(await panel.getByRole('link', { name: 'CI failed' }).getAttribute('href')), /\/runs\/\d+$/, 'CI links to the failing check');
    const runs = fs.readFileSync(path.join(shipped.dataDir, 'evolution.jsonl'), 'utf8').trim().split('\n').map((line) => JSON.parse(line) as { update?: string; ci?: { state: string } });
    assert.deepEqual(runs.filter((r) => r.update === 'ci').map((r) => r.ci?.state).at(-1), 'failed', 'the last ci update line says failed');
    await screenshot(ctx.page, 'pull-request-ci-failed');
  });

  it('the token is in no file of the data folder, not in the log, not in the chat view', async () => {
    assert.deepEqual(filesHolding(shipped.dataDir, TOKEN), []);
    assert.equal(ctx.vs.candorLog().includes(TOKEN), false);
    const frame = await openChat(ctx.page);
    assert.equal((await frame.locator('body').innerText()).includes(TOKEN), false);
    const authorized = fake.requests.filter((r) => r.authorization !== undefined);
    assert.ok(authorized.length > 0 && authorized.every((r) => r.authorization === `Bearer ${TOKEN}`), 'the token went to the fake API, as a bearer token');
  });
});
