import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { CommandError, describeForModel, runInView } from '../../../../src/core/commands/sandboxedCommand';
import { OutputExplainer, lastLines, stripAnsi } from '../../../../src/core/commands/commandReport';
import { NO_SANDBOX, type Sandbox } from '../../../../src/core/sandbox/sandbox';
import { DEFAULT_GATE_LIMITS } from '../../../../src/core/sandbox/limits';
import { isKindError } from '../../../../src/core/kindError';
import { processesMatching } from '../evolution/helpers';
import { eventually } from '../sandbox/sandboxHelpers';
import { FAILING_GREET, hostShell, inView, makeView, makeWorkspace, treeHash, useView, type ViewFixture } from './viewFixture';

const NETWORK_OFF = 'it tried to reach the network, which is off for commands (candor.commands.network): no host, not even a service on this machine\'s loopback, answers inside the sandbox';

/**
 * A command of the agent in the real sandbox (bubblewrap here, as root: the
 * gate user), over a view of the workspace mounted at the workspace's path.
 */
describe('a command in the sandbox over a view of the workspace', function () {
  this.timeout(60_000);
  let sandbox: Sandbox;
  let f: ViewFixture;
  useView((s) => (sandbox = s), (v) => (f = v));

  it("runs at the workspace's own path and sees the view's content, not the workspace's", async () => {
    assert.equal((await hostShell('cat which.txt', f.workspace)).output, 'workspace\n', 'the file differs between the two');
    const result = await runInView(inView(sandbox, f, 'pwd; cat which.txt; ls -A'));
    assert.equal(result.exitCode, 0, result.tail);
    const [pwd, which, ...listing] = result.tail.split('\n');
    assert.equal(pwd, f.workspace);
    assert.equal(which, 'view');
    assert.ok(!listing.includes('.env'), `the ignored .env is not in the view: ${listing.join(' ')}`);
    assert.ok(listing.includes('.git') && listing.includes('node_modules'), listing.join(' '));
  });

  it('a workspace in the real home: the view is mounted there, the rest of the home stays hidden', async () => {
    const home = makeWorkspace(os.homedir());
    const inHome = await makeView(home, sandbox);
    const sibling = path.join(os.homedir(), `.candor-test-sibling-${process.pid}`);
    fs.writeFileSync(sibling, 'beside the workspace\n');
    try {
      const probe = `pwd; cat which.txt; node test.js; cat '${sibling}' 2>/dev/null || echo hidden`;
      assert.match((await hostShell(probe, home)).output, /beside the workspace/, 'the trap: the host shell reads the home');
      const result = await runInView(inView(sandbox, inHome, probe));
      assert.equal(result.tail, `${home}\nview\ntests ok\nhidden`);
    } finally {
      fs.rmSync(sibling, { force: true });
    }
  });

  it('starts in the folder asked for, inside the workspace', async () => {
    const result = await runInView(inView(sandbox, f, 'pwd; cat inner.txt', { cwd: path.join(f.workspace, 'sub') }));
    assert.equal(result.tail, `${path.join(f.workspace, 'sub')}\ninner`);
  });

  it('node test.js: a passing test exits 0 with its output; a failing one (changed in the view) exits 1 with the assertion in the tail', async () => {
    const passing = await runInView(inView(sandbox, f, 'node test.js'));
    assert.equal(passing.exitCode, 0, passing.tail);
    assert.match(passing.tail, /tests ok$/);
    fs.writeFileSync(path.join(f.view, 'greet.js'), FAILING_GREET);
    const failing = await runInView(inView(sandbox, f, 'node test.js'));
    assert.equal(failing.exitCode, 1);
    assert.match(failing.tail, /AssertionError.*greet\(\) says hello/);
    const told = describeForModel(failing, 'node test.js', 30_000);
    assert.match(told, /^\$ node test\.js\nIt exited with code 1 after \d+\.\d s\.\nIts last lines:\n/);
    assert.match(told, /greet\(\) says hello/);
    assert.equal(failing.explanation, undefined, 'a failing test is not the sandbox refusing something');
  });

  it("the workspace's dependency folder is readable at its place, read-only, and its cache a fresh writable tmpfs", async () => {
    const before = treeHash(path.join(f.workspace, 'node_modules'));
    const command = [
      'node -e "console.log(require(\'dep\'))"',
      'ls -A node_modules/.cache | wc -l',
      'echo cached > node_modules/.cache/new.txt && cat node_modules/.cache/new.txt',
      'echo changed > node_modules/dep/index.js',
    ].join('; ');
    const result = await runInView(inView(sandbox, f, command));
    assert.match(result.tail, /^42\n0\ncached\n.*node_modules\/dep\/index\.js: Read-only file system$/);
    assert.equal(treeHash(path.join(f.workspace, 'node_modules')), before, 'the dependency folder is as it was, its cache too');
    assert.match(result.explanation ?? '', /tried to write .*node_modules\/dep\/index\.js, which commands may only read/);
  });

  it('a tmpfs inside the read-only dependency folder where it has no such folder is left out, and the command still runs', async () => {
    const result = await runInView(inView(sandbox, f, 'echo ran; test -e node_modules/dep/.cache || echo absent', { tmpfs: [path.join(f.workspace, 'node_modules', 'dep', '.cache')] }));
    assert.equal(result.exitCode, 0, result.tail);
    assert.equal(result.tail, 'ran\nabsent');
    assert.ok(!fs.existsSync(path.join(f.workspace, 'node_modules', 'dep', '.cache')));
  });

  it('a dependency folder that is a link out of the workspace (into the data folder) is not bound: the command finds the empty mount point', async () => {
    const outside = path.join(f.data, 'elsewhere');
    fs.mkdirSync(outside);
    fs.writeFileSync(path.join(outside, 'stolen.txt'), 'data folder content\n');
    fs.symlinkSync(outside, path.join(f.workspace, 'linked_modules'));
    fs.mkdirSync(path.join(f.view, 'linked_modules'));
    const dest = path.join(f.workspace, 'linked_modules');
    const probe = 'ls -A linked_modules | wc -l; cat linked_modules/stolen.txt 2>/dev/null || echo unreadable';
    assert.equal((await hostShell(probe, f.workspace)).output, '1\ndata folder content\n', 'the trap: through the link, the data folder');
    const result = await runInView(inView(sandbox, f, probe, { readOnlyBinds: [{ source: dest, dest }] }));
    assert.equal(result.tail, '0\nunreadable');
  });

  it('the environment: an allow-list, a throwaway HOME, the gate user, CI=1; a listed name passes, a withheld value never does', async () => {
    const secret = `sk-withheld-${process.pid}-abcdefgh`;
    process.env.CANDOR_TEST_LISTED = 'listed-value';
    process.env.CANDOR_TEST_UNLISTED = 'unlisted-value';
    process.env.MY_LISTED_SETTING = 'my-value';
    process.env.MY_SETTING_WITH_SECRET = `prefix-${secret}`;
    try {
      // CANDOR_* is never passed, even when listed.
      const result = await runInView(inView(sandbox, f, 'env | sort', { environment: ['MY_LISTED_SETTING', 'MY_SETTING_WITH_SECRET', 'CANDOR_TEST_LISTED'], withhold: [secret] }));
      const env = new Map(result.tail.split('\n').map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
      assert.equal(env.get('MY_LISTED_SETTING'), 'my-value');
      assert.equal(env.get('MY_SETTING_WITH_SECRET'), undefined, 'a listed name whose value holds the withheld secret');
      assert.ok(!result.tail.includes('unlisted-value') && !result.tail.includes('listed-value') && !result.tail.includes(secret), result.tail);
      assert.equal(env.get('CI'), '1');
      assert.equal(env.get('CANDOR_EVOLUTION_GATE'), undefined, 'not the evolution gate');
      assert.match(env.get('HOME') ?? '', /candor-command-.*\/home$/);
      assert.match(env.get('TMPDIR') ?? '', /candor-command-.*\/tmp$/);
      if (sandbox.user !== undefined) assert.equal(env.get('USER'), 'candor-gate');
      assert.ok(!fs.existsSync(path.dirname(env.get('HOME') ?? '/nonexistent/x')), 'the throwaway home is gone after the result');
    } finally {
      for (const name of ['CANDOR_TEST_LISTED', 'CANDOR_TEST_UNLISTED', 'MY_LISTED_SETTING', 'MY_SETTING_WITH_SECRET']) delete process.env[name];
    }
  });

  it('what a command leaves in its throwaway HOME and TMPDIR (a tree deeper than PATH_MAX, a folder of mode 000) is gone after the result', async () => {
    const deep = `d=$(printf 'd%.0s' $(seq 200)) && mkdir .t && for i in $(seq 25); do mkdir .w && mv .t ".w/$d" && mv .w .t || exit 1; done && mv .t deep`;
    const leave = `for at in "$HOME" "$TMPDIR"; do (cd "$at" && ${deep} && mkdir -p locked/inner && echo x > locked/inner/f && chmod 000 locked/inner locked) || exit 1; done; echo "$HOME"`;
    // No disk budget: the throwaway pair is on disk, not in the sandbox's memory.
    const result = await runInView(inView(sandbox, f, leave, { limits: { ...DEFAULT_GATE_LIMITS, diskMiB: 0 } }));
    assert.equal(result.exitCode, 0, result.tail);
    const home = result.tail.trim();
    assert.match(home, /candor-command-.*\/home$/);
    assert.equal(fs.existsSync(path.dirname(home)), false, 'the throwaway folder is gone');
  });

  it('refuses to run with the sandbox off, and a folder outside the workspace, before running anything', async () => {
    const marker = path.join(f.view, 'ran-unsandboxed');
    await assert.rejects(runInView(inView(NO_SANDBOX, f, `touch ${marker}`)), (error) => isKindError(error, CommandError, 'unsandboxed') && /never run without an OS sandbox/.test(error.message));
    await assert.rejects(runInView(inView(sandbox, f, `touch ${marker}`, { cwd: path.dirname(f.workspace) })), (error) => isKindError(error, CommandError, 'outside-view'));
    await assert.rejects(runInView(inView(sandbox, f, `touch ${marker}`, { cwd: path.join(f.workspace, '..', 'elsewhere') })), (error) => isKindError(error, CommandError, 'outside-view'));
    assert.ok(!fs.existsSync(marker));
  });

  it('times out: `sleep 100` with a 1 s limit ends promptly as timedOut, and the model is told so', async () => {
    const marker = `candor-timeout-marker-${process.pid}`;
    const started = Date.now();
    const result = await runInView(inView(sandbox, f, `sh -c 'sleep 100; :' ${marker}`, { timeoutMs: 1000 }));
    // The timeout is the behaviour: a real-clock bound, ten times what is asked.
    assert.ok(Date.now() - started < 10_000, `took ${Date.now() - started} ms`);
    assert.equal(result.timedOut, true);
    assert.equal(result.cancelled, false);
    assert.deepEqual(processesMatching(marker), [], 'nothing of it runs on');
    assert.match(describeForModel(result, 'sleep 100', 1000), /It timed out after 1\.0 s \(the time limit of a command\) and was ended\./);
  });

  it('Stop during `sleep 100`: resolves promptly as cancelled, with its process tree gone', async () => {
    const marker = `candor-stop-marker-${process.pid}`;
    const stop = new AbortController();
    let stoppedAt = 0;
    let before: number[] = [];
    // Stop once both sleeps run (each `sh -c` names the marker on its command line).
    const stopWhenRunning = async (): Promise<void> => {
      await eventually(() => processesMatching(`${marker}-child`).length > 0 && processesMatching(marker).length >= 2, 30_000);
      before = processesMatching(marker);
      stoppedAt = Date.now();
      stop.abort();
    };
    let asked = false;
    const result = await runInView(inView(sandbox, f, `echo started; sh -c 'sleep 100; :' ${marker}-child & sh -c 'sleep 100; :' ${marker}`, {
      signal: stop.signal,
      timeoutMs: 600_000,
      onOutput: (text) => {
        if (asked || !text.includes('started')) return;
        asked = true;
        void stopWhenRunning();
      },
    }));
    // Ending the run on Stop is the behaviour: a real-clock bound, ten times the half second it takes.
    assert.ok(stoppedAt > 0 && Date.now() - stoppedAt < 5000, `resolved ${Date.now() - stoppedAt} ms after the stop`);
    // bubblewrap, the shell, both `sh -c` and (their command lines naming the marker too) more.
    assert.ok(before.length >= 2, `it ran before the stop: ${before.length} processes`);
    assert.equal(result.cancelled, true);
    assert.equal(result.timedOut, false);
    assert.deepEqual(processesMatching(marker), [], 'neither sleep runs on');
    assert.match(describeForModel(result, 'sleep 100', 30_000), /It was stopped by the user after \d+\.\d s, before it finished\./);
  });
});

describe('what the model is told about a command', () => {
  it('stripAnsi: colours, cursor moves, titles and links go; the text stays', () => {
    const esc = String.fromCharCode(0x1b);
    const bel = String.fromCharCode(0x07);
    assert.equal(stripAnsi(`${esc}[31mred${esc}[0m ${esc}[1;32mbold green${esc}[m${esc}[2K${esc}[1G done`), 'red bold green done');
    assert.equal(stripAnsi(`${esc}]0;a title${bel}text ${esc}]8;;https://example.invalid${esc}\\link${esc}]8;;${esc}\\`), 'text link');
    assert.equal(stripAnsi(`${esc}(Bplain${esc}[`), 'plain');
  });

  it('the last lines: at most 4 KiB, whole lines, a progress bar as its last state, and a marker counting all the output', () => {
    const esc = String.fromCharCode(0x1b);
    const lines = Array.from({ length: 2000 }, (_, i) => `${esc}[32mline ${i}${esc}[0m`);
    const tail = lastLines(`${lines.join('\n')}\n`);
    assert.ok(Buffer.byteLength(tail) <= 4096, `${Buffer.byteLength(tail)} bytes`);
    assert.match(tail, /^\[… earlier output not kept: [\d,]+ bytes in all\]\nline \d+\n/);
    assert.match(tail, /\nline 1999$/);
    assert.ok(!tail.includes(esc));
    assert.equal(lastLines('downloading 10%\rdownloading 50%\rdownloading 100%\r\ndone\n'), 'downloading 100%\ndone');
    const flood = lastLines(`[… 499,990,000 earlier bytes not kept]\n${'x'.repeat(10_000)}`);
    assert.ok(Buffer.byteLength(flood) <= 4096);
    assert.match(flood, /^\[… earlier output not kept: 500,000,000 bytes in all\]\nx+$/);
  });

  it('explains a write outside the view, into its read-only parts, and a connection with the network off, in plain words; a read refused or a refusal inside the view is no such sign', () => {
    const explain = (output: string, network = false): string | undefined => {
      const explainer = new OutputExplainer({ workspace: '/work/ws', cwd: '/work/ws/sub', writable: ['/tmp'], readOnly: ['/work/ws/.git', '/work/ws/node_modules'], network });
      for (let i = 0; i < output.length; i += 7) explainer.push(output.slice(i, i + 7));
      return explainer.explanation();
    };
    assert.equal(explain("touch: cannot touch '/usr/lib/x': Read-only file system\n"), 'it tried to write outside its view of the workspace (/usr/lib/x): commands can write only in the view; the workspace itself is read-only to them');
    assert.match(explain("Error: EROFS: read-only file system, open '/work/ws/.git/config'") ?? '', /^it tried to write \/work\/ws\/\.git\/config, which commands may only read/);
    assert.match(explain('sh: 1: cannot create ../node_modules/x: Read-only file system') ?? '', /^it tried to write \/work\/ws\/node_modules\/x,/);
    assert.match(explain('sh: 1: cannot create /etc/hosts: Permission denied') ?? '', /outside its view of the workspace \(\/etc\/hosts\)/);
    assert.equal(explain('cat: /proc/1/environ: Permission denied'), undefined, 'a read');
    assert.equal(explain("touch: cannot touch '/work/ws/locked.txt': Permission denied"), undefined, 'a file of the view the command made unwritable');
    assert.match(explain('/bin/sh: 2: cannot create ../.git/config: Permission denied') ?? '', /^it tried to write \/work\/ws\/\.git\/config, which commands may only read/, "the view's .git is Candor's");
    assert.equal(explain('Error: connect ECONNREFUSED 127.0.0.1:8080'), NETWORK_OFF);
    assert.equal(explain('npm ERR! getaddrinfo EAI_AGAIN registry.npmjs.org'), NETWORK_OFF);
    assert.equal(explain('Error: connect ECONNREFUSED 127.0.0.1:8080', true), undefined, 'with the network on, a refused connection is the server');
    // With the network off, the sandbox's loopback is its only interface: a refused connection is one to it, however the tool names it.
    assert.match(explain('unreachable ECONNREFUSED') ?? '', /^it tried to reach the network/);
    assert.equal(
      explain("mkdir: cannot create directory '/opt/x': Read-only file system\ncurl: (6) Could not resolve host: example.invalid\n"),
      `it tried to write outside its view of the workspace (/opt/x): commands can write only in the view; the workspace itself is read-only to them; ${NETWORK_OFF}`,
    );
  });

  it('describes each ending: a timeout, a stop, a limit, a start that failed, and no output', () => {
    const base = { exitCode: null, timedOut: false, cancelled: false, crashed: false, ms: 61_000, tail: '' };
    assert.match(describeForModel({ ...base, timedOut: true }, 'npm test', 60_000), /It timed out after 60 s/);
    assert.match(describeForModel({ ...base, cancelled: true }, 'npm test', 60_000), /stopped by the user after 61\.0 s/);
    assert.match(describeForModel({ ...base, exitCode: 137, limitHit: 'hit the memory limit (4096 MiB)' }, 'npm test', 60_000), /It exited with code 137 after 61\.0 s; it hit the memory limit \(4096 MiB\)\.\nIt printed nothing\.$/);
    assert.match(describeForModel({ ...base, crashed: true }, 'npm test', 60_000), /It could not be started\./);
    assert.match(describeForModel({ ...base, explanation: NETWORK_OFF }, 'curl x', 60_000), /\nIt tried to reach the network, which is off for commands \(candor\.commands\.network\): [^\n]*\.\n/);
  });
});
