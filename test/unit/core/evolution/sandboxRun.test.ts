import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { readRuns } from '../../../../src/core/evolution/record';
import { readDecisions } from '../../../../src/core/evolution/triage';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { Printer, ScriptedModel, baseOptions, greetPatch, loopScenario, rant, removeTempDirs, tempDir, triageAnswer, workspaceRepo, skipUnlessSandbox } from './helpers';

describe('evolution run: the sandbox setting, and what a run prints and records', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let model: ScriptedModel;
  let ws: string;
  let dataDir: string;
  const KEY = 'sk-test-secret-key';

  before(async () => {
    model = await ScriptedModel.start();
  });
  after(async () => model?.close());
  beforeEach(() => {
    ws = workspaceRepo();
    dataDir = tempDir('candor-data-');
  });
  afterEach(() => removeTempDirs());

  it('required but unavailable (bwrap missing): triage runs, no clone is made, no command runs, the reason says what to install', async () => {
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }));
    const printer = new Printer();
    const missing = path.join(tempDir('candor-nobwrap-'), 'bwrap');
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), sandboxProbe: { bwrapPath: missing } }), printer.io);
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /apt-get install bubblewrap/);
    assert.match(record.reason, /candor\.evolution\.sandbox/);
    assert.equal(record.sandbox, null, 'no command ran');
    assert.deepEqual(record.rants, [r.id]);
    assert.deepEqual(printer.phases, ['triage', 'record']);
    assert.equal(printer.output, '', 'no command printed anything');
    assert.equal(fs.existsSync(repoPaths(dataDir, ws).scratch), false, 'no clone');
    assert.equal(readDecisions(dataDir)[0]?.status, 'queued', 'triage and routing ran');
    assert.ok(!model.server.requests.some((q) => /scratch clone/.test(q.system)), 'no change was asked for');
    assert.deepEqual(readRuns(dataDir), [record]);
  });

  it('"off": every run says so first, the record says "off", and the change prompt tells the model there is no sandbox', async () => {
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }));
    const printer = new Printer();
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), sandbox: 'off' }), printer.io);
    assert.equal(record.outcome, 'shipped', printer.text());
    assert.equal(record.sandbox, 'off');
    assert.match(printer.lines[0] ?? '', /^warning: candor\.evolution\.sandbox is "off": .* at your own risk$/);
    const prompt = model.server.requests.filter((q) => /scratch clone/.test(q.system)).at(-1)?.system ?? '';
    assert.match(prompt, /without an OS sandbox/);
  });

  it('"required": the change prompt says truthfully what the code run by run_tests can reach', async () => {
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }));
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.sandbox, 'bubblewrap');
    const prompt = model.server.requests.filter((q) => /scratch clone/.test(q.system)).at(-1)?.system ?? '';
    assert.match(prompt, /in an OS sandbox: no network; the clone writable except \.git and node_modules/);
    assert.match(prompt, /real home folder and Candor's data are hidden/);
    assert.doesNotMatch(prompt, /cannot .*run other commands/);
  });

  it('the key is redacted from the record (reason, gate tail), every printed line and the streamed output, even split across two writes', async () => {
    const r = rant(dataDir, 'The greeting is too short, a bug', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }, `Changed greet; the key was ${KEY}.`));
    // The test prints the key in two pieces, and a bearer token of its own.
    const testCommand = `node test.js && printf 'sk-test-sec' && sleep 0.2 && printf 'ret-key\\nAuthorization: Bearer abc.def-123\\n'`;
    const printer = new Printer();
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), testCommand }), printer.io);
    assert.equal(record.outcome, 'shipped', printer.text());
    assert.ok(printer.output.includes('[redacted]'), 'the trap: the key was printed, and redacted');
    for (const [where, text] of [['record', JSON.stringify(record)], ['printed lines', printer.text()], ['streamed output', printer.output], ['evolution.jsonl', fs.readFileSync(path.join(dataDir, 'evolution.jsonl'), 'utf8')]] as const) {
      assert.ok(!text.includes(KEY), `${where} holds the key`);
      assert.ok(!text.includes('abc.def-123'), `${where} holds the bearer token`);
    }
    assert.match(record.reason, /the key was \[redacted\]/);
    assert.match(record.gate?.tail ?? '', /\[redacted\]\nAuthorization: Bearer \[redacted\]/);
  });
});
