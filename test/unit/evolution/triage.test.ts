import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { classifyByRules, parseTriageReply } from '../../../src/core/evolution/classify';
import { dismissRant, rantStatuses, readDecisions, triage } from '../../../src/core/evolution/triage';
import { isDuplicateText, jaccard, tokens } from '../../../src/core/evolution/similarity';
import { appendRun } from '../../../src/core/evolution/record';
import type { TextModel } from '../../../src/core/provider/chatModel';
import { ScriptedModel, rant, removeTempDirs, tempDir, triageAnswer } from './helpers';

const at = (minute: number): Date => new Date(Date.UTC(2026, 0, 1, 0, minute));
const failingModel: TextModel = { complete: async () => Promise.reject(new Error('connection refused')) };
const fixedModel = (reply: string): TextModel => ({ complete: async () => reply });

describe('triage', () => {
  let dataDir: string;
  beforeEach(() => {
    dataDir = tempDir('candor-triage-');
  });
  afterEach(() => removeTempDirs());

  it('similarity: token-set Jaccard after lowercasing and stripping punctuation', () => {
    assert.deepEqual([...tokens('The SAVE button, it crashes!!')].sort(), ['button', 'crashes', 'it', 'save', 'the']);
    assert.equal(jaccard(tokens('a b c d'), tokens('a b c d e')), 0.8);
    assert.ok(isDuplicateText('The save button crashes the app!', 'the save button crashes the app'));
    assert.ok(!isDuplicateText('The save button crashes the app', 'The load button hangs the app'));
  });

  it('dedupes: a repeat points at the rant it repeats (same project only), and is never picked', async () => {
    const original = rant(dataDir, 'The save button crashes the whole app!', 'p', at(1));
    const repeat = rant(dataDir, 'the save button crashes the whole app', 'p', at(2));
    const otherProject = rant(dataDir, 'The save button crashes the whole app', 'q', at(3));
    const repeatOfRepeat = rant(dataDir, 'THE SAVE BUTTON CRASHES THE WHOLE APP.', 'p', at(4));
    const result = await triage(dataDir, { project: 'p', model: failingModel });
    const byRant = new Map(result.decisions.map((d) => [d.rant, d]));
    assert.equal(byRant.get(repeat.id)?.status, 'duplicate');
    assert.equal(byRant.get(repeat.id)?.duplicateOf, original.id);
    assert.equal(byRant.get(repeat.id)?.class, 'bug', 'a duplicate carries its original class');
    assert.equal(byRant.get(repeatOfRepeat.id)?.duplicateOf, original.id);
    assert.equal(byRant.get(otherProject.id)?.status, 'triaged');
    assert.equal(result.picked?.rant.id, original.id);

    // A later repeat of an already-triaged rant is caught too.
    const late = rant(dataDir, 'the save button crashes the whole app!!!', 'p', at(5));
    const again = await triage(dataDir, { project: 'p', model: failingModel });
    assert.deepEqual(again.decisions.map((d) => [d.rant, d.duplicateOf]), [[late.id, original.id]]);
  });

  it("uses the model's classification over real HTTP (source: model) and keeps its note", async () => {
    const model = await ScriptedModel.start();
    try {
      const a = rant(dataDir, 'I never know which model is active', 'p', at(1));
      const b = rant(dataDir, 'meh', 'p', at(2));
      model.use({ rules: [{ match: { system: 'strict JSON' }, respond: { text: '```json\n' + triageAnswer([{ id: a.id, class: 'confusion', note: 'show the model name' }]) + '\n```' } }] });
      const result = await triage(dataDir, { project: 'p', model: model.model() });
      const byRant = new Map(result.decisions.map((d) => [d.rant, d]));
      assert.deepEqual([byRant.get(a.id)?.class, byRant.get(a.id)?.source, byRant.get(a.id)?.note], ['confusion', 'model', 'show the model name']);
      assert.deepEqual([byRant.get(b.id)?.class, byRant.get(b.id)?.source], ['noise', 'fallback'], 'a rant the model left out falls back');
      assert.match(model.server.requests[0]?.lastUser ?? '', new RegExp(a.id));
    } finally {
      await model.close();
    }
  });

  it('falls back to the rules when the model is unreachable, silent, or answers garbage', async () => {
    const r = rant(dataDir, 'Why does compaction happen so early?', 'p', at(1));
    for (const model of [failingModel, fixedModel(''), fixedModel('{"rants":[{"id":"' + r.id + '","class":"urgent"}]}'), fixedModel('not json at all'), undefined]) {
      const ids = new Set([r.id]);
      const reply = model === undefined ? '' : await model.complete([]).catch(() => '');
      assert.equal(parseTriageReply(reply, ids).size, 0);
    }
    const result = await triage(dataDir, { project: 'p', model: fixedModel('garbage') });
    assert.deepEqual([result.decisions[0]?.class, result.decisions[0]?.source], ['confusion', 'fallback']);
  });

  it('the keyword rules: bug, confusion, request, noise', () => {
    assert.equal(classifyByRules('The export crashes with a stack trace').class, 'bug');
    assert.equal(classifyByRules('It does not work when offline').class, 'bug');
    assert.equal(classifyByRules('What does the gauge colour mean?').class, 'confusion');
    assert.equal(classifyByRules('Please add a dark theme for the chat').class, 'request');
    assert.equal(classifyByRules('ugh').class, 'noise');
    assert.equal(classifyByRules('this is so annoying today').class, 'noise');
  });

  it('picks at most one: bug before confusion before request, oldest first; not noise, acted, dismissed or of another project', async () => {
    const request = rant(dataDir, 'Please add a button for exporting', 'p', at(1));
    const confusion = rant(dataDir, 'What does the drift view show?', 'p', at(2));
    const newerBug = rant(dataDir, 'The gauge crashes after a reload', 'p', at(4));
    const olderBug = rant(dataDir, 'Sessions are lost when the window reloads, a bug', 'p', at(3));
    rant(dataDir, 'Everything crashes all the time here', 'q', at(0));
    rant(dataDir, 'ugh', 'p', at(0));
    const first = await triage(dataDir, { project: 'p', model: failingModel });
    assert.equal(first.picked?.rant.id, olderBug.id);
    assert.ok(dismissRant(dataDir, olderBug.id));
    assert.equal((await triage(dataDir, { project: 'p' })).picked?.rant.id, newerBug.id);
    fs.appendFileSync(path.join(dataDir, 'triage.jsonl'), `${JSON.stringify({ v: 1, rant: newerBug.id, ts: at(9).toISOString(), class: 'bug', duplicateOf: null, status: 'acted', source: 'model', branch: `candor/rant-${newerBug.id}`, commit: 'abc' })}\n`);
    assert.equal((await triage(dataDir, { project: 'p' })).picked?.rant.id, confusion.id);
    // Two runs that ended without a change: the rant is not picked a third time.
    for (let i = 0; i < 2; i++) appendRun(dataDir, { v: 1, run: `r${i}`, ts: '', ended: '', rants: [confusion.id], outcome: 'nothing-to-evolve', reason: '', branch: null, commit: null, diffstat: null, gate: null, sandbox: null });
    assert.equal((await triage(dataDir, { project: 'p' })).picked?.rant.id, request.id);
  });

  it('rantStatuses: new, duplicate, triaged, acted (with commit and branch), dismissed; rants.jsonl is never rewritten', async () => {
    const a = rant(dataDir, 'The gauge is wrong after a switch', 'p', at(1));
    const dup = rant(dataDir, 'the gauge is wrong after a switch!', 'p', at(2));
    const c = rant(dataDir, 'Please make the log quieter', 'p', at(3));
    const rantsBefore = fs.readFileSync(path.join(dataDir, 'rants.jsonl'), 'utf8');
    assert.deepEqual(rantStatuses(dataDir).map((s) => s.status), ['new', 'new', 'new']);
    await triage(dataDir, { project: 'p' });
    fs.appendFileSync(path.join(dataDir, 'triage.jsonl'), `${JSON.stringify({ v: 1, rant: a.id, ts: at(9).toISOString(), class: 'bug', duplicateOf: null, status: 'acted', source: 'model', branch: `candor/rant-${a.id}`, commit: 'c0ffee' })}\n`);
    dismissRant(dataDir, c.id);
    const rantAfter = rant(dataDir, 'Something entirely different happens', 'p', at(10));
    const states = new Map(rantStatuses(dataDir).map((s) => [s.rant.id, s]));
    assert.deepEqual([states.get(a.id)?.status, states.get(a.id)?.commit, states.get(a.id)?.branch], ['acted', 'c0ffee', `candor/rant-${a.id}`]);
    assert.deepEqual([states.get(dup.id)?.status, states.get(dup.id)?.duplicateOf], ['duplicate', a.id]);
    assert.deepEqual([states.get(c.id)?.status, states.get(c.id)?.class, states.get(c.id)?.source], ['dismissed', 'request', 'fallback']);
    assert.equal(states.get(rantAfter.id)?.status, 'new');
    assert.ok(fs.readFileSync(path.join(dataDir, 'rants.jsonl'), 'utf8').startsWith(rantsBefore));
    assert.equal(dismissRant(dataDir, 'no-such-rant'), false);
    for (const d of readDecisions(dataDir)) {
      assert.equal(d.v, 1);
      assert.ok(d.source === 'model' || d.source === 'fallback', `source ${String(d.source)}`);
      for (const key of ['rant', 'ts', 'class', 'duplicateOf', 'status']) assert.ok(key in d, key);
    }
  });
});
