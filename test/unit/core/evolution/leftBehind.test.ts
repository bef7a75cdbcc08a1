import * as assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { runGate } from '../../../../src/core/evolution/testGate';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { DEFAULT_GATE_LIMITS } from '../../../../src/core/sandbox/limits';
import { NO_SANDBOX } from '../../../../src/core/sandbox/sandbox';
import { Printer, baseOptions, callsScenario, git, greetPatch, rant, requiredSandbox, tempDir, triageAnswer, useSandboxedRuns, workspaceRepo } from './helpers';

/**
 * What a command of the model's leaves for the host's own code
 * (docs/architecture.md, "Evolution"): a tree deeper than PATH_MAX in the
 * clone and in the throwaway home, a FIFO where the model then writes, and
 * the limits its own run_tests must keep. Each trap is shown on the plain
 * host first.
 */

/**
 * Shell lines that make `<where>/deep/` hold 25 nested folders of 200
 * characters and a file at the bottom (a path over 5,000 bytes), built from
 * the bottom up by renames, so that no command names a long path.
 */
const deepTree = (where: string): string =>
  `( cd "${where}" && d=$(printf 'd%.0s' $(seq 200)) && mkdir .t && echo leaf > .t/leaf && for i in $(seq 25); do mkdir .w && mv .t ".w/$d" && mv .w .t || exit 1; done && mv .t deep && echo "DEEP ${where}" )`;

/** The gates' throwaway folders in the temp folder (a private one in the test that counts them: other processes' gates use the shared one). */
const throwaways = (): string[] => fs.readdirSync(os.tmpdir()).filter((name) => name.startsWith('candor-gate-'));

/** Runs `body` with a temp folder of its own (`TMPDIR`, which os.tmpdir() reads). */
async function withOwnTmp<T>(body: () => Promise<T>): Promise<T> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = tempDir('candor-own-tmp-');
  try {
    return await body();
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
}

/** A pid no process has now: a child that already exited. */
function deadPid(): number {
  const child = spawnSync('true');
  return child.pid ?? assert.fail('no pid');
}

