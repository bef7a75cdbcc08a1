import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { readRuns } from '../../../src/core/evolution/record';
import { rantStatuses } from '../../../src/core/evolution/triage';
import { repoPaths } from '../../../src/core/evolution/paths';
import { buildCli, runCli, type CliResult } from './cliHelpers';
import { git, greetPatch, loopScenario, removeTempDirs, snapshot, tempDir, triageAnswer, workspaceRepo, write } from './helpers';

describe('CLI: node cli.js rant / evolve / take, end to end offline', function () {
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
  after(() => built.remove());

  const run = (args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> => runCli(built.cli, args, env);

  it('rant captures; evolve runs the whole loop on a scenario, prints each phase, keeps the key out of the gate; take hands the branch over', async () => {
    const saved = await run(['rant', 'The greeting is too short, it is a bug', '--data-dir', dataDir, '--project', path.basename(ws)]);
    assert.equal(saved.code, 0, saved.stderr);
    assert.match(saved.stdout, /^Rant saved \([0-9a-z]+\)/);
    const id = rantStatuses(dataDir)[0]?.rant.id ?? assert.fail('no rant');
    const scenario = path.join(dataDir, 'scenario.json');
    write(dataDir, 'scenario.json', JSON.stringify(loopScenario(triageAnswer([{ id, class: 'bug' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } })));
    // The gate fails if the key (or any CANDOR_* variable) reached it.
    const testCommand = 'node test.js && node -e "process.exit(process.env.OPENAI_API_KEY || process.env.CANDOR_PROBE ? 3 : 0)"';
    const before = snapshot(ws);
    const result = await run(['evolve', '--workspace', ws, '--data-dir', dataDir, '--scenario', scenario, '--test-command', testCommand, '--timeout-seconds', '30'], {
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
    const taken = await run(['take', branch, '--workspace', ws, '--data-dir', dataDir]);
    assert.equal(taken.code, 0, taken.stderr);
    assert.equal(git(ws, 'rev-parse', `refs/heads/${branch}`).trim(), record?.commit);
    assert.deepEqual(snapshot(ws, `refs/heads/${branch}`), before);
    assert.ok(fs.existsSync(repoPaths(dataDir, ws).scratch));
  });

  it('exit codes: 1 for an error outcome (not a repository), 2 for bad usage; the demo scenario runs without a scenario file', async () => {
    const plain = tempDir('candor-plain-');
    const notRepo = await run(['evolve', '--workspace', plain, '--data-dir', dataDir]);
    assert.equal(notRepo.code, 1);
    assert.match(notRepo.stdout, /outcome: error — .* is not a git repository/);
    assert.equal((await run(['evolve', '--workspace', ws])).code, 2, 'no data dir');
    assert.equal((await run(['evolve', '--data-dir', dataDir, '--max-changed-lines', 'lots'])).code, 2);
    assert.equal((await run(['evolve', '--data-dir', dataDir, '--no-such-flag'])).code, 2);
    assert.equal((await run(['evolve', '--data-dir', dataDir, '--base-url', 'http://127.0.0.1:9/v1'])).code, 2, '--model is required with --base-url');

    const demo = await run(['evolve', '--workspace', ws, '--data-dir', dataDir, '--test-command', 'node test.js']);
    assert.equal(demo.code, 0, demo.stdout + demo.stderr);
    assert.match(demo.stdout, /built-in demo scenario/);
    assert.match(demo.stdout, /outcome: nothing-to-evolve — no rant to act on/);
    const badSandbox = await run(['evolve', '--workspace', ws, '--data-dir', dataDir, '--sandbox', 'maybe']);
    assert.equal(badSandbox.code, 2);
    assert.match(badSandbox.stderr, /--sandbox must be "required" or "off"/);
  });

  it('--sandbox off: the run says so, the gate runs in a plain shell, the record says "off"', async () => {
    const result = await run(['evolve', '--workspace', ws, '--data-dir', dataDir, '--test-command', 'node test.js', '--sandbox', 'off']);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /^warning: candor\.evolution\.sandbox is "off": .* without an OS sandbox, at your own risk$/m);
    assert.equal(readRuns(dataDir)[0]?.sandbox, 'off');
    const required = await run(['evolve', '--workspace', ws, '--data-dir', dataDir, '--test-command', 'node test.js && true']);
    assert.equal(required.code, 0, required.stdout + required.stderr);
    assert.doesNotMatch(required.stdout, /warning: candor\.evolution\.sandbox/);
    assert.equal(readRuns(dataDir)[1]?.sandbox, 'bubblewrap');
  });
});
