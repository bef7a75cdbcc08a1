import * as assert from 'node:assert/strict';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario, type Scenario } from '../../../../src/core/offline/scenario';
import type { TextModel } from '../../../../src/core/provider/chatModel';
import { modelAt } from '../provider/models';
import { runAbTest, type AbProgress } from '../../../../src/core/promptEvolution/abTest';
import { Semaphore } from '../../../../src/core/promptEvolution/semaphore';
import type { EvalTask } from '../../../../src/core/promptEvolution/taskSet';
import { eventually } from '../sandbox/sandboxHelpers';

const countTokens = (text: string): number => Math.ceil(text.length / 4);
const tasks = (n: number): EvalTask[] => Array.from({ length: n }, (_, i) => ({ id: `t${i + 1}`, input: `Task ${i + 1}`, expected: 'PASS', scorer: 'exact' }));

/** Wraps a model to measure how many requests are in flight now and at most, and how many were started. */
function counting(model: TextModel): TextModel & { peak: number; active: number; started: number } {
  const wrapped = {
    peak: 0,
    active: 0,
    started: 0,
    async complete(...args: Parameters<TextModel['complete']>): Promise<string> {
      wrapped.started++;
      wrapped.active++;
      wrapped.peak = Math.max(wrapped.peak, wrapped.active);
      try {
        return await model.complete(...args);
      } finally {
        wrapped.active--;
      }
    },
  };
  return wrapped;
}

describe('prompt evolution A/B runner (real HTTP to the offline provider)', () => {
  let server: OfflineServer;
  let scenario: Scenario;
  let model: TextModel;

  beforeEach(async () => {
    server = await startOfflineServer({ scenario: () => scenario, countTokens });
    model = modelAt(server.baseUrl, { identity: { provider: 'offline', model: 'candor-offline' } });
  });
  afterEach(async () => server.close());

  const use = (json: unknown): void => {
    scenario = parseScenario(json);
  };

  it('runs baseline and candidates on the same tasks, same model, and pairs the scores', async () => {
    use({ rules: [{ match: { system: 'BE PRECISE' }, respond: { text: 'PASS' } }, { respond: { text: 'FAIL' } }] });
    const result = await runAbTest({ model, tasks: tasks(5), baseline: 'base', candidates: [{ id: 'good', text: 'base. BE PRECISE' }, { id: 'same', text: 'base, again' }] });
    assert.equal(result.kind, 'done');
    if (result.kind !== 'done') return;
    assert.deepEqual(result.pairs.get('good')?.map((p) => [p.taskId, p.baseline, p.candidate]), [['t1', 0, 1], ['t2', 0, 1], ['t3', 0, 1], ['t4', 0, 1], ['t5', 0, 1]]);
    assert.ok(result.pairs.get('same')?.every((p) => p.baseline === 0 && p.candidate === 0));
    assert.equal(server.requests.length, 15, 'one baseline request per task, shared by both candidates');
    assert.ok(server.requests.every((r) => r.model === 'candor-offline'));
    assert.deepEqual(server.requests.slice(0, 3).map((r) => r.system), ['base', 'base. BE PRECISE', 'base, again'], 'interleaved task by task');
  });

  for (const concurrency of [1, 4]) {
    it(`keeps at most ${concurrency} request(s) in flight and reports progress`, async () => {
      use({ rules: [{ respond: { text: 'PASS' }, holdMs: 15 }] });
      const counted = counting(model);
      const seen: AbProgress[] = [];
      const result = await runAbTest({ model: counted, tasks: tasks(8), baseline: 'b', candidates: [{ id: 'c', text: 'c' }], concurrency, onProgress: (p) => seen.push(p) });
      assert.equal(result.kind, 'done');
      assert.equal(counted.peak, concurrency);
      assert.deepEqual(seen.map((p) => p.done), Array.from({ length: 16 }, (_, i) => i + 1));
      assert.ok(seen.every((p) => p.total === 16));
    });
  }

  it('cancel stops the run: no further requests, kind "cancelled"', async () => {
    use({ rules: [{ respond: { text: 'PASS' }, holdMs: 20 }] });
    const controller = new AbortController();
    const counted = counting(model);
    const result = await runAbTest({
      model: counted,
      tasks: tasks(20),
      baseline: 'b',
      candidates: [{ id: 'c', text: 'c' }],
      concurrency: 2,
      signal: controller.signal,
      onProgress: (p) => p.done === 3 && controller.abort(),
    });
    assert.equal(result.kind, 'cancelled');
    // Once nothing is in flight, nothing more can start: a runner that went on would start the next as each one ended.
    assert.ok(await eventually(() => counted.active === 0, 30_000), 'the requests in flight ended');
    assert.ok(counted.started <= 6, `${counted.started} requests after cancelling at 3 of 40`);
    assert.equal(server.requests.length, counted.started);
  });

  it('a failed request drops that task from the pairs and is reported', async () => {
    use({ rules: [{ match: { user: 'Task 2$', system: 'cand' }, respond: { error: { status: 400, message: 'bad' } } }, { respond: { text: 'PASS' } }] });
    const result = await runAbTest({ model, tasks: tasks(3), baseline: 'base', candidates: [{ id: 'c', text: 'cand' }] });
    assert.equal(result.kind, 'done');
    if (result.kind !== 'done') return;
    assert.deepEqual(result.pairs.get('c')?.map((p) => p.taskId), ['t1', 't3']);
    assert.equal(result.failures.length, 1);
    assert.deepEqual([result.failures[0]?.taskId, result.failures[0]?.arm], ['t2', 'c']);
  });

  it('a candidate is never run again on a task it was already scored on', async () => {
    use({ rules: [{ respond: { text: 'PASS' } }] });
    const result = await runAbTest({ model, tasks: tasks(4), baseline: 'base', candidates: [{ id: 'c', text: 'cand' }], alreadyScored: new Map([['c', new Set(['t1', 't2'])]]) });
    assert.equal(result.kind, 'done');
    assert.deepEqual(server.requests.map((r) => `${r.system}:${r.lastUser}`), ['base:Task 3', 'cand:Task 3', 'base:Task 4', 'cand:Task 4']);
  });

  it('the semaphore hands slots over first come, first served', async () => {
    const semaphore = new Semaphore(1);
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((n) => semaphore.run(async () => order.push(n))));
    assert.deepEqual(order, [1, 2, 3]);
    assert.throws(() => new Semaphore(0), RangeError);
  });
});