describe('what a command leaves behind: trees of any depth, throwaway folders', function () {
  this.timeout(120_000);
  const model = useSandboxedRuns();

  it('the trap: 25 folders of 200 characters stop git clean and Node\'s fs.rm part-way', () => {
    const ws = workspaceRepo();
    execFileSync('sh', ['-c', deepTree('.')], { cwd: ws });
    assert.notEqual(spawnSync('git', ['clean', '-ffdxq'], { cwd: ws }).status, 0, 'git clean fails');
    assert.throws(() => fs.rmSync(path.join(ws, 'deep'), { recursive: true, force: true }), /ENAMETOOLONG/);
    assert.ok(fs.existsSync(path.join(ws, 'deep')), 'and leaves the tree');
    execFileSync('rm', ['-rf', path.join(ws, 'deep')]);
  });

  it('a gate that leaves such a tree in the clone and in its home: the run ships, no throwaway folder stays, and the next run resets the clone and works', async () => {
    const ws = workspaceRepo({ 'test.sh': 'node test.js\n' });
    const dataDir = tempDir('candor-data-');
    const first = rant(dataDir, 'The greeting is broken, a bug', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: first.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'test.sh', content: `${deepTree('.')}\n${deepTree('$HOME')}\nnode test.js\n` } },
      { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } },
    ]));
    const printer = new Printer();
    const { hostile, left } = await withOwnTmp(async () => ({ hostile: await runEvolution(baseOptions(ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), printer.io), left: throwaways() }));
    assert.equal(hostile.outcome, 'shipped', printer.text());
    assert.match(printer.output, /DEEP \.\nDEEP \//, `the gate made both trees\n${printer.output}`);
    assert.deepEqual(left, [], 'the gates\' throwaway homes went, deep tree and all');
    const clone = repoPaths(dataDir, ws).scratch;
    assert.equal(fs.existsSync(path.join(clone, 'deep')), false, 'the restore removed the tree from the clone');

    const second = rant(dataDir, 'The greeting is still wrong', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: second.id, class: 'agent-code' }]), [{ name: 'apply_patch', arguments: { patch: greetPatch('hello again') } }]));
    const next = new Printer();
    const after = await runEvolution(baseOptions(ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), next.io);
    assert.equal(after.outcome, 'shipped', next.text());
    assert.match(next.text(), /^reused /m, 'the clone itself was reset, not made afresh');
    assert.equal(git(clone, 'status', '--porcelain', '--ignored').trim(), '');
  });

  it('such a tree left while the model works (run_tests): whatever that run ends with, the next run resets the clone and works', async () => {
    const ws = workspaceRepo({ 'test.sh': 'node test.js\n' });
    const dataDir = tempDir('candor-data-');
    const first = rant(dataDir, 'The greeting is broken, a bug', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: first.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'test.sh', content: `${deepTree('.')}\nnode test.js\n` } },
      { name: 'run_tests', arguments: {} },
    ]));
    const printer = new Printer();
    const hostile = await runEvolution(baseOptions(ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), printer.io);
    assert.match(printer.output, /DEEP \./, printer.text());
    const clone = repoPaths(dataDir, ws).scratch;
    assert.equal(fs.existsSync(path.join(clone, 'deep')), false, `the restore removed the tree (that run: ${hostile.outcome}, ${hostile.reason})`);
    const second = rant(dataDir, 'The greeting is still wrong', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: second.id, class: 'agent-code' }]), [{ name: 'apply_patch', arguments: { patch: greetPatch('hello again') } }]));
    const next = new Printer();
    const after = await runEvolution(baseOptions(ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), next.io);
    assert.equal(after.outcome, 'shipped', next.text());
  });

  it('a clone that cannot be reset is set aside, removed in the background, and a fresh one made: the next run works', async () => {
    const ws = workspaceRepo({ 'test.sh': 'node test.js\n' });
    const dataDir = tempDir('candor-data-');
    const clone = repoPaths(dataDir, ws).scratch;
    const r = rant(dataDir, 'The greeting is broken, a bug', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), [{ name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }]));
    assert.equal((await runEvolution(baseOptions(ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), new Printer().io)).outcome, 'shipped');
    // A clone git cannot work in (its index made a folder) with a deep tree in it: the trap of removing it with Node is above.
    fs.rmSync(path.join(clone, '.git', 'index'));
    fs.mkdirSync(path.join(clone, '.git', 'index'));
    execFileSync('sh', ['-c', deepTree('.')], { cwd: clone });
    const again = rant(dataDir, 'Still broken', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: again.id, class: 'agent-code' }]), [{ name: 'apply_patch', arguments: { patch: greetPatch('hello again') } }]));
    const printer = new Printer();
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model().model(), testCommand: 'sh test.sh' }), printer.io);
    assert.equal(record.outcome, 'shipped', printer.text());
    assert.match(printer.text(), /^cloned /m);
    const asides = (): string[] => fs.readdirSync(path.dirname(clone)).filter((name) => name.startsWith(`${path.basename(clone)}.aside-`));
    assert.ok(await eventually(() => asides().length === 0), `the set-aside clone is removed: ${asides().join(', ')}`);
  });

  it('throwaway folders of earlier gates: one whose process is gone is removed at the next gate, deep tree and all; one of a live process stays', async () => {
    const dead = fs.mkdtempSync(path.join(os.tmpdir(), `candor-gate-${deadPid()}-`));
    fs.mkdirSync(path.join(dead, 'home'));
    execFileSync('sh', ['-c', deepTree('home')], { cwd: dead });
    const sleeper = spawn('sleep', ['60'], { stdio: 'ignore' });
    const live = fs.mkdtempSync(path.join(os.tmpdir(), `candor-gate-${sleeper.pid ?? 0}-`));
    try {
      // The trap: Node cannot remove the stale one.
      assert.throws(() => fs.rmSync(dead, { recursive: true, force: true }), /ENAMETOOLONG/);
      const dir = tempDir('candor-gate-cwd-');
      const result = await runGate([{ name: 'test', command: 'true' }], { cwd: dir, sandbox: NO_SANDBOX, timeoutMs: 10_000 });
      assert.equal(result.passed, true);
      assert.equal(fs.existsSync(dead), false, 'the dead process\'s folder is gone');
      assert.ok(fs.existsSync(live), 'the live process\'s folder stays');
    } finally {
      sleeper.kill('SIGKILL');
      execFileSync('rm', ['-rf', dead, live]);
    }
  });
});

