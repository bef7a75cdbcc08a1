import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { gateKey, markGated, readRuns } from '../../../../src/core/evolution/record';
import { rantStatuses, readDecisions } from '../../../../src/core/evolution/triage';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { Printer, ScriptedModel, callsScenario, processesMatching, baseOptions, git, greetPatch, loopScenario, rant, removeTempDirs, snapshot, tempDir, triageAnswer, workspaceRepo, write, skipUnlessSandbox } from './helpers';
import { skipUnless } from '../../../helpers/preconditions';

describe('evolution run: faults', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let model: ScriptedModel;
  let ws: string;
  let dataDir: string;

  before(async () => {
    model = await ScriptedModel.start();
  });
  after(async () => model?.close());
  beforeEach(() => {
    ws = workspaceRepo();
    dataDir = tempDir('candor-data-');
  });
  afterEach(() => removeTempDirs());

  const scratchDir = (): string => repoPaths(dataDir, ws).scratch;
  const shipScenario = (id: string): unknown => loopScenario(triageAnswer([{ id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } });

  it('not a git repository: an error record with a clear reason', async () => {
    const plain = tempDir('candor-plain-');
    write(plain, 'a.txt', 'a');
    const record = await runEvolution(baseOptions(plain, dataDir), new Printer().io);
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /is not a git repository/);
    assert.equal(readRuns(dataDir).length, 1);
  });

  it('a repository without commits: an error record, the repository untouched', async () => {
    const empty = tempDir('candor-empty-');
    git(empty, 'init', '-q', '-b', 'main');
    const before = snapshot(empty);
    const record = await runEvolution(baseOptions(empty, dataDir), new Printer().io);
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /has no commits yet/);
    assert.deepEqual(snapshot(empty), before);
  });

  it('a data folder on another filesystem (/dev/shm, a tmpfs) works: the clone copies what it cannot hardlink', async function () {
    skipUnless(this, !fs.existsSync('/dev/shm') || fs.statSync('/dev/shm').dev === fs.statSync(os.tmpdir()).dev ? `no /dev/shm on a filesystem apart from ${os.tmpdir()}` : undefined);
    dataDir = tempDir('candor-shm-', '/dev/shm');
    const r = rant(dataDir, 'The greeting is too short, it is a bug', path.basename(ws));
    model.use(shipScenario(r.id));
    const before = snapshot(ws);
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.outcome, 'shipped', record.reason);
    assert.equal(fs.statSync(scratchDir()).dev, fs.statSync('/dev/shm').dev);
    assert.deepEqual(snapshot(ws), before);
  });

  it('a test command that does not exist fails the HEAD gate: error, with the shell saying so in the tail', async () => {
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(shipScenario(r.id));
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand: 'candor-no-such-command-xyz' }), new Printer().io);
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /^HEAD [0-9a-f]{12} fails the gate \(test failed \(exit 127\)\), and no earlier commit is known to pass .*; nothing reverted$/);
    assert.match(record.gate?.tail ?? '', /not found/);
  });

  it('a test command that hangs is killed at its timeout, with everything it started', async () => {
    // Found on the host by its command line: inside the sandbox `$!` is a PID of the sandbox's own namespace.
    // The sleep would run for ten minutes: a run that waited for it fails on the test's own time limit.
    const needle = `${600 + Math.random()}`.slice(0, 12);
    const testCommand = `sleep ${needle} & wait`;
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(shipScenario(r.id));
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand, timeoutMs: 1000 }), new Printer().io);
    assert.equal(record.outcome, 'error');
    assert.equal(record.sandbox, 'bubblewrap');
    assert.match(record.reason, /test timed out after 1 s/);
    await waitFor(() => processesMatching(`sleep ${needle}`).length === 0, 10_000);
    assert.deepEqual(processesMatching(`sleep ${needle}`), [], 'the background sleep was killed with the sandbox');
  });

  it('a test command that prints megabytes keeps a bounded tail and still passes', async () => {
    const testCommand = `node -e "process.stdout.write('x'.repeat(5000000)); process.stdout.write('\\nEND OF OUTPUT\\n')" && node test.js`;
    const printer = new Printer();
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(shipScenario(r.id));
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand }), printer.io);
    assert.equal(record.outcome, 'shipped', record.reason);
    assert.ok(Buffer.byteLength(record.gate?.tail ?? '') < 4300, `tail is ${Buffer.byteLength(record.gate?.tail ?? '')} bytes`);
    assert.match(record.gate?.tail ?? '', /END OF OUTPUT\ntests ok\n$/);
    assert.ok(printer.output.length >= 10_000_000, 'all output was streamed to the terminal');
    assert.ok(fs.statSync(path.join(dataDir, 'evolution.jsonl')).size < 20_000);
  });

  it('the model returns nothing: the rules cannot place the rant, it stays new, the run ends with nothing to evolve', async () => {
    const r = rant(dataDir, 'The save button is broken and crashes', path.basename(ws));
    model.use({ rules: [{ respond: { text: '' } }] });
    const before = snapshot(ws);
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.outcome, 'nothing-to-evolve');
    assert.deepEqual(readDecisions(dataDir), [], 'no route is written: the rant is asked about again next run');
    assert.equal(rantStatuses(dataDir).find((s) => s.rant.id === r.id)?.status, 'new');
    assert.deepEqual(snapshot(ws), before);
  });

  it('the model answers the change with garbage: bad tool calls come back as errors, nothing ships', async () => {
    const r = rant(dataDir, 'Could you please add a farewell function', path.basename(ws));
    model.use({
      rules: [
        { match: { system: '^You triage' }, respond: { text: triageAnswer([{ id: r.id, class: 'agent-code' }]) } },
        { match: { lastRole: 'user' }, respond: { toolCalls: [{ name: 'write_file', arguments: { path: '../outside.txt', content: 'x' } }, { name: 'rm_rf', arguments: {} }, { name: 'read_file', arguments: { path: '/etc/passwd' } }] } },
        { match: { lastRole: 'tool' }, respond: { text: '¯\\_(ツ)_/¯' } },
      ],
    });
    const before = snapshot(ws);
    const printer = new Printer();
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), printer.io);
    assert.equal(record.outcome, 'nothing-to-evolve', printer.text());
    assert.deepEqual(record.rants, [r.id]);
    assert.equal(readDecisions(dataDir)[0]?.source, 'model');
    assert.equal(readDecisions(dataDir)[0]?.class, 'agent-code');
    assert.match(printer.text(), /write_file\(.*\) → Error: \.\.\/outside\.txt climbs out/);
    assert.match(printer.text(), /rm_rf\(.*\) → Error: there is no tool "rm_rf"/);
    assert.match(printer.text(), /read_file\(.*\) → Error: \/etc\/passwd is absolute/);
    assert.equal(fs.existsSync(path.join(path.dirname(scratchDir()), 'outside.txt')), false);
    assert.deepEqual(snapshot(ws), before);
  });

  it('the model failing mid-change (HTTP 500) is an error; the clone is restored', async () => {
    const r = rant(dataDir, 'The greeting is broken', path.basename(ws));
    model.use({
      rules: [
        { match: { system: '^You triage' }, respond: { text: triageAnswer([{ id: r.id, class: 'agent-code' }]) } },
        { match: { lastRole: 'user' }, respond: { toolCalls: [{ name: 'write_file', arguments: { path: 'greet.js', content: 'broken' } }] } },
        { match: { lastRole: 'tool' }, respond: { error: { status: 500, message: 'scripted outage' } } },
      ],
    });
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /model request failed during change: http 500/);
    assert.equal(git(scratchDir(), 'status', '--porcelain').trim(), '');
  });

  it('a run killed mid-way (stale lock, dirty clone) is recovered by the next run', async () => {
    const first = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(shipScenario(first.id));
    assert.equal((await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io)).outcome, 'shipped');

    // What a run killed in its change phase leaves behind.
    const scratch = scratchDir();
    const deadPid = spawnSync(process.execPath, ['-e', '0']).pid;
    fs.writeFileSync(repoPaths(dataDir, ws).lock, JSON.stringify({ pid: deadPid, host: os.hostname(), started: '2020-01-01T00:00:00.000Z', token: 'killed' }));
    write(scratch, 'greet.js', 'half-written');
    write(scratch, 'stray/new.js', 'untracked');
    write(scratch, 'ignored.log', 'x');
    git(scratch, 'add', 'stray/new.js');
    fs.writeFileSync(path.join(scratch, '.git', 'index.lock'), '');

    const second = rant(dataDir, 'Errors are not shown when the greeting fails', path.basename(ws));
    model.use(shipScenario(second.id));
    const printer = new Printer();
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), printer.io);
    assert.equal(record.outcome, 'shipped', `${record.reason}\n${printer.text()}`);
    assert.match(printer.text(), new RegExp(`took over the lock left by an earlier run that did not end \\(pid ${deadPid}`));
    assert.equal(fs.existsSync(repoPaths(dataDir, ws).lock), false, 'the lock is released');
    assert.equal(git(scratch, 'show', `${record.commit}:greet.js`), "module.exports = () => 'hello world';\n");
    assert.equal(git(scratch, 'show', '--stat', '--format=', record.commit ?? '').includes('stray'), false);
    assert.equal(git(scratch, 'status', '--porcelain', '--ignored').trim(), '');
  });

  it('two runs started at once: one runs, the other refuses with a clear message', async () => {
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(shipScenario(r.id));
    const [a, b] = await Promise.all([
      runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io),
      runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io),
    ]);
    const outcomes = [a.outcome, b.outcome].sort();
    assert.deepEqual(outcomes, ['error', 'shipped']);
    const refused = a.outcome === 'error' ? a : b;
    assert.match(refused.reason, new RegExp(`another evolution run is in progress for this repository \\(pid ${process.pid}`));
  });

  it('a lock held by another live process refuses the run', async () => {
    const holder = spawn('sleep', ['30']);
    try {
      fs.mkdirSync(path.dirname(repoPaths(dataDir, ws).lock), { recursive: true });
      fs.writeFileSync(repoPaths(dataDir, ws).lock, JSON.stringify({ pid: holder.pid, host: os.hostname(), started: new Date().toISOString(), token: 'live' }));
      const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io);
      assert.equal(record.outcome, 'error');
      assert.match(record.reason, new RegExp(`another evolution run is in progress .*pid ${holder.pid}`));
      assert.ok(fs.existsSync(repoPaths(dataDir, ws).lock), "the live lock is left alone");
    } finally {
      holder.kill('SIGKILL');
    }
  });

  it('cancelling during the gate stops the command, discards, restores the clone and releases the lock', async () => {
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(shipScenario(r.id));
    const controller = new AbortController();
    const printer = new Printer();
    // Cancelled once the gate's command has shown its own output (the shell computes
    // the mark, so the echoed command line does not carry it); it would sleep ten minutes.
    const onOutput = (chunk: string): void => {
      printer.io.onOutput(chunk);
      if (printer.output.includes('tests ran 42')) controller.abort();
    };
    const io = { ...printer.io, onOutput };
    const testCommand = 'node test.js && echo "tests ran $((6 * 7))" && sleep 600';
    // HEAD passed before: mark it, so only the change gate runs (and is cancelled).
    markGated(repoPaths(dataDir, ws).gated, git(ws, 'rev-parse', 'HEAD').trim(), gateKey({ testCommand }));
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand, signal: controller.signal }), io);
    assert.equal(record.outcome, 'discarded');
    assert.match(record.reason, /cancelled by the user during gate/);
    assert.equal(git(scratchDir(), 'status', '--porcelain').trim(), '');
    assert.equal(fs.existsSync(repoPaths(dataDir, ws).lock), false);
  });

  it('a data folder inside the workspace is refused and nothing is written there', async () => {
    const inside = path.join(ws, 'candor-data');
    const before = snapshot(ws);
    const record = await runEvolution(baseOptions(ws, inside), new Printer().io);
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /inside the agent's repository/);
    assert.deepEqual(snapshot(ws), before);
  });
});

