import * as assert from 'node:assert/strict';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { gateKey, gatedCommits, readRuns } from '../../../../src/core/evolution/record';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { Printer, ScriptedModel, baseOptions, git, greetPatch, loopScenario, rant, removeTempDirs, tempDir, triageAnswer, workspaceRepo, skipUnlessSandbox } from './helpers';

/**
 * A gate whose verdicts are scripted: `head.txt` and `change.txt` (committed)
 * hold one letter per gate run of that tree, P or F; the tree is the change
 * once greet.js says "hello world". The run count is kept in `debug.log`,
 * which the repository ignores, so it is never part of a change (and the
 * reset after HEAD's gate removes it). Each run prints a mocha-style summary.
 */
const SCRIPTED_GATE = [
  "const fs = require('fs');",
  "const n = fs.existsSync('debug.log') ? Number(fs.readFileSync('debug.log', 'utf8')) : 0;",
  "fs.writeFileSync('debug.log', String(n + 1));",
  "const tree = fs.readFileSync('greet.js', 'utf8').includes('hello world') ? 'change' : 'head';",
  "const verdict = fs.readFileSync(`${tree}.txt`, 'utf8').trim()[n] ?? 'P';",
  "console.log(`gate run ${n + 1} of ${tree}: ${verdict}`);",
  "if (verdict === 'P') { console.log('\\n  3 passing (5ms)\\n  2 pending\\n'); process.exit(0); }",
  // mocha's own shape of a failure: the summary, then the numbered failure list.
  "console.log('\\n  2 passing (5ms)\\n  2 pending\\n  1 failing\\n\\n  1) greet\\n       says hello:\\n\\n      AssertionError [ERR_ASSERTION]: scripted failure\\n'); process.exit(1);",
  '',
].join('\n');

describe('a gate that knows when it is flaky: a failure is run once more on the same tree', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let model: ScriptedModel;
  let dataDir: string;
  before(async () => {
    model = await ScriptedModel.start();
  });
  after(async () => model?.close());
  beforeEach(() => {
    dataDir = tempDir('candor-data-');
  });
  afterEach(() => removeTempDirs());

  async function runWith(head: string, change: string, extra: Parameters<typeof baseOptions>[2] = {}) {
    const ws = workspaceRepo({ 'head.txt': `${head}\n`, 'change.txt': `${change}\n`, 'gate.js': SCRIPTED_GATE });
    const r = rant(dataDir, 'The greeting is too short', 'ws');
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }));
    const printer = new Printer();
    const options = baseOptions(ws, dataDir, { model: model.model(), testCommand: 'node gate.js', ...extra });
    const record = await runEvolution(options, printer.io);
    return { ws, record, printer, options, gateRuns: (printer.output.match(/gate run \d+ of/g) ?? []).length };
  }

  it('HEAD passes, the change fails then passes: flaky, discarded, nothing committed, the first failure kept', async () => {
    const { ws, record, printer, gateRuns } = await runWith('P', 'FP');
    assert.equal(gateRuns, 3, 'HEAD once, the change twice');
    assert.equal(record.outcome, 'discarded', printer.text());
    assert.equal(record.reason, 'the gate is flaky: it failed, then passed, on the same change; the clone is restored');
    assert.equal(record.gate?.flaky, true);
    assert.equal(record.gate?.passed, false);
    assert.match(record.gate?.tail ?? '', /gate run 1 of change: F/, "the tail is the first failure's");
    assert.doesNotMatch(record.gate?.tail ?? '', /gate run 2 of change/);
    assert.equal(record.branch, null, 'nothing ships');
    assert.match(printer.text(), /flaky gate/);
    assert.doesNotMatch(printer.text(), /the change fails the gate/);
    const branches = git(repoPaths(dataDir, ws).scratch, 'branch', '--list', 'candor/*').trim();
    assert.equal(branches, '', 'no candor branch was committed');
    assert.deepEqual(readRuns(dataDir).at(-1), record);
  });

  it('the change fails twice: discarded as a failing change, not flaky, with what the runner counted', async () => {
    const { record, printer, gateRuns } = await runWith('P', 'FF');
    assert.equal(gateRuns, 3);
    assert.equal(record.outcome, 'discarded');
    assert.match(record.reason, /^the change fails the gate: test failed \(exit 1\)/);
    assert.equal(record.gate?.flaky, undefined);
    assert.equal(record.gate?.passed, false);
    assert.deepEqual([record.gate?.passing, record.gate?.failing, record.gate?.skipped], [2, 1, 2]);
    assert.match(record.gate?.tail ?? '', /gate run 2 of change: F/, 'the second failure is the verdict');
    assert.match(printer.text(), /running it once more on the same tree/);
  });

  it('a passing change ships after one gate run, and the record says what was skipped', async () => {
    const { record, printer, gateRuns } = await runWith('P', 'P');
    assert.equal(gateRuns, 2, 'no re-run after a pass');
    assert.equal(record.outcome, 'shipped', printer.text());
    assert.equal(record.gate?.passed, true);
    assert.deepEqual([record.gate?.passing, record.gate?.failing, record.gate?.skipped], [3, 0, 2]);
    assert.match(printer.text(), /gate passed in [\d.]+ s: 3 passing, 0 failing, 2 skipped/);
  });

  it('a flaky HEAD is recorded as flaky, and nothing is built on it or marked as passing', async () => {
    const { ws, record, printer, options, gateRuns } = await runWith('FP', 'P');
    assert.equal(gateRuns, 2, 'HEAD twice, and no change gated');
    assert.equal(record.outcome, 'error', printer.text());
    assert.match(record.reason, /^the gate is flaky at HEAD [0-9a-f]{12}: it failed, then passed, on the same commit/);
    assert.equal(record.gate?.flaky, true);
    assert.equal(record.branch, null);
    assert.ok(!printer.phases.includes('change'), 'no change is made on a flaky HEAD');
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    assert.ok(!gatedCommits(repoPaths(dataDir, ws).gated, gateKey(options)).has(head), 'a flaky HEAD is not remembered as passing');
  });

  it('with candor.evolution.rerunFailedGate off, a failure is final after one run', async () => {
    const { record, gateRuns } = await runWith('P', 'FP', { rerunFailedGate: false });
    assert.equal(gateRuns, 2);
    assert.equal(record.outcome, 'discarded');
    assert.match(record.reason, /^the change fails the gate/);
    assert.equal(record.gate?.flaky, undefined);
  });

  it('a runner with no summary line is said to have none, never guessed', async () => {
    const { record, printer } = await runWith('P', 'P', { testCommand: "node gate.js | grep -v -E 'passing|pending|failing'" });
    assert.equal(record.outcome, 'shipped', printer.text());
    assert.equal(record.gate?.passing, undefined);
    assert.match(printer.text(), /no test summary line found: the counts are unknown/);
  });
});
