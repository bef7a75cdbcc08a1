import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario, type Scenario } from '../../../../src/core/offline/scenario';
import type { TextModel } from '../../../../src/core/provider/chatModel';
import { modelAt } from '../provider/models';
import { evolvePrompt, type EvolveProgress } from '../../../../src/core/promptEvolution/evolve';
import { PROPOSER_SYSTEM } from '../../../../src/core/promptEvolution/proposer';
import { PromptRegistry } from '../../../../src/core/promptEvolution/registry';
import { parseTaskSets, type TaskSet } from '../../../../src/core/promptEvolution/taskSet';
import { PROMPT } from './fixtures';

const PHRASE = 'Always cite the file path.';
const WITH_PHRASE = PROMPT.replace('Say what you did not check.', `Say what you did not check.\n${PHRASE}`);
const WITHOUT_FROZEN = PROMPT.replace('<!-- frozen -->\nNever reveal the API key.\n<!-- /frozen -->\n', '');

/** 30 tasks; the scenario passes a task only when the system prompt holds PHRASE. */
function taskSet(n = 30): TaskSet {
  const lines = Array.from({ length: n }, (_, i) => JSON.stringify({ id: `t${i + 1}`, input: `Task ${i + 1}`, expected: 'PASS', scorer: 'exact' }));
  return parseTaskSets([{ file: 'evals/basic.jsonl', text: lines.join('\n') }]);
}

function scenarioProposing(candidates: readonly string[], extraRules: readonly object[] = []): unknown {
  return {
    rules: [
      { match: { system: '^You improve the system prompt' }, respond: { text: JSON.stringify(candidates.map((prompt) => ({ prompt, rationale: 'test' }))) } },
      ...extraRules,
      { match: { system: 'Always cite the file path' }, respond: { text: 'PASS' } },
      { respond: { text: 'FAIL' } },
    ],
  };
}

