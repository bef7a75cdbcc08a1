import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { diskPromptFile, PROMPT_FILE, type PromptFilePort } from '../../../../src/core/prompt/promptFile';
import { dismissNearMiss, promoteNearMiss } from '../../../../src/core/promptEvolution/nearMiss';
import { PromptRegistry, type Evaluation } from '../../../../src/core/promptEvolution/registry';
import { checkFrozen } from '../../../../src/core/promptEvolution/textMetrics';
import { PROMPT, SMALL_EDIT } from './fixtures';

const STATS = { n: 30, b: 6, c: 1, effect: 0.1667, p: 0.125, adjustedAlpha: 0.025 };

describe('the review queue: re-test, Dismiss, Promote Anyway', () => {
  let dir: string;
  let workspace: string;
  let registry: PromptRegistry;
  let file: PromptFilePort;

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-nearmiss-'));
    workspace = path.join(dir, 'ws');
    fs.mkdirSync(path.join(workspace, '.candor'), { recursive: true });
    fs.writeFileSync(path.join(workspace, PROMPT_FILE), PROMPT);
    registry = await PromptRegistry.open({ file: path.join(dir, 'traces.sqlite'), scope: 'ws' });
    file = diskPromptFile(workspace);
  });
  afterEach(() => {
    registry.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A near-miss of `text` against the prompt in force, as a run records it. */
  async function nearMiss(candidateId: string, text: string, extra: Partial<Evaluation> = {}): Promise<string> {
    const baseline = await registry.ensureCurrent(fs.readFileSync(path.join(workspace, PROMPT_FILE), 'utf8'));
    await registry.recordEvaluations([{
      run: `run-${candidateId}`, candidateId, baselineVersion: baseline.id, text, verdict: 'near-miss', failed: 'confidence', tested: true,
      taskIds: ['t1', 't2'], checks: [], stats: STATS, taskSetHash: 'a'.repeat(64), model: 'm @ offline', ...extra,
    }]);
    return baseline.id;
  }
  const queue = async (): Promise<string[]> => (await registry.nearMisses()).map((e) => e.candidateId);
  const onDisk = (): string => fs.readFileSync(path.join(workspace, PROMPT_FILE), 'utf8');

  it('a re-test replaces the numbers shown; one that ends in a reject leaves the queue', async () => {
    await nearMiss('c-000000000001', SMALL_EDIT);
    await nearMiss('c-000000000001', SMALL_EDIT, { run: 'retest', stats: { ...STATS, n: 40 } });
    const [shown] = await registry.nearMisses();
    assert.deepEqual([shown?.run, shown?.stats?.n], ['retest', 40]);
    assert.deepEqual(await queue(), ['c-000000000001']);
    await nearMiss('c-000000000001', SMALL_EDIT, { run: 'retest-2', verdict: 'reject' });
    assert.deepEqual(await queue(), []);
  });

  it('Dismiss takes a candidate out of the queue; its history stays', async () => {
    const baseline = await nearMiss('c-000000000001', SMALL_EDIT);
    await nearMiss('c-000000000002', SMALL_EDIT.replace('Use the', 'Always use the'));
    const result = await dismissNearMiss(registry, 'c-000000000001');
    assert.equal(result.ok, true);
    assert.deepEqual(await queue(), ['c-000000000002']);
    assert.deepEqual(await registry.history('c-000000000001', baseline), { scoredTaskIds: ['t1', 't2'], tests: 1 });
    assert.deepEqual(await dismissNearMiss(registry, 'c-000000000001'), { ok: false, reason: 'no near-miss c-000000000001 in the review queue' });
    assert.equal(onDisk(), PROMPT, 'the prompt is untouched');
  });

  it('Promote Anyway writes the candidate and records a promotion whose lineage says a person overrode the gate', async () => {
    const baseline = await nearMiss('c-000000000001', SMALL_EDIT);
    const result = await promoteNearMiss(registry, file, 'c-000000000001');
    assert.equal(result.ok, true, result.ok ? '' : result.reason);
    assert.equal(onDisk(), SMALL_EDIT);
    const current = await registry.current();
    assert.deepEqual([current?.kind, current?.parent, current?.text], ['promotion', baseline, SMALL_EDIT]);
    assert.deepEqual(current?.lineage, { ...STATS, editDistance: 1, drift: current?.lineage?.drift, taskSetHash: 'a'.repeat(64), model: 'm @ offline', humanOverride: { failedCheck: 'confidence' } });
    assert.ok((current?.lineage?.drift ?? -1) > 0);
    assert.deepEqual(await queue(), [], 'an overridden candidate leaves the queue');
    // Read back by another registry on the same file: the override is in the stored lineage.
    const again = await PromptRegistry.open({ file: path.join(dir, 'traces.sqlite'), scope: 'ws' });
    assert.deepEqual((await again.lineage(current?.id ?? ''))[0]?.lineage?.humanOverride, { failedCheck: 'confidence' });
    again.close();
  });

  it('Promote Anyway needs the frozen-block check to pass', async () => {
    const tampered = PROMPT.replace('Never reveal the API key.', 'Reveal the API key when asked.');
    assert.equal(checkFrozen(PROMPT, tampered).kind, 'changed', 'the trap: the candidate rewrites a frozen block');
    await nearMiss('c-000000000001', tampered);
    const before = (await registry.versions()).length;
    const result = await promoteNearMiss(registry, file, 'c-000000000001');
    assert.equal(result.ok, false);
    assert.match(result.ok ? '' : result.reason, /frozen blocks .*\(changed\); Promote Anyway needs the frozen-block check to pass/);
    assert.equal(onDisk(), PROMPT);
    assert.equal((await registry.versions()).length, before);
    assert.deepEqual(await queue(), ['c-000000000001'], 'it stays in the queue');
  });

  it('a candidate tested against another prompt than the one in force is refused: re-test it first', async () => {
    await nearMiss('c-000000000001', SMALL_EDIT);
    fs.writeFileSync(path.join(workspace, PROMPT_FILE), `${PROMPT}One more line by hand.\n`);
    const result = await promoteNearMiss(registry, file, 'c-000000000001');
    assert.deepEqual(result, { ok: false, reason: 'c-000000000001 was tested against another prompt than the one in force; re-test it first' });
    assert.match(onDisk(), /One more line by hand/);
  });

  it('a write that fails is recorded as withdrawn; the prompt in force is unchanged', async () => {
    await nearMiss('c-000000000001', SMALL_EDIT);
    const refusing: PromptFilePort = { read: () => file.read(), write: async () => ({ ok: false, reason: 'the editor refused the edit' }) };
    const result = await promoteNearMiss(registry, refusing, 'c-000000000001');
    assert.deepEqual(result, { ok: false, reason: 'the editor refused the edit; the registry records the promotion as withdrawn' });
    const current = await registry.current();
    assert.deepEqual([current?.kind, current?.text], ['rollback', PROMPT]);
    assert.equal(onDisk(), PROMPT);
  });
});
