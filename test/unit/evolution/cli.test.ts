import * as assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as esbuild from 'esbuild';
import { readRuns } from '../../../src/core/evolution/record';
import { rantStatuses } from '../../../src/core/evolution/triage';
import { repoPaths } from '../../../src/core/evolution/paths';
import { git, greetPatch, loopScenario, removeTempDirs, snapshot, tempDir, triageAnswer, workspaceRepo, write } from './helpers';

interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** The CLI bundled as scripts/build.mjs bundles it (into a private folder, so dist/ is left to the build). */
describe('CLI: node cli.js rant / evolve / take, end to end offline', function () {
  this.timeout(90_000);
  let cli: string;
  let ws: string;
  let dataDir: string;

  before(async () => {
    const out = tempDir('candor-cli-build-');
    cli = path.join(out, 'cli.js');
    await esbuild.build({ entryPoints: [path.resolve(__dirname, '../../../src/cli/main.ts')], bundle: true, platform: 'node', target: 'node20', format: 'cjs', outfile: cli, logLevel: 'error' });
  });
  beforeEach(() => {
    ws = workspaceRepo();
    dataDir = tempDir('candor-data-');
  });
  after(() => removeTempDirs());

  function run(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [cli, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

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
  });
});
