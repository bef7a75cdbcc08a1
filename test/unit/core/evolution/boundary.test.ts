// The agent improves the agent: a run changes code only in the agent's own
// repository, only for an `agent-code` rant, and nothing at all without one set.
import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { readRuns } from '../../../../src/core/evolution/record';
import { rantStatuses, readDecisions } from '../../../../src/core/evolution/triage';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { Printer, ScriptedModel, baseOptions, git, greetPatch, loopScenario, rant, removeTempDirs, snapshot, tempDir, triageAnswer, workspaceRepo, skipUnlessSandbox } from './helpers';

describe('evolution run: the boundary between the agent and the user\'s project', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let model: ScriptedModel;
  let agent: string;
  let project: string;
  let dataDir: string;

  before(async () => {
    model = await ScriptedModel.start();
  });
  after(async () => model?.close());
  beforeEach(() => {
    agent = workspaceRepo({ 'README.md': '# The agent\n\n## Greeting\nThe agent greets with hello; the greeting is fixed by design.\n' });
    // The project the user works in: a repository of its own, which no run may touch.
    project = workspaceRepo();
    dataDir = tempDir('candor-data-');
  });
  afterEach(() => removeTempDirs());

  const changeRequests = (from: number): number => model.server.requests.slice(from).filter((q) => /scratch clone/.test(q.system)).length;
  const candorBranches = (repo: string): string => git(repo, 'for-each-ref', '--format=%(refname)', 'refs/heads/candor/');
  const scratchBranches = (): string => (fs.existsSync(repoPaths(dataDir, agent).scratch) ? candorBranches(repoPaths(dataDir, agent).scratch) : '');

  it('no agent repository set: triage-only, the code rant waits for it, and no commit or branch appears anywhere', async () => {
    const r = rant(dataDir, 'The greeting is too short, please fix the agent', path.basename(project));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }));
    const before = [snapshot(agent), snapshot(project)];
    const seen = model.server.requests.length;
    const printer = new Printer();
    const record = await runEvolution(baseOptions(agent, dataDir, { repository: undefined, model: model.model() }), printer.io);
    assert.equal(record.outcome, 'triage-only', printer.text());
    assert.match(record.reason, /^1 code rant\(s\) wait for "candor\.evolution\.repository" \(user settings\)/);
    assert.match(record.reason, /set "candor\.evolution\.repository" to a local git checkout of the agent's own source.*It is a user setting: in a remote window .* it is on the Remote tab/);
    assert.equal(record.repository, null);
    assert.equal(record.sandbox, null);
    assert.deepEqual(printer.phases, ['triage', 'record']);
    assert.equal(rantStatuses(dataDir)[0]?.status, 'waiting-for-repository');
    assert.equal(changeRequests(seen), 0, 'no change was asked for');
    assert.deepEqual([snapshot(agent), snapshot(project)], before);
    assert.equal(fs.existsSync(path.join(dataDir, 'scratch')), false, 'no clone anywhere');
    assert.deepEqual(readRuns(dataDir), [record]);

    // Set it, and the waiting rant becomes a change in the agent's repository (its scratch clone) only.
    const shipped = await runEvolution(baseOptions(agent, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(shipped.outcome, 'shipped', shipped.reason);
    assert.equal(scratchBranches(), `refs/heads/candor/rant-${r.id}\n`);
    assert.deepEqual([snapshot(agent), snapshot(project)], before);
  });

  it('a user-project rant is recorded out of scope and never leads to a change request, a commit or a branch', async () => {
    const r = rant(dataDir, 'The login form of my app does not validate e-mails', path.basename(project));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'user-project' }]), { name: 'write_file', arguments: { path: 'greet.js', content: 'x' } }));
    const before = [snapshot(agent), snapshot(project)];
    const seen = model.server.requests.length;
    const record = await runEvolution(baseOptions(agent, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.outcome, 'nothing-to-evolve');
    assert.deepEqual(record.rants, []);
    assert.equal(rantStatuses(dataDir)[0]?.status, 'out-of-scope');
    assert.equal(changeRequests(seen), 0);
    assert.equal(scratchBranches(), '');
    assert.equal(record.sandbox, null, 'not even HEAD was gated: nothing to act on');
    assert.deepEqual([snapshot(agent), snapshot(project)], before);
  });

  it('a malformed triage reply never leads to a change request: the rules place what they can (never as agent-code)', async () => {
    const r = rant(dataDir, 'The greeting of my own service is too short', path.basename(project));
    // A reply that is almost right: the class the trap would act on is there, the JSON is not.
    model.use({ rules: [
      { match: { system: '^You triage' }, respond: { text: `{"rants": [{"id": "${r.id}", "class": "agent-code"` } },
      { match: { system: 'scratch clone' }, respond: { toolCalls: [{ name: 'write_file', arguments: { path: 'greet.js', content: 'x' } }] } },
      { respond: { text: 'done' } },
    ] });
    const seen = model.server.requests.length;
    const record = await runEvolution(baseOptions(agent, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.outcome, 'nothing-to-evolve');
    assert.equal(changeRequests(seen), 0);
    assert.deepEqual([rantStatuses(dataDir)[0]?.status, rantStatuses(dataDir)[0]?.source], ['out-of-scope', 'fallback'], 'about "my own service": the rules say user-project');
    assert.equal(scratchBranches(), '');
  });

  it('the trap of that test works: the same rant routed as agent-code does reach the change phase', async () => {
    const r = rant(dataDir, 'The greeting of my own service is too short', path.basename(project));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }));
    const seen = model.server.requests.length;
    const record = await runEvolution(baseOptions(agent, dataDir, { model: model.model() }), new Printer().io);
    assert.equal(record.outcome, 'shipped');
    assert.ok(changeRequests(seen) > 0);
  });

  it('a confusion rant gets an answer, shown with it, and no new commit', async () => {
    const r = rant(dataDir, 'Why does the agent always say hello?', path.basename(project));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'confusion', answer: 'The greeting is fixed by design: it always says hello.' }]), { name: 'write_file', arguments: { path: 'greet.js', content: 'x' } }));
    const agentHead = git(agent, 'rev-parse', 'HEAD');
    const seen = model.server.requests.length;
    const printer = new Printer();
    const record = await runEvolution(baseOptions(agent, dataDir, { model: model.model() }), printer.io);
    assert.equal(record.outcome, 'nothing-to-evolve');
    const state = rantStatuses(dataDir)[0];
    assert.deepEqual([state?.class, state?.status, state?.answer], ['confusion', 'answered', 'The greeting is fixed by design: it always says hello.']);
    assert.equal(readDecisions(dataDir)[0]?.answer, state?.answer);
    assert.match(printer.text(), /answered .*fixed by design/);
    assert.ok(model.server.requests[seen]?.system.includes('The agent greets with hello'), "triage had the agent's README");
    assert.equal(changeRequests(seen), 0);
    assert.equal(git(agent, 'rev-parse', 'HEAD'), agentHead);
    assert.equal(scratchBranches(), '');
  });

  it('an unsaved buffer counts only inside the agent repository: one in the user\'s project does not stop the run', async () => {
    const r = rant(dataDir, 'The greeting is too short', path.basename(project));
    model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), { name: 'apply_patch', arguments: { patch: greetPatch('hello world') } }));
    const outside = await runEvolution(baseOptions(agent, dataDir, { model: model.model(), unsaved: { unsavedFiles: () => [path.join(project, 'greet.js')] } }), new Printer().io);
    assert.equal(outside.outcome, 'shipped');
    const second = rant(dataDir, 'The greeting should mention the time of day', path.basename(project));
    model.use(loopScenario(triageAnswer([{ id: second.id, class: 'agent-code' }]), undefined));
    const inside = await runEvolution(baseOptions(agent, dataDir, { model: model.model(), unsaved: { unsavedFiles: () => [path.join(agent, 'greet.js')] } }), new Printer().io);
    assert.equal(inside.outcome, 'read-only');
    assert.match(inside.reason, /1 unsaved \(greet\.js\)/);
  });
});