describe('a FIFO where the model writes: the tools refuse it, and cancel ends the run', function () {
  this.timeout(120_000);
  const model = useSandboxedRuns();

  it('the trap: a plain write or read of a FIFO waits forever', () => {
    const fifo = path.join(tempDir('candor-fifo-'), 'notes.txt');
    execFileSync('mkfifo', [fifo]);
    for (const call of [`require('fs').writeFileSync(${JSON.stringify(fifo)}, 'x')`, `require('fs').readFileSync(${JSON.stringify(fifo)})`]) {
      assert.equal(spawnSync(process.execPath, ['-e', call], { timeout: 1500 }).signal, 'SIGTERM', call);
    }
  });

  it('run_tests plants it; write_file and apply_patch refuse it by name and type; a cancel then ends the run within seconds and releases the lock', async () => {
    const ws = workspaceRepo({ 'test.sh': 'node test.js\n' });
    const dataDir = tempDir('candor-data-');
    const r = rant(dataDir, 'The greeting is broken, a bug', path.basename(ws));
    const patch = '--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-a\n+b\n';
    const scenario = callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'test.sh', content: 'mkfifo notes.txt && echo FIFO made\nnode test.js\n' } },
      { name: 'run_tests', arguments: {} },
      { name: 'write_file', arguments: { path: 'notes.txt', content: 'notes\n' } },
      { name: 'apply_patch', arguments: { patch } },
    ]) as { rules: Array<Record<string, unknown>> };
    // The model's next answer takes two minutes: only a cancel ends the run sooner.
    scenario.rules.splice(2, 0, { match: { lastRole: 'tool' }, respond: { text: 'Done.' }, holdMs: 120_000 });
    model().use(scenario);
    const controller = new AbortController();
    const printer = new Printer();
    let cancelledAt = 0;
    const io = {
      ...printer.io,
      print: (line: string): void => {
        printer.io.print(line);
        if (line.includes('apply_patch(')) setImmediate(() => {
          cancelledAt = Date.now();
          controller.abort();
        });
      },
    };
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model().model(), testCommand: 'sh test.sh', signal: controller.signal }), io);
    assert.ok(cancelledAt > 0, printer.text());
    assert.ok(Date.now() - cancelledAt < 15_000, 'the run ended within seconds of the cancel');
    assert.match(printer.output, /FIFO made/);
    const tools = printer.lines.filter((line) => /^ {2}(write_file|apply_patch)\(/.test(line));
    assert.match(tools[1] ?? '', /write_file\(\{"path":"notes\.txt".*→ Error: notes\.txt is a FIFO \(named pipe\), not a regular file; the change tools read and write regular files only/);
    assert.match(tools[2] ?? '', /apply_patch\(.*→ Error: notes\.txt is a FIFO \(named pipe\), not a regular file; the change tools read and write regular files only/);
    assert.equal(record.outcome, 'discarded');
    assert.match(record.reason, /cancelled by the user during change/);
    assert.equal(fs.existsSync(repoPaths(dataDir, ws).lock), false, 'the lock is released');
    assert.equal(fs.existsSync(path.join(repoPaths(dataDir, ws).scratch, 'notes.txt')), false, 'the restore removed the FIFO');
  });
});