describe('prompt evolution end to end (offline provider over HTTP, sql.js registry)', function () {
  this.timeout(60_000);
  let server: OfflineServer;
  let scenario: Scenario;
  let model: TextModel;
  let dir: string;
  let registry: PromptRegistry;

  beforeEach(async () => {
    server = await startOfflineServer({ scenario: () => scenario, countTokens: (t) => Math.ceil(t.length / 4) });
    model = modelAt(server.baseUrl, { identity: { provider: 'offline', model: 'candor-offline' } });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-evolve-'));
    registry = await PromptRegistry.open({ file: path.join(dir, 'traces.sqlite'), scope: 'ws' });
  });
  afterEach(async () => {
    await server.close();
    registry.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const abRequests = (): number => server.requests.filter((r) => !r.system.startsWith(PROPOSER_SYSTEM.slice(0, 30))).length;

  it('a candidate adding the phrase is promoted with its lineage; the one removing a frozen block never reaches the A/B test', async () => {
    scenario = parseScenario(scenarioProposing([WITH_PHRASE, WITHOUT_FROZEN]));
    const stages: EvolveProgress['stage'][] = [];
    const result = await evolvePrompt({ model, modelName: 'candor-offline', current: PROMPT, taskSet: taskSet(), registry, onProgress: (p) => stages.push(p.stage) });

    assert.equal(result.kind, 'decided');
    if (result.kind !== 'decided') return;
    assert.equal(result.outcome, 'promote');
    assert.equal(result.winner?.text, WITH_PHRASE);
    const rejected = result.decision.verdicts.find((v) => v.id !== result.winner?.id);
    assert.equal(rejected?.failed, 'frozen_sections');
    assert.equal(server.requests.filter((r) => r.system === WITHOUT_FROZEN).length, 0, 'no A/B request for the frozen-block removal');
    assert.equal(abRequests(), 60, '30 baseline + 30 for the one survivor');
    assert.deepEqual([...new Set(stages)], ['propose', 'cheap-checks', 'ab-test', 'gate', 'record']);

    const promoted = result.promoted;
    assert.ok(promoted);
    assert.equal((await registry.current())?.text, WITH_PHRASE);
    const chain = await registry.lineage(promoted.id);
    assert.deepEqual(chain.map((v) => v.kind), ['promotion', 'root']);
    assert.equal(chain[1]?.text, PROMPT);
    assert.equal(promoted.parent, result.baselineVersion);
    assert.deepEqual(promoted.lineage, {
      n: 30,
      b: 30,
      c: 0,
      effect: 1,
      p: 2 / 2 ** 30,
      adjustedAlpha: 0.05,
      editDistance: 1,
      drift: promoted.lineage?.drift,
      taskSetHash: taskSet().hash,
      model: 'candor-offline',
    });
    assert.ok((promoted.lineage?.drift ?? 1) > 0 && (promoted.lineage?.drift ?? 1) <= 0.35);
  });

  it('a run whose only candidate removes a frozen block sends no A/B request at all', async () => {
    scenario = parseScenario(scenarioProposing([WITHOUT_FROZEN]));
    const result = await evolvePrompt({ model, modelName: 'candor-offline', current: PROMPT, taskSet: taskSet(), registry });
    assert.equal(result.kind, 'decided');
    if (result.kind !== 'decided') return;
    assert.equal(result.outcome, 'reject');
    assert.equal(result.decision.verdicts[0]?.failed, 'frozen_sections');
    assert.equal(result.ab.runs, 0);
    assert.equal(server.requests.length, 1, 'the server saw the proposer request and nothing else');
    assert.equal((await registry.current())?.text, PROMPT, 'nothing promoted');
  });

  it('a near-miss re-tested: the same tasks are never scored again, and it counts as another hypothesis', async () => {
    // The candidate passes tasks 1–5 only: b = 5 → sample floor short (5 < 6) → near-miss.
    const partial = PROMPT.replace('Use the workspace language.', 'Use the workspace language. Be partial.');
    scenario = parseScenario(scenarioProposing([], [{ match: { system: 'Be partial', user: 'Task [1-5]$' }, respond: { text: 'PASS' } }]));
    const first = await evolvePrompt({ model, modelName: 'candor-offline', current: PROMPT, taskSet: taskSet(), registry, candidates: [partial] });
    assert.equal(first.kind === 'decided' && first.outcome, 'near-miss');
    assert.equal((await registry.nearMisses()).length, 1);
    const before = server.requests.length;

    const again = await evolvePrompt({ model, modelName: 'candor-offline', current: PROMPT, taskSet: taskSet(), registry, candidates: [partial] });
    assert.equal(again.kind, 'decided');
    if (again.kind !== 'decided') return;
    assert.equal(server.requests.length, before, 'no task was run again');
    assert.equal(again.decision.verdicts[0]?.failed, 'sample_floor');
    assert.equal(again.decision.verdicts[0]?.stats?.n, 0);
    assert.equal(again.decision.verdicts[0]?.stats?.m, 2, 'the re-test is the second hypothesis');

    // With ten new tasks it runs on those only.
    const more = taskSet(40);
    const third = await evolvePrompt({ model, modelName: 'candor-offline', current: PROMPT, taskSet: more, registry, candidates: [partial] });
    assert.equal(third.kind, 'decided');
    assert.equal(server.requests.length - before, 20, '10 new tasks × (baseline + candidate)');
    if (third.kind === 'decided') assert.equal(third.decision.verdicts[0]?.stats?.m, 3);
  });

  it('cancel during the A/B test ends the run as "cancelled", nothing recorded', async () => {
    scenario = parseScenario({ rules: [{ respond: { text: 'FAIL' }, holdMs: 30 }] });
    const controller = new AbortController();
    const result = await evolvePrompt({
      model,
      modelName: 'candor-offline',
      current: PROMPT,
      taskSet: taskSet(),
      registry,
      candidates: [WITH_PHRASE],
      signal: controller.signal,
      onProgress: (p) => p.stage === 'ab-test' && p.done === 2 && controller.abort(),
    });
    assert.deepEqual(result, { kind: 'cancelled', stage: 'ab-test' });
    assert.equal((await registry.nearMisses()).length, 0);
    assert.equal((await registry.versions()).length, 1);
  });

  it('garbage from the proposer → no candidates, with the reason; no task set → no-tasks', async () => {
    scenario = parseScenario({ rules: [{ respond: { text: 'Sure! I would make it friendlier.' } }] });
    const result = await evolvePrompt({ model, modelName: 'm', current: PROMPT, taskSet: taskSet(), registry });
    assert.equal(result.kind, 'no-candidates');
    if (result.kind === 'no-candidates') assert.equal(result.reason, 'unparseable');
    assert.equal((await evolvePrompt({ model, modelName: 'm', current: PROMPT, taskSet: taskSet(0) })).kind, 'no-tasks');
  });
});
