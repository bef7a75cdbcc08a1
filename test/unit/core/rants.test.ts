import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readRants, saveRant, EmptyRantError } from '../../../src/core/rants';
import { isSafeId } from '../../../src/core/ids';
import { rantStatuses } from '../../../src/core/evolution/triage';
import { gatherEvidence } from '../../../src/core/promptEvolution/evidence';
import { PromptRegistry } from '../../../src/core/promptEvolution/registry';

describe('rants.jsonl', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-rants-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a rant is one line with the contract fields, its text exactly as typed', () => {
    const text = '  the gauge lied to me <script>alert(1)</script> 😤\n twice  ';
    const rant = saveRant(dir, { text, project: 'demo', session: 'abc' }, () => new Date('2026-11-30T10:00:00Z'));
    const lines = fs.readFileSync(path.join(dir, 'rants.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 1);
    const stored = JSON.parse(lines[0] ?? '');
    assert.deepEqual(Object.keys(stored).sort(), ['id', 'project', 'session', 'text', 'ts', 'v']);
    assert.equal(stored.v, 1);
    assert.equal(stored.ts, '2026-11-30T10:00:00.000Z');
    assert.equal(stored.text, text, 'nothing is filtered at capture');
    assert.equal(stored.session, 'abc');
    assert.ok(isSafeId(rant.id) && rant.id === rant.id.toLowerCase(), 'a lowercase id, safe in a branch name');
    execFileSync('git', ['check-ref-format', `refs/heads/candor/rant-${rant.id}`]);
  });

  it('an empty rant is refused with a kind, and nothing is written', () => {
    assert.throws(() => saveRant(dir, { text: '   ', project: 'p', session: null }), EmptyRantError);
    assert.equal(fs.existsSync(path.join(dir, 'rants.jsonl')), false);
  });

  it('a corrupt line is skipped and counted; the others are read', () => {
    saveRant(dir, { text: 'one', project: 'p', session: null });
    fs.appendFileSync(path.join(dir, 'rants.jsonl'), '{not json\n');
    saveRant(dir, { text: 'two', project: 'p', session: null });
    const { rants, skipped } = readRants(dir);
    assert.deepEqual(rants.map((r) => r.text), ['one', 'two']);
    assert.equal(skipped, 1);
  });

  describe('two rants saved in the same millisecond list in the order they were saved (1,000 tries)', () => {
    // Tried: both rants get the same `ts` from a fixed clock, so the order can only come from the ids. With ids
    // random within a millisecond, about half of these tries listed the second rant first.
    const sameMillisecond = (): Date => new Date('2026-11-30T10:00:00.123Z');
    const TRIES = 1000;
    const file = (): string => path.join(dir, 'rants.jsonl');
    // Every save fsyncs: on tmpfs, where that is free, 4,000 saves take a second instead of twenty.
    beforeEach(() => {
      fs.rmSync(dir, { recursive: true, force: true });
      dir = fs.mkdtempSync(path.join(fs.existsSync('/dev/shm') ? '/dev/shm' : os.tmpdir(), 'candor-rants-'));
    });

    it('through readRants, and rantStatuses (the Rants list and triage)', () => {
      for (let i = 0; i < TRIES; i++) {
        fs.rmSync(file(), { force: true });
        const first = saveRant(dir, { text: `first ${i}`, project: 'p', session: null }, sameMillisecond);
        const second = saveRant(dir, { text: `second ${i}`, project: 'p', session: null }, sameMillisecond);
        assert.ok(first.id < second.id, `try ${i}: ids ${first.id} then ${second.id}`);
        assert.deepEqual(readRants(dir).rants.map((r) => r.text), [`first ${i}`, `second ${i}`]);
        assert.deepEqual(rantStatuses(dir).map((s) => s.rant.text), [`first ${i}`, `second ${i}`], `try ${i}`);
      }
    });

    it('through the prompt review\'s evidence (gatherEvidence), which reads them through triage', async function () {
      this.timeout(60_000);
      const registry = await PromptRegistry.open({ file: path.join(dir, 'traces.sqlite'), scope: 'ws' });
      try {
        for (let i = 0; i < TRIES; i++) {
          fs.rmSync(file(), { force: true });
          fs.rmSync(path.join(dir, 'triage.jsonl'), { force: true });
          const saved = [saveRant(dir, { text: `first ${i}`, project: 'one', session: null }, sameMillisecond), saveRant(dir, { text: `second ${i}`, project: 'two', session: null }, sameMillisecond)];
          const decisions = saved.map((r) => JSON.stringify({ v: 1, rant: r.id, ts: sameMillisecond().toISOString(), class: 'agent-behaviour', duplicateOf: null, status: 'routed-to-prompt', source: 'model' }));
          fs.writeFileSync(path.join(dir, 'triage.jsonl'), `${decisions.join('\n')}\n`);
          assert.deepEqual((await gatherEvidence(dir, registry)).rants, [`first ${i}`, `second ${i}`], `try ${i}`);
        }
      } finally {
        registry.close();
      }
    });
  });
});
