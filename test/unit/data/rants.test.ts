import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { readRants, saveRant, EmptyRantError } from '../../../src/core/rants';
import { isSafeId } from '../../../src/core/ids';

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
});
