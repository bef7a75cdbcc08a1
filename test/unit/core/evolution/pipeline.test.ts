import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { gateKey, markGated, readRuns } from '../../../../src/core/evolution/record';
import { rantStatuses, readDecisions } from '../../../../src/core/evolution/triage';
import { handOff } from '../../../../src/core/evolution/handOff';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { isGitGuardError, noUnsavedBuffers } from '../../../../src/core/git';
import { Printer, ScriptedModel, baseOptions, git, greetPatch, loopScenario, rant, removeTempDirs, snapshot, tempDir, triageAnswer, workspaceRepo, write, skipUnlessSandbox } from './helpers';

describe('evolution run: the whole loop on the agent repository, against a real HTTP model and real git', () => {
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

  const scratchGit = (...args: string[]): string => git(repoPaths(dataDir, ws).scratch, ...args);

  it('a rant → a run → a scripted patch → the gate passes → a commit on candor/rant-<id> with the trailer → the record', async () => {
    const r = rant(dataDir, 'The greeting is too short!\nIt should greet the world.', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code', note: 'greet() should say hello world' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }));
    const before = snapshot(ws);
    const printer = new Printer();
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), printer.io);

    assert.equal(record.outcome, 'shipped', printer.text());
    assert.deepEqual(snapshot(ws), before, 'the agent repository is untouched until the branch is taken');
    assert.equal(record.repository, ws);
    assert.deepEqual(printer.phases, ['triage', 'scratch clone', 'gate HEAD', 'change', 'gate', 'ship', 'record']);
    assert.match(printer.text(), /uncommitted work is not included/);
    assert.equal(record.branch, `candor/rant-${r.id}`);
    assert.equal(record.rants[0], r.id);
    assert.equal(record.gate?.passed, true);
    assert.match(record.gate?.tail ?? '', /tests ok/);
    assert.match(record.diffstat ?? '', /greet\.js \| 2 \+-/);

    const head = git(ws, 'rev-parse', 'HEAD').trim();
    assert.equal(scratchGit('rev-parse', `refs/heads/candor/rant-${r.id}`).trim(), record.commit);
    assert.equal(scratchGit('rev-parse', `${record.commit}^`).trim(), head, 'the commit sits on the workspace HEAD');
    const message = scratchGit('log', '-1', '--format=%B', record.commit ?? '');
    assert.match(message, /^candor: The greeting is too short!/);
    assert.ok(message.includes(r.ts), 'the rant timestamp is in the message');
    assert.equal(scratchGit('log', '-1', '--format=%(trailers:key=Candor-Rant,valueonly)', record.commit ?? '').trim(), r.id);
    assert.equal(scratchGit('log', '-1', '--format=%cn <%ce>|%an <%ae>', record.commit ?? '').trim(), 'Candor <candor@localhost>|Candor <candor@localhost>');
    assert.equal(scratchGit('show', `${record.commit}:greet.js`), "module.exports = () => 'hello world';\n");
    assert.equal(scratchGit('status', '--porcelain').trim(), '', 'the clone is left clean');
    assert.equal(fs.existsSync(path.join(repoPaths(dataDir, ws).scratch, '.git', 'logs')), false, 'shipping wrote no reflog');

    const runs = readRuns(dataDir);
    assert.equal(runs.length, 1);
    assert.deepEqual(runs[0], record);
    for (const key of ['v', 'run', 'ts', 'ended', 'rants', 'outcome', 'reason', 'repository', 'base', 'branch', 'commit', 'diffstat', 'gate', 'sandbox']) assert.ok(key in record, key);
    assert.equal(record.base, 'main', 'the branch the run started on: the pull request\'s base');
    assert.equal(record.sandbox, 'bubblewrap');
    const decisions = readDecisions(dataDir);
    assert.equal(decisions[0]?.source, 'model', "the model's triage answer is used");
    assert.equal(decisions[0]?.class, 'agent-code');
    const state = rantStatuses(dataDir).find((s) => s.rant.id === r.id);
    assert.equal(state?.status, 'acted');
    assert.equal(state?.source, 'model', 'an acted line keeps where its class came from');
    assert.equal(state?.commit, record.commit);

    // The triage request asked for strict JSON; the change request carried the rant and the triage note.
    const seen = model.server.requests;
    assert.ok(seen.some((q) => /strict JSON/.test(q.system)));
    assert.ok(seen.some((q) => q.lastUser.includes('The greeting is too short') && q.lastUser.includes('greet() should say hello world')));
    assert.ok(seen.some((q) => /the agent's own repository/.test(q.system) && /not about the user's project/.test(q.system)), 'the change prompt says whose code it is');
  });

  it('the user takes the branch on a clean tree: only that ref (and its reflog) appears in the agent repository', async () => {
    const r = rant(dataDir, 'greeting too short, say hello world', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'write_file', arguments: { path: 'greet.js', content: "module.exports = () => 'hello world';\n" } }));
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.outcome, 'shipped');
    const branch = record.branch ?? '';
    const before = snapshot(ws, `refs/heads/${branch}`);
    const taken = await handOff(dataDir, ws, branch, noUnsavedBuffers);
    assert.equal(taken.commit, record.commit);
    assert.equal(git(ws, 'rev-parse', `refs/heads/${branch}`).trim(), record.commit);
    assert.deepEqual(snapshot(ws, `refs/heads/${branch}`), before);

    write(ws, 'scratch.txt', 'dirty');
    await assert.rejects(handOff(dataDir, ws, 'candor/rant-other', noUnsavedBuffers), (err: unknown) => (err as { kind?: string }).kind === 'no-branch');
    const dirtyBranch = `candor/rant-${r.id}`;
    git(ws, 'branch', '-D', dirtyBranch);
    await assert.rejects(handOff(dataDir, ws, dirtyBranch, noUnsavedBuffers), (err: unknown) => isGitGuardError(err, 'dirty'));
  });

  it('a patch that breaks the tests is discarded, the clone restored, the record says so', async () => {
    const r = rant(dataDir, 'the greeting is boring, crash it', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('bye') } }));
    const before = snapshot(ws);
    const printer = new Printer();
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), printer.io);
    assert.equal(record.outcome, 'discarded', printer.text());
    assert.match(record.reason, /fails the gate: test failed \(exit 1\)/);
    assert.match(record.reason, /restored/);
    assert.equal(record.gate?.passed, false);
    assert.match(record.gate?.tail ?? '', /AssertionError/);
    assert.equal(record.branch, null);
    assert.deepEqual(snapshot(ws), before);
    assert.equal(scratchGit('status', '--porcelain').trim(), '');
    assert.equal(fs.readFileSync(path.join(repoPaths(dataDir, ws).scratch, 'greet.js'), 'utf8'), "module.exports = () => 'hello';\n");
    assert.equal(scratchGit('branch', '--list', 'candor/*').trim(), '');
    assert.equal(rantStatuses(dataDir)[0]?.status, 'queued', 'the rant stays open');
  });

  it('a change larger than the limits is rejected as too big', async () => {
    const r = rant(dataDir, 'please add lots of files', path.basename(ws));
    const patch = [1, 2, 3].map((n) => ['--- /dev/null', `+++ b/extra${n}.js`, '@@ -0,0 +1 @@', `+// ${n}`, ''].join('\n')).join('');
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch } }));
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model(), maxChangedFiles: 2 }), new Printer().io);
    assert.equal(record.outcome, 'discarded');
    assert.match(record.reason, /too big: 3 changed files \(limit 2\)/);
    assert.equal(record.gate, null, 'a too-big change is not gated');
    assert.equal(scratchGit('status', '--porcelain').trim(), '');
  });

  it('no change is a valid outcome (nothing-to-evolve); HEAD is gated once only; setup is reused while the lock file is unchanged', async () => {
    write(ws, 'package-lock.json', '{"lockfileVersion": 3}\n');
    git(ws, 'add', '-A');
    git(ws, 'commit', '-qm', 'lock file');
    // The commands cannot write outside the clone (the sandbox): they say they ran in their output.
    const options = {
      model: model.model(),
      testCommand: 'node test.js && echo GATE-RAN',
      setupCommand: 'mkdir -p node_modules && echo installed > node_modules/marker && echo SETUP-RAN',
    };
    const count = (printer: Printer, marker: string): number => printer.output.split('\n').filter((line) => line === marker).length;
    const r = rant(dataDir, 'the greeting is so plain', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), undefined, 'Nothing needs to change: the greeting is as documented.'));
    const printer = new Printer();
    const first = await runEvolution(baseOptions(ws, dataDir, options), printer.io);
    assert.equal(first.outcome, 'nothing-to-evolve', printer.text());
    assert.match(first.reason, /no change: Nothing needs to change/);
    assert.equal(first.sandbox, 'bubblewrap', 'commands ran, in the sandbox');
    assert.equal(count(printer, 'GATE-RAN'), 1, 'HEAD was gated');
    assert.equal(count(printer, 'SETUP-RAN'), 1, 'setup ran');
    assert.match(printer.text(), /setup: mkdir -p node_modules .* \(package-lock\.json changed\)$/m);
    const again = new Printer();
    const second = await runEvolution(baseOptions(ws, dataDir, options), again.io);
    assert.equal(second.outcome, 'nothing-to-evolve');
    assert.equal(count(again, 'GATE-RAN'), 0, 'a gated HEAD is not gated again');
    assert.equal(count(again, 'SETUP-RAN'), 0, 'setup is reused');
    assert.equal(second.sandbox, null, 'no command ran');
    assert.ok(fs.existsSync(path.join(repoPaths(dataDir, ws).scratch, 'node_modules', 'marker')));
    const third = new Printer();
    const another = rant(dataDir, 'the greeting is still plain and boring', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: another.id, class: 'agent-code' }]), undefined, 'Nothing needs to change.'));
    await runEvolution(baseOptions(ws, dataDir, { ...options, testCommand: `${options.testCommand} && true` }), third.io);
    assert.equal(count(third, 'GATE-RAN'), 1, 'another test command gates HEAD again');
  });

  describe('a dirty agent repository makes the run read-only: triage and record, no clone, no gate, nothing changed', () => {
    const cases: Array<[string, (ws: string) => void, ((ws: string) => string[]) | undefined, RegExp]> = [
      ['dirty on disk', (w) => write(w, 'greet.js', "module.exports = () => 'hi';\n"), undefined, /1 unstaged \(greet\.js\)/],
      ['an unsaved buffer', () => undefined, (w) => [path.join(w, 'greet.js')], /1 unsaved \(greet\.js\)/],
      ['mid-merge', (w) => midMerge(w), undefined, /merge in progress/],
    ];
    for (const [name, dirty, unsaved, reason] of cases) {
      it(name, async () => {
        const r = rant(dataDir, 'the greeting crashes with an error', path.basename(ws));
        model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), undefined));
        dirty(ws);
        const before = snapshot(ws);
        const printer = new Printer();
        const options = baseOptions(ws, dataDir, { model: model.model(), ...(unsaved ? { unsaved: { unsavedFiles: () => unsaved(ws) } } : {}) });
        const record = await runEvolution(options, printer.io);
        assert.equal(record.outcome, 'read-only');
        assert.match(record.reason, /^dirty working tree — read-only cycle: /);
        assert.match(record.reason, reason);
        assert.match(printer.text(), /dirty working tree — read-only cycle/);
        assert.deepEqual(printer.phases, ['triage', 'record']);
        assert.equal(fs.existsSync(repoPaths(dataDir, ws).scratch), false, 'no clone');
        assert.equal(readDecisions(dataDir)[0]?.status, 'queued', 'triage still ran');
        assert.deepEqual(snapshot(ws), before);
        assert.equal(readRuns(dataDir).length, 1);
      });
    }
  });

  it('HEAD failing its own tests, with no Candor commit since it last passed, is an error, and no change is attempted', async () => {
    const head = git(ws, 'rev-parse', 'HEAD').trim();
    markGated(repoPaths(dataDir, ws).gated, head, gateKey(baseOptions(ws, dataDir)));
    write(ws, 'test.js', 'process.exit(1);\n');
    git(ws, 'commit', '-qam', 'break the tests');
    const r = rant(dataDir, 'the greeting crashes with an error', path.basename(ws));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('x') } }));
    const seen = model.server.requests.length;
    const record = await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /HEAD fails its own tests, and not because of a Candor change/);
    assert.equal(record.gate?.passed, false);
    assert.ok(!model.server.requests.slice(seen).some((q) => /scratch clone/.test(q.system)), 'the change phase never ran');
    assert.equal(scratchGit('branch', '--list', 'candor/*').trim(), '');
  });

  it('records the branch the run started on as base: its name, the same for a read-only run, null when HEAD is detached', async () => {
    git(ws, 'checkout', '-q', '-b', 'release/2.x');
    const onBranch = await runEvolution(baseOptions(ws, dataDir), new Printer().io);
    assert.equal(onBranch.outcome, 'nothing-to-evolve', onBranch.reason);
    assert.equal(onBranch.base, 'release/2.x');
    write(ws, 'untracked.txt', 'dirty\n');
    const readOnly = await runEvolution(baseOptions(ws, dataDir), new Printer().io);
    assert.equal(readOnly.outcome, 'read-only');
    assert.equal(readOnly.base, 'release/2.x');
    fs.rmSync(path.join(ws, 'untracked.txt'));
    git(ws, 'checkout', '-q', '--detach');
    const detached = await runEvolution(baseOptions(ws, dataDir), new Printer().io);
    assert.equal(detached.outcome, 'nothing-to-evolve', detached.reason);
    assert.equal(detached.base, null);
    assert.deepEqual(readRuns(dataDir).map((run) => run.base), ['release/2.x', 'release/2.x', null]);
  });

  it('every record line is readable after runs of each kind', async () => {
    rant(dataDir, 'nothing to see', path.basename(ws));
    model.use({ rules: [{ respond: { text: '' } }] });
    await runEvolution(baseOptions(ws, dataDir, { model: model.model() }), new Printer().io);
    const lines = fs.readFileSync(path.join(dataDir, 'evolution.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    const record = JSON.parse(lines[0] ?? '') as { v: number; ts: string; ended: string };
    assert.equal(record.v, 1);
    assert.match(record.ts, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.ok(record.ended >= record.ts);
  });
});

/** Leaves `ws` in a conflicted merge (MERGE_HEAD present). */
export function midMerge(ws: string): void {
  git(ws, 'checkout', '-q', '-b', 'other');
  write(ws, 'greet.js', "module.exports = () => 'hello other';\n");
  git(ws, 'commit', '-qam', 'other');
  git(ws, 'checkout', '-q', 'main');
  write(ws, 'greet.js', "module.exports = () => 'hello main';\n");
  git(ws, 'commit', '-qam', 'main');
  try {
    git(ws, 'merge', '-q', 'other');
  } catch {
    // the conflict is the point
  }
  assert.ok(fs.existsSync(path.join(ws, '.git', 'MERGE_HEAD')));
}