describe('one runner: the model\'s run_tests is held to the limits and gets the environment the record claims', function () {
  this.timeout(120_000);
  const model = useSandboxedRuns();

  /** Says what a listed variable holds; tries to start 80 sleepers and says how many started; writes 3 MiB. */
  const TEST_SH = [
    'echo "LISTED=${LISTED_BY_USER:-unset}"',
    `node -e "const { spawn } = require('child_process'); const kids = []; for (let i = 0; i < 80; i++) { const c = spawn('sleep', ['30'], { stdio: 'ignore' }); c.on('error', () => {}); if (c.pid) kids.push(c); } console.log('RUNNING ' + kids.length); for (const c of kids) c.kill('SIGKILL');"`,
    'head -c 3145728 /dev/zero > big.bin 2>/dev/null; echo "WROTE $(wc -c < big.bin)"; rm -f big.bin',
    'node test.js',
  ].join('\n');
  const limits = { ...DEFAULT_GATE_LIMITS, processes: 24, fileSizeMiB: 1 };

  const said = (output: string, what: string): string[] => output.split('\n').filter((line) => line.startsWith(what));

  it('the trap: the same script through the gate call run_tests made before (no limits, no environment) starts them all and writes it all', async function () {
    const sandbox = await requiredSandbox();
    const dir = tempDir('candor-one-runner-');
    fs.writeFileSync(path.join(dir, 'test.sh'), TEST_SH);
    fs.writeFileSync(path.join(dir, 'test.js'), "console.log('tests ok');\n");
    process.env.LISTED_BY_USER = 'yes';
    try {
      const result = await runGate([{ name: 'test', command: 'sh test.sh' }], { cwd: dir, sandbox, network: false, depsWritable: false, timeoutMs: 30_000 });
      assert.deepEqual(said(result.tail, 'LISTED='), ['LISTED=unset']);
      assert.ok(Number(said(result.tail, 'RUNNING ')[0]?.split(' ')[1]) > 60, result.tail);
      assert.deepEqual(said(result.tail, 'WROTE '), ['WROTE 3145728']);
    } finally {
      delete process.env.LISTED_BY_USER;
    }
  });

  it('run_tests through the pipeline: the process and file-size limits hold it, the listed variable reaches it, and the record names those mechanisms', async () => {
    const ws = workspaceRepo({ 'test.sh': 'node test.js\n' });
    const dataDir = tempDir('candor-data-');
    const r = rant(dataDir, 'The greeting is broken, a bug', path.basename(ws));
    model().use(callsScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), [
      { name: 'write_file', arguments: { path: 'test.sh', content: `${TEST_SH}\n` } },
      { name: 'run_tests', arguments: {} },
    ]));
    process.env.LISTED_BY_USER = 'yes';
    const printer = new Printer();
    let record;
    try {
      record = await runEvolution(baseOptions(ws, dataDir, { model: model().model(), testCommand: 'sh test.sh', limits, environment: ['LISTED_BY_USER'], rerunFailedGate: false }), printer.io);
    } finally {
      delete process.env.LISTED_BY_USER;
    }
    const runTests = printer.output.slice(0, printer.output.lastIndexOf('$ sh test.sh'));
    assert.ok(runTests.includes('LISTED='), `run_tests ran before the gate:\n${printer.output}\n${printer.text()}`);
    assert.deepEqual(said(runTests, 'LISTED='), ['LISTED=yes'], 'run_tests got the listed variable');
    assert.ok(Number(said(runTests, 'RUNNING ')[0]?.split(' ')[1]) <= limits.processes, runTests);
    assert.deepEqual(said(runTests, 'WROTE '), ['WROTE 1048576'], 'the file-size limit stopped the write at 1 MiB');
    assert.ok(record.limits !== null, printer.text());
    assert.ok(['cgroup', 'rlimit'].includes(record.limits?.pids ?? ''), JSON.stringify(record.limits));
    assert.equal(record.limits?.fileSize, 'rlimit');
  });
});

async function eventually(condition: () => boolean, ms = 30_000): Promise<boolean> {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return condition();
}