describe('evolution run: what a gate leaves behind, and where the agent repository keeps its git data', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let model: ScriptedModel;
  let ws: string;
  let dataDir: string;

  before(async () => {
    model = await ScriptedModel.start();
  });
  after(async () => model?.close());
  beforeEach(() => {
    ws = workspaceRepo();
    dataDir = tempDir('candor-data-');
  });
  afterEach(() => removeTempDirs());

  const scratchDir = (): string => repoPaths(dataDir, ws).scratch;
  const shipScenario = (id: string, to = 'hello world'): unknown => loopScenario(triageAnswer([{ id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch(to) } });
  /** HEAD passed before: only the change's gate runs. */
  const markHeadGated = (commands: { testCommand: string; setupCommand?: string }): void => markGated(repoPaths(dataDir, ws).gated, git(ws, 'rev-parse', 'HEAD').trim(), gateKey(commands));
  /** Every object id the repository holds, loose or packed. */
  const objectIds = (repo: string): string[] => git(repo, 'cat-file', '--batch-all-objects', '--batch-check=%(objectname)').trim().split('\n').sort();

  it('the agent repository is a linked worktree: the gate sees neither the main checkout nor its .git', async () => {
    // Outside /tmp, which the sandbox empties anyway: only hiding the main checkout keeps it out of view.
    const main = workspaceRepo();
    const outside = tempDir('candor-main-', '/var/tmp');
    fs.rmSync(outside, { recursive: true });
    fs.renameSync(main, outside);
    write(outside, 'untracked-secret.txt', 'the main checkout’s work in progress');
    const linked = path.join(tempDir('candor-linked-'), 'linked');
    git(outside, 'worktree', 'add', '-q', linked, '-b', 'side');
    ws = linked;
    const testCommand = `test ! -e '${outside}/untracked-secret.txt' && test ! -e '${outside}/.git/config' && node test.js`;
    // The trap: from the host, the worktree's .git file leads to both.
    assert.throws(() => execFileSync('/bin/sh', ['-c', testCommand], { cwd: linked, stdio: 'pipe' }), 'on the host the main checkout is there to read');

    const r = rant(dataDir, 'The greeting is too short, a bug', 'linked');
    model.use(shipScenario(r.id));
    const printer = new Printer();
    const record = await runEvolution(baseOptions(linked, dataDir, { model: model.model(), testCommand }), printer.io);
    assert.equal(record.outcome, 'shipped', `${record.reason}\n${record.gate?.tail ?? ''}`);
    assert.equal(record.sandbox, 'bubblewrap');
    assert.match(printer.text(), /HEAD [0-9a-f]{12} has not passed the gate yet/, 'the HEAD gate ran the check too');
  });

  for (const [what, plant, says] of [
    ['a FIFO', 'mkfifo package-lock.json', /package-lock\.json in the scratch clone is a FIFO/],
    ['a folder', 'mkdir -p package-lock.json/inside', /package-lock\.json in the scratch clone is a folder/],
  ] as const) {
    it(`${what} named package-lock.json left by the tests: the run ends in an error naming it, releases its lock, and the next run starts clean`, async () => {
      const testCommand = `node test.js && { [ -e package-lock.json ] || ${plant}; }`;
      // The trap: what the script leaves, read as the host used to read a lock file (existsSync, then readFileSync), hangs or throws.
      const plain = tempDir('candor-plain-');
      execFileSync('/bin/sh', ['-c', plant], { cwd: plain });
      const read = spawnSync(process.execPath, ['-e', `const f = 'package-lock.json'; if (require('fs').existsSync(f)) require('fs').readFileSync(f)`], { cwd: plain, timeout: 1500, encoding: 'utf8' });
      assert.ok(read.signal === 'SIGTERM' || /EISDIR/.test(read.stderr), `the plain read hung or failed: ${read.signal} ${read.stderr}`);

      const first = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
      // The model's run_tests leaves it during the change phase (what HEAD's gate leaves is reset away before the change).
      model.use(callsScenario(triageAnswer([{ id: first.id, class: 'agent-code' }]), [{ name: 'run_tests', arguments: {} }, { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }]));
      const failed = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand }), new Printer().io);
      assert.equal(failed.outcome, 'error', failed.reason);
      assert.match(failed.reason, says);
      assert.equal(fs.existsSync(repoPaths(dataDir, ws).lock), false, 'the lock is released');
      assert.equal(fs.existsSync(path.join(scratchDir(), 'package-lock.json')), false, 'the clone was restored');

      const second = rant(dataDir, 'Errors are not shown when the greeting fails', path.basename(ws));
      model.use(shipScenario(second.id));
      const next = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand: 'node test.js' }), new Printer().io);
      assert.equal(next.outcome, 'shipped', next.reason);
    });
  }

  it('a node_modules/.bin planted by the tests (no lock file, a setup command) does not reach the next run', async () => {
    const testCommand = "if [ -e node_modules/.bin/planted ]; then echo PLANTED-SURVIVED; exit 1; fi; node test.js && mkdir -p node_modules/.bin && echo 'echo evil' > node_modules/.bin/planted";
    // The trap: the reset's old rule keeps the dependency folder whenever the setup stamp matches, and with no lock file it always does.
    const plain = path.join(tempDir('candor-plain-'), 'clone');
    git(path.dirname(plain), 'clone', '-q', ws, plain);
    write(plain, 'node_modules/.bin/planted', 'echo evil');
    git(plain, 'clean', '-ffdxq', '-e', 'node_modules');
    assert.ok(fs.existsSync(path.join(plain, 'node_modules/.bin/planted')));

    markHeadGated({ testCommand, setupCommand: 'true' });
    const first = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(shipScenario(first.id));
    const options = baseOptions(ws, dataDir, { model: model.model(), testCommand, setupCommand: 'true' });
    const planted = await runEvolution(options, new Printer().io);
    assert.equal(planted.outcome, 'shipped', `${planted.reason}\n${planted.gate?.tail ?? ''}`);
    const second = rant(dataDir, 'Errors are not shown when the greeting fails', path.basename(ws));
    model.use(shipScenario(second.id, 'hello there'));
    const record = await runEvolution(options, new Printer().io);
    assert.equal(record.outcome, 'shipped', `${record.reason}\n${record.gate?.tail ?? ''}`);
    assert.doesNotMatch(record.gate?.tail ?? '', /PLANTED-SURVIVED/);
  });

  it('a change over candor.evolution.maxChangedBytes, and one that fails the gate, are discarded with no blob left in the clone', async () => {
    const testCommand = 'node test.js';
    const big = 'q'.repeat(700_000);
    const bigBlob = execFileSync('git', ['hash-object', '--stdin'], { input: big, encoding: 'utf8' }).trim();
    // The trap: a plain clone that stages a change before measuring it keeps the blob after the change is thrown away.
    const plain = path.join(tempDir('candor-plain-'), 'clone');
    git(path.dirname(plain), 'clone', '-q', '--no-hardlinks', ws, plain);
    write(plain, 'big-1.txt', big);
    git(plain, 'add', '--all');
    git(plain, 'reset', '-q', '--hard');
    assert.ok(objectIds(plain).includes(bigBlob));

    markHeadGated({ testCommand });
    const r = rant(dataDir, 'The greeting should come with a long story', path.basename(ws));
    model.use(callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'big-1.txt', content: big } },
      { name: 'write_file', arguments: { path: 'big-2.txt', content: `${big}2` } },
    ]));
    const oversize = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand, maxChangedBytes: 1024 * 1024 }), new Printer().io);
    assert.equal(oversize.outcome, 'discarded');
    assert.match(oversize.reason, /^the change is too big: 1400001 changed bytes \(limit 1048576\)$/);
    assert.deepEqual(objectIds(scratchDir()), objectIds(ws), 'the clone holds exactly the objects it was cloned with');

    const again = rant(dataDir, 'Say bye instead', path.basename(ws));
    model.use(callsScenario(triageAnswer([{ id: again.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'story.txt', content: `${big.slice(0, 100_000)}\n` } },
      { name: 'apply_patch', arguments: { patch: greetPatch('bye') } },
    ]));
    const failing = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand }), new Printer().io);
    assert.equal(failing.outcome, 'discarded');
    assert.match(failing.reason, /fails the gate/);
    assert.deepEqual(objectIds(scratchDir()), objectIds(ws), 'a change that failed its gate left nothing either');
  });
});

async function waitFor(condition: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!condition() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
}
