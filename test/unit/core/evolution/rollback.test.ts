// Automatic rollback: a Candor change that breaks the gate is reverted as a
// ready branch, however it was merged. Real repositories, built here.
import * as assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runEvolution } from '../../../../src/core/evolution/pipeline';
import { repoPaths } from '../../../../src/core/evolution/paths';
import { gateKey, markGated } from '../../../../src/core/evolution/record';
import { candorCommits, MAX_FIRST_PARENTS } from '../../../../src/core/evolution/rollback';
import { commitMessage } from '../../../../src/core/evolution/ship';
import type { EvolutionRecord } from '../../../../src/core/evolution/record';
import { FIXTURE_ENV, Printer, ScriptedModel, baseOptions, git, loopScenario, rant, removeTempDirs, snapshot, tempDir, triageAnswer, workspaceRepo, write, skipUnlessSandbox } from './helpers';

const RANT_A = '01aaaaaaaaaaaaaaaaaaaaaaaa';
const RANT_B = '01bbbbbbbbbbbbbbbbbbbbbbbb';
const BREAK = "module.exports = () => 'bye';\n";

describe('automatic rollback for every merge shape', () => {
  before(async function () {
    await skipUnlessSandbox(this);
  });
  let agent: string;
  let dataDir: string;
  let base: string;

  beforeEach(() => {
    agent = workspaceRepo();
    dataDir = tempDir('candor-data-');
    base = head();
    // The newest commit known to pass: recorded under the gate the runs use.
    markGated(repoPaths(dataDir, agent).gated, base, gateKey(baseOptions(agent, dataDir)));
  });
  afterEach(() => removeTempDirs());

  const head = (): string => git(agent, 'rev-parse', 'HEAD').trim();
  const commit = (files: Record<string, string>, message: string): string => {
    for (const [name, content] of Object.entries(files)) write(agent, name, content);
    git(agent, 'add', '-A');
    git(agent, 'commit', '-q', '-m', message);
    return head();
  };
  const candor = (files: Record<string, string>, rantId: string, subject = 'candor: shorter greeting'): string => commit(files, `${subject}\n\nAddresses a rant.\n\nCandor-Rant: ${rantId}`);
  const scratch = (...args: string[]): string => git(repoPaths(dataDir, agent).scratch, ...args);
  const run = async (printer = new Printer()): Promise<EvolutionRecord> => runEvolution(baseOptions(agent, dataDir), printer.io);
  const trailers = (sha: string): string[] => scratch('log', '-1', '--format=%(trailers:key=Candor-Revert,valueonly)', sha).trim().split('\n').filter(Boolean);

  /** The outcome every shape must reach: a branch on HEAD whose tree passes, with one trailer per reverted commit. */
  function assertPrepared(record: EvolutionRecord, reverted: readonly string[], printer?: Printer): void {
    const top = head();
    assert.equal(record.outcome, 'revert-prepared', `${record.reason}\n${printer?.text() ?? ''}`);
    assert.equal(record.branch, `candor/revert-${top.slice(0, 12)}`);
    assert.equal(scratch('rev-parse', `refs/heads/${record.branch}`).trim(), record.commit);
    assert.equal(scratch('rev-parse', `${record.commit}^`).trim(), top, 'the revert sits on HEAD');
    assert.deepEqual(trailers(record.commit ?? ''), reverted);
    assert.equal(scratch('show', `${record.commit}:greet.js`), "module.exports = () => 'hello';\n");
    assert.equal(record.gate?.passed, true);
    assert.equal(scratch('status', '--porcelain').trim(), '', 'the clone is left clean');
  }

  it('the trap: a Candor commit that breaks the tests, fast-forwarded, makes HEAD fail', () => {
    candor({ 'greet.js': BREAK }, RANT_A);
    const result = spawnSync('node', ['test.js'], { cwd: agent, encoding: 'utf8' });
    assert.notEqual(result.status, 0);
  });

  it('fast-forward: the Candor commit is HEAD', async () => {
    const c = candor({ 'greet.js': BREAK }, RANT_A);
    const before = snapshot(agent);
    const printer = new Printer();
    const record = await run(printer);
    assertPrepared(record, [c], printer);
    assert.deepEqual(record.rants, [RANT_A]);
    assert.deepEqual(printer.phases, ['triage', 'scratch clone', 'gate HEAD', 'revert', 'ship', 'record']);
    assert.equal(scratch('rev-parse', `${record.commit}^{tree}`).trim(), git(agent, 'rev-parse', `${base}^{tree}`).trim());
    assert.deepEqual(snapshot(agent), before, 'the agent repository is untouched');
    // The prepared revert is known to pass: taken and merged, the next run does not gate again.
    git(agent, 'fetch', '-q', repoPaths(dataDir, agent).scratch, `${record.branch}:${record.branch}`);
    git(agent, 'merge', '-q', '--ff-only', record.branch ?? '');
    const next = new Printer();
    assert.equal((await run(next)).outcome, 'nothing-to-evolve');
    assert.match(next.text(), /passed the gate before/);
  });

  it('--no-ff: the Candor commit is the merge\'s second parent; the human work on main stays', async () => {
    git(agent, 'checkout', '-q', '-b', `candor/rant-${RANT_A}`);
    const c = candor({ 'greet.js': BREAK }, RANT_A);
    git(agent, 'checkout', '-q', 'main');
    commit({ 'NOTES.md': 'human work\n' }, 'notes');
    git(agent, 'merge', '-q', '--no-ff', '--no-edit', `candor/rant-${RANT_A}`);
    assert.equal(git(agent, 'rev-list', '--parents', '-n', '1', 'HEAD').trim().split(' ').length, 3, 'HEAD is a merge');
    const record = await run();
    assertPrepared(record, [c]);
    assert.equal(scratch('show', `${record.commit}:NOTES.md`), 'human work\n');
  });

  it('--no-ff of a Candor commit that passed on its own (as shipped) but fails with the human work beside it', async () => {
    git(agent, 'checkout', '-q', '-b', `candor/rant-${RANT_A}`);
    const c = candor({ 'greet.js': "module.exports = () => 'hello world';\n" }, RANT_A, 'candor: longer greeting');
    // Candor records a shipped commit as passing: it is the newest pass, and not on main's first-parent chain.
    markGated(repoPaths(dataDir, agent).gated, c, gateKey(baseOptions(agent, dataDir)));
    git(agent, 'checkout', '-q', 'main');
    commit({ 'test.js': "require('assert').equal(require('./greet')(), 'hello');\n" }, 'human: exact greeting');
    git(agent, 'merge', '-q', '--no-ff', '--no-edit', `candor/rant-${RANT_A}`);
    const record = await run();
    assertPrepared(record, [c]);
    assert.equal(scratch('show', `${record.commit}:test.js`), "require('assert').equal(require('./greet')(), 'hello');\n", 'the human change stays');
  });

  it('squash: the trailer kept inside the squashed message (indented, as git writes it)', async () => {
    git(agent, 'checkout', '-q', '-b', 'feature');
    candor({ 'greet.js': BREAK }, RANT_A);
    git(agent, 'checkout', '-q', 'main');
    git(agent, 'merge', '-q', '--squash', 'feature');
    git(agent, 'commit', '-q', '--no-edit');
    const squashed = head();
    assert.match(git(agent, 'log', '-1', '--format=%B'), new RegExp(`^ +Candor-Rant: ${RANT_A}$`, 'm'));
    const record = await run();
    assertPrepared(record, [squashed]);
    assert.deepEqual(record.rants, [RANT_A]);
  });

  it('a Candor commit with two human commits on top', async () => {
    const c = candor({ 'greet.js': BREAK }, RANT_A);
    commit({ 'a.txt': 'a\n' }, 'human a');
    commit({ 'b.txt': 'b\n' }, 'human b');
    const record = await run();
    assertPrepared(record, [c]);
    assert.equal(scratch('show', `${record.commit}:a.txt`), 'a\n');
    assert.equal(scratch('show', `${record.commit}:b.txt`), 'b\n');
  });

  it('reverts newest first, re-gating after each, until the gate passes: two commits, two trailers', async () => {
    const breaking = candor({ 'greet.js': BREAK }, RANT_A);
    const harmless = candor({ 'extra.js': '// more\n' }, RANT_B, 'candor: add extra');
    const printer = new Printer();
    const record = await run(printer);
    assertPrepared(record, [harmless, breaking], printer);
    assert.deepEqual(record.rants, [RANT_B, RANT_A]);
    assert.equal(printer.lines.filter((line) => /^ {2}reverted /.test(line)).length, 2);
    assert.match(printer.text(), new RegExp(`reverted ${harmless.slice(0, 12)} .*: gate test failed[\\s\\S]*reverted ${breaking.slice(0, 12)} .*: gate passed`));
  });

  it('an already reverted Candor commit is skipped', async () => {
    const first = candor({ 'greet.js': "module.exports = () => 'hello there';\n" }, RANT_A, 'candor: longer greeting');
    git(agent, 'revert', '--no-edit', first);
    const second = candor({ 'greet.js': BREAK }, RANT_B);
    const printer = new Printer();
    const record = await run(printer);
    assertPrepared(record, [second], printer);
    assert.doesNotMatch(printer.text(), new RegExp(`reverted ${first.slice(0, 12)}`));
  });

  it('a conflicting revert ends the run with an error naming the commit; nothing is prepared', async () => {
    const c = candor({ 'greet.js': BREAK }, RANT_A);
    commit({ 'greet.js': "module.exports = () => 'bye bye';\n" }, 'human edit of the same line');
    const record = await run();
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, new RegExp(`reverting ${c.slice(0, 12)} \\(candor: shorter greeting\\) conflicts`));
    assert.equal(record.branch, null);
    assert.equal(scratch('branch', '--list', 'candor/*').trim(), '');
    assert.equal(scratch('status', '--porcelain').trim(), '', 'the unfinished revert is cleaned up');
  });

  it('HEAD still failing with every Candor commit reverted is not Candor\'s failure: error, nothing prepared', async () => {
    candor({ 'extra.js': '// more\n' }, RANT_A, 'candor: add extra');
    commit({ 'test.js': 'process.exit(1);\n' }, 'human breaks the tests');
    const record = await run();
    assert.equal(record.outcome, 'error');
    assert.match(record.reason, /HEAD fails its own tests, and not because of a Candor change/);
    assert.equal(scratch('branch', '--list', 'candor/*').trim(), '');
  });

  it('a range with no Candor commit (one lies before the newest passing commit) is an error', async () => {
    // A Candor commit that passed, then a human commit that breaks: only the latter is after B.
    const model = await ScriptedModel.start();
    try {
      candor({ 'greet.js': "module.exports = () => 'hello there';\n" }, RANT_A, 'candor: longer greeting');
      markGated(repoPaths(dataDir, agent).gated, head(), gateKey(baseOptions(agent, dataDir)));
      commit({ 'test.js': 'process.exit(1);\n' }, 'human breaks the tests');
      const r = rant(dataDir, 'The greeting is wrong', 'p');
      model.use(loopScenario(triageAnswer([{ id: r.id, class: 'agent-code' }]), undefined));
      const record = await runEvolution(baseOptions(agent, dataDir, { model: model.model() }), new Printer().io);
      assert.equal(record.outcome, 'error');
      assert.match(record.reason, /not because of a Candor change \(none after [0-9a-f]{12}, the newest commit known to pass\)/);
      assert.equal(scratch('branch', '--list', 'candor/*').trim(), '');
    } finally {
      await model.close();
    }
  });

  it(`no passing commit among the newest ${MAX_FIRST_PARENTS} first parents is an error; one within reach is used`, async () => {
    // 1,001 commits on top of the passing root, then the Candor commit that breaks.
    const stream: string[] = [];
    let time = 1_700_000_000;
    for (let i = 0; i <= MAX_FIRST_PARENTS; i++) {
      const data = `${i}\n`;
      stream.push(`commit refs/heads/main\ncommitter Fixture <f@example.invalid> ${time++} +0000\ndata 6\nfiller\n${i === 0 ? `from ${base}\n` : ''}M 644 inline counter.txt\ndata ${Buffer.byteLength(data)}\n${data}\n`);
    }
    const imported = spawnSync('git', ['fast-import', '--quiet'], { cwd: agent, env: FIXTURE_ENV, input: stream.join('') });
    assert.equal(imported.status, 0, imported.stderr.toString());
    git(agent, 'reset', '-q', '--hard', 'main');
    const c = candor({ 'greet.js': BREAK }, RANT_A);
    assert.equal(git(agent, 'rev-list', '--first-parent', '--count', `${base}..HEAD`).trim(), String(MAX_FIRST_PARENTS + 2));
    const far = await run();
    assert.equal(far.outcome, 'error');
    assert.match(far.reason, /no earlier commit is known to pass \(none of the newest 1000 on its first-parent chain\); nothing reverted$/);

    markGated(repoPaths(dataDir, agent).gated, git(agent, 'rev-parse', `HEAD~${MAX_FIRST_PARENTS - 1}`).trim(), gateKey(baseOptions(agent, dataDir)));
    assertPrepared(await run(), [c]);
  });

  it("the model's own words cannot declare a Candor commit reverted: trailer-like lines of its summary are quoted", () => {
    const earlier = candor({ 'greet.js': BREAK }, RANT_A);
    const summary = `Done.\nThis reverts commit ${earlier}.\nCandor-Revert: ${earlier}`;
    const r = { v: 1 as const, id: RANT_B, ts: '2026-01-01T00:00:00.000Z', text: 'make it nicer', project: 'p', session: null };
    const log = (): string => git(agent, 'log', '--topo-order', '--format=%H%x00%P%x00%B%x1e', `${base}..HEAD`);
    // The trap: the same words unquoted hide the earlier commit (and this one) from the rollback.
    const raw = commit({ 'x.txt': '1\n' }, `candor: nicer\n\n${summary}\n\nCandor-Rant: ${RANT_B}`);
    assert.deepEqual(candorCommits(log()).map((c) => c.sha), []);
    git(agent, 'reset', '-q', '--hard', earlier);
    assert.notEqual(head(), raw);
    const quoted = commit({ 'x.txt': '2\n' }, commitMessage({ rant: r, class: 'agent-code', summary }));
    assert.deepEqual(candorCommits(log()).map((c) => c.sha), [quoted, earlier]);
    assert.match(git(agent, 'log', '-1', '--format=%B'), /^> This reverts commit /m);
  });
});
