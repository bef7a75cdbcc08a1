import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRuns } from '../../../src/core/evolution/record';
import { rantStatuses } from '../../../src/core/evolution/triage';
import { repoPaths } from '../../../src/core/evolution/paths';
import { buildCli, runCli, runCliSlowReader, type CliResult } from './helpers';
import { git, greetPatch, loopScenario, removeTempDirs, snapshot, tempDir, triageAnswer, workspaceRepo, write, skipUnlessSandbox } from '../core/evolution/helpers';

describe('CLI: node cli.js rant / evolve / take, end to end offline', function () {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  this.timeout(90_000);
  let built: Awaited<ReturnType<typeof buildCli>>;
  let ws: string;
  let dataDir: string;

  before(async () => {
    built = await buildCli();
  });
  beforeEach(() => {
    ws = workspaceRepo();
    dataDir = tempDir('candor-data-');
  });
  afterEach(() => removeTempDirs());
  after(() => built?.remove());

  const run = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> => runCli(built.cli, args, env);

  it('rant captures; evolve runs the whole loop on a scenario, prints each phase, keeps the key out of the gate; take hands the branch over', async () => {
    const saved = await run(['rant', 'The greeting is too short, it is a bug', '--data-dir', dataDir, '--project', path.basename(ws)]);
    assert.equal(saved.code, 0, saved.stderr);
    assert.match(saved.stdout, /^Rant saved \([0-9a-z]+\)/);
    const id = rantStatuses(dataDir)[0]?.rant.id ?? assert.fail('no rant');
    const scenario = path.join(dataDir, 'scenario.json');
    write(dataDir, 'scenario.json', JSON.stringify(loopScenario(triageAnswer([{ id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } })));
    // The gate fails if the key (or any CANDOR_* variable) reached it.
    const testCommand = 'node test.js && node -e "process.exit(process.env.OPENAI_API_KEY || process.env.CANDOR_PROBE ? 3 : 0)"';
    const before = snapshot(ws);
    const result = await run(['evolve', '--repository', ws, '--data-dir', dataDir, '--scenario', scenario, '--test-command', testCommand, '--timeout-seconds', '30'], {
      OPENAI_API_KEY: 'sk-cli-secret',
      CANDOR_PROBE: '1',
    });
    assert.equal(result.code, 0, `${result.stdout}\n${result.stderr}`);
    for (const phase of ['triage', 'scratch clone', 'gate HEAD', 'change', 'gate', 'ship', 'record']) assert.ok(result.stdout.includes(`── ${phase}\n`), phase);
    assert.match(result.stdout, /provider: offline demo — scripted replies, not a model/);
    assert.match(result.stdout, /tests ok/, 'gate output is streamed');
    assert.match(result.stdout, /outcome: shipped — /);
    assert.ok(!result.stdout.includes('sk-cli-secret'));
    assert.deepEqual(snapshot(ws), before);
    const [record] = readRuns(dataDir);
    assert.equal(record?.outcome, 'shipped');

    const branch = record?.branch ?? '';
    const taken = await run(['take', branch, '--repository', ws, '--data-dir', dataDir]);
    assert.equal(taken.code, 0, taken.stderr);
    assert.equal(git(ws, 'rev-parse', `refs/heads/${branch}`).trim(), record?.commit);
    assert.deepEqual(snapshot(ws, `refs/heads/${branch}`), before);
    assert.ok(fs.existsSync(repoPaths(dataDir, ws).scratch));
  });

  it('exit codes: 1 for an error outcome (not a repository), 2 for bad usage; the demo scenario runs without a scenario file', async () => {
    const plain = tempDir('candor-plain-');
    const notRepo = await run(['evolve', '--repository', plain, '--data-dir', dataDir]);
    assert.equal(notRepo.code, 1);
    assert.match(notRepo.stdout, /outcome: error — .* is not a git repository/);
    assert.equal((await run(['evolve', '--repository', ws])).code, 2, 'no data dir');
    assert.equal((await run(['evolve', '--data-dir', dataDir, '--max-changed-lines', 'lots'])).code, 2);
    assert.equal((await run(['evolve', '--data-dir', dataDir, '--no-such-flag'])).code, 2);
    assert.equal((await run(['evolve', '--data-dir', dataDir, '--base-url', 'http://127.0.0.1:9/v1'])).code, 2, '--model is required with --base-url');

    const demo = await run(['evolve', '--repository', ws, '--data-dir', dataDir, '--test-command', 'node test.js']);
    assert.equal(demo.code, 0, demo.stdout + demo.stderr);
    assert.match(demo.stdout, /built-in demo scenario/);
    assert.match(demo.stdout, /outcome: nothing-to-evolve — no agent-code rant to act on/);
    const badSandbox = await run(['evolve', '--repository', ws, '--data-dir', dataDir, '--sandbox', 'maybe']);
    assert.equal(badSandbox.code, 2);
    assert.match(badSandbox.stderr, /--sandbox must be "required" or "off"/);
  });

  it('--repository, not --workspace: evolve and take refuse --workspace (exit 2); without --repository evolve only triages', async () => {
    const saved = await run(['rant', 'The greeting is too short, a bug', '--data-dir', dataDir, '--project', 'some-project']);
    assert.equal(saved.code, 0, saved.stderr);
    const before = snapshot(ws);
    for (const args of [['evolve', '--workspace', ws, '--data-dir', dataDir], ['take', 'candor/rant-x', '--workspace', ws, '--data-dir', dataDir]]) {
      const refused = await run(args, { OPENAI_API_KEY: 'sk-cli-secret' });
      assert.equal(refused.code, 2, `${args[0]}: ${refused.stdout}${refused.stderr}`);
      assert.match(refused.stderr, /use --repository/);
    }
    assert.equal(readRuns(dataDir).length, 0, 'a refused evolve runs nothing');
    const missing = await run(['take', 'candor/rant-x', '--data-dir', dataDir]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /--repository is required/);
    assert.equal((await run(['take', 'candor/rant-x', '--repository', ws, '--data-dir', dataDir, '--no-such-flag'])).code, 2);

    // Run from inside a repository, without --repository: triage only, the folder it runs in is not touched.
    const triageOnly = await runCli(built.cli, ['evolve', '--data-dir', dataDir, '--test-command', 'node test.js'], {}, ws);
    assert.equal(triageOnly.code, 0, triageOnly.stdout + triageOnly.stderr);
    assert.match(triageOnly.stdout, /outcome: triage-only — \d+ code rant\(s\) wait for "candor\.evolution\.repository"/);
    assert.equal(readRuns(dataDir)[0]?.repository, null);
    assert.equal(fs.existsSync(path.join(dataDir, 'scratch')), false);
    assert.deepEqual(snapshot(ws), before);
    assert.match((await run(['evolve', '--data-dir', dataDir, '--project', 'x'])).stderr, /Unknown option '--project'/, '--project only labels a rant');
  });

  it('--sandbox off: the run says so, the gate runs in a plain shell, the record says "off"', async () => {
    // A rant to act on, so HEAD is gated (the model then changes nothing).
    await run(['rant', 'The greeting is too short, a bug', '--data-dir', dataDir]);
    const id = rantStatuses(dataDir)[0]?.rant.id ?? assert.fail('no rant');
    const scenario = path.join(dataDir, 'scenario.json');
    write(dataDir, 'scenario.json', JSON.stringify(loopScenario(triageAnswer([{ id, class: 'agent-code' }]), undefined, 'Nothing to change.')));
    const result = await run(['evolve', '--repository', ws, '--data-dir', dataDir, '--scenario', scenario, '--test-command', 'node test.js', '--sandbox', 'off']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^warning: candor\.evolution\.sandbox is "off": .* without an OS sandbox, at your own risk$/m);
    assert.equal(readRuns(dataDir)[0]?.sandbox, 'off');
    const required = await run(['evolve', '--repository', ws, '--data-dir', dataDir, '--scenario', scenario, '--test-command', 'node test.js && true']);
    assert.equal(required.code, 0, required.stdout + required.stderr);
    assert.doesNotMatch(required.stdout, /warning: candor\.evolution\.sandbox/);
    assert.equal(readRuns(dataDir)[1]?.sandbox, 'bubblewrap');
  });

  it('a gate that prints 200 MiB into a slow pipe: what the reader is 8 MiB behind on is dropped and counted, the last lines arrive, memory stays bounded', async function () {
    this.timeout(240_000);
    // Tried: the change's gate prints 200 MiB while the CLI's stdout goes to a reader taking 64 KiB every 10 ms
    // (for a few seconds, then it reads fast). 0.1.0 buffered all of it, then exited before the outcome line was out.
    await run(['rant', 'The greeting is too short, it is a bug', '--data-dir', dataDir]);
    const id = rantStatuses(dataDir)[0]?.rant.id ?? assert.fail('no rant');
    const scenario = path.join(dataDir, 'scenario.json');
    write(dataDir, 'scenario.json', JSON.stringify(loopScenario(triageAnswer([{ id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } })));
    const line = 'abcdefghijklmnopqrstuvwxyz01234\n';
    const total = 200 * 1024 * 1024;
    // Only the changed tree prints: HEAD's gate stays small.
    const testCommand = `node test.js && if grep -q "hello world" greet.js; then yes ${line.trim()} | head -c ${total}; fi`;
    const result = await runCliSlowReader(
      built.cli,
      ['evolve', '--repository', ws, '--data-dir', dataDir, '--scenario', scenario, '--test-command', testCommand, '--timeout-seconds', '200', '--sandbox', 'off'],
      { CANDOR_REPORT_PEAK_MEMORY: '1' },
      { slowMs: 4000, line },
    );
    const said = result.tail.split('\n').filter((l) => `${l}\n` !== line).join('\n');
    assert.equal(result.code, 0, `${said}\n${result.stderr}`);
    assert.ok(result.notShown.length >= 1, 'a marker says output was left out');
    const dropped = result.notShown.reduce((sum, n) => sum + n, 0);
    assert.equal(result.lineCount * line.length + dropped, total, 'every byte of the gate was either shown or counted as not shown');
    assert.ok(dropped > 0 && result.lineCount > 0);
    assert.match(result.tail, /\ngate passed in [\d.]+ s[^\n]*\n/, 'the summary after the flood');
    assert.match(result.tail, /\noutcome: shipped — rant \S+ addressed[^\n]*\n$/, 'the outcome line, last');
    assert.equal(readRuns(dataDir)[0]?.outcome, 'shipped');
    const peak = /^peak memory: VmHWM (\d+) kB$/m.exec(result.stderr)?.[1] ?? assert.fail(`no peak memory line: ${result.stderr}`);
    assert.ok(Number(peak) * 1024 < 200e6, `peak resident memory ${peak} kB, over 200 MB`);
  });
});
