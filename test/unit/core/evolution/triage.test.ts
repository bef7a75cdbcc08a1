import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseTriageReply, triageSystemPrompt } from '../../../../src/core/evolution/classify';
import { classifyByRules, readmeAnswer } from '../../../../src/core/evolution/fallback';
import { dismissRant, rantStatuses, readDecisions, triage } from '../../../../src/core/evolution/triage';
import { jaccard, tokens } from '../../../../src/core/evolution/similarity';
import { appendRun } from '../../../../src/core/evolution/record';
import type { TextModel } from '../../../../src/core/provider/chatModel';
import { ScriptedModel, rant, removeTempDirs, tempDir } from './helpers';
import { isDuplicateText } from '../../../helpers/core';

const at = (minute: number): Date => new Date(Date.UTC(2026, 0, 1, 0, minute));
const failingModel: TextModel = { complete: async () => Promise.reject(new Error('connection refused')) };
const fixedModel = (reply: string): TextModel => ({ complete: async () => reply });
const answer = (entries: Array<Record<string, string>>): string => JSON.stringify({ rants: entries });

const README = [
  '# Candor',
  '',
  '## The gauge',
  'The status bar gauge shows the context used: anchored to the provider count, or estimated. Its warning colour means usage was lost.',
  '',
  '## Evolution',
  'Evolution changes only the agent repository set in candor.evolution.repository.',
].join('\n');

describe('triage: every rant is classified and routed', () => {
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

  it('routes each class the model gives: agent-code queued, agent-behaviour to the prompt, user-project out of scope, confusion answered, unclear new', async () => {
    const model = await ScriptedModel.start();
    try {
      const code = rant(dataDir, 'The gauge never updates after a model switch', 'web-app', at(1));
      const behaviour = rant(dataDir, 'Your answers are far too long', 'web-app', at(2));
      const project = rant(dataDir, 'The login form of this app does not validate e-mails', 'web-app', at(3));
      const confusion = rant(dataDir, 'Why is the gauge yellow?', 'cli-tool', at(4));
      const unclear = rant(dataDir, 'meh, whatever', 'cli-tool', at(5));
      model.use({ rules: [{ match: { system: '^You triage' }, respond: { text: '```json\n' + answer([
        { id: code.id, class: 'agent-code', note: 'refresh the gauge on switch' },
        { id: behaviour.id, class: 'agent-behaviour', note: 'shorter answers' },
        { id: project.id, class: 'user-project', note: "the user's login form" },
        { id: confusion.id, class: 'confusion', note: 'gauge colour', answer: 'Yellow means the provider stopped reporting usage; the count is estimated until it reports again.' },
        { id: unclear.id, class: 'unclear' },
      ]) + '\n```' } }] });
      const result = await triage(dataDir, { codeRouting: true, model: model.model(), readme: README, clock: () => at(9) });
      const state = new Map(result.states.map((s) => [s.rant.id, s]));
      assert.deepEqual([state.get(code.id)?.class, state.get(code.id)?.status], ['agent-code', 'queued']);
      assert.deepEqual([state.get(behaviour.id)?.class, state.get(behaviour.id)?.status], ['agent-behaviour', 'routed-to-prompt']);
      assert.deepEqual([state.get(project.id)?.class, state.get(project.id)?.status], ['user-project', 'out-of-scope']);
      assert.deepEqual([state.get(confusion.id)?.class, state.get(confusion.id)?.status], ['confusion', 'answered']);
      assert.match(state.get(confusion.id)?.answer ?? '', /provider stopped reporting usage/);
      assert.deepEqual([state.get(unclear.id)?.class, state.get(unclear.id)?.status], ['unclear', 'new']);
      assert.equal(result.picked?.rant.id, code.id, 'the one agent-code rant is picked, whatever its project');
      // The model was told about the boundary and given the agent's README.
      const system = model.server.requests[0]?.system ?? '';
      assert.match(system, /must never change the user's project/);
      assert.match(system, /The status bar gauge shows the context used/);
      for (const d of readDecisions(dataDir)) {
        assert.equal(d.source, 'model');
        for (const key of ['v', 'rant', 'ts', 'class', 'duplicateOf', 'status']) assert.ok(key in d, key);
      }
      assert.equal(readDecisions(dataDir).find((d) => d.rant === confusion.id)?.answer, state.get(confusion.id)?.answer, 'the answer is in triage.jsonl');
    } finally {
      await model.close();
    }
  });

  it('without an agent repository, agent-code waits for it; setting one queues it (and unsetting it again makes it wait)', async () => {
    const r = rant(dataDir, 'The gauge never updates after a model switch', 'p', at(1));
    const model = fixedModel(answer([{ id: r.id, class: 'agent-code' }]));
    const waiting = await triage(dataDir, { codeRouting: false, model });
    assert.equal(waiting.states[0]?.status, 'waiting-for-repository');
    assert.equal(waiting.picked, undefined, 'nothing is picked without a repository');
    const queued = await triage(dataDir, { codeRouting: true, model });
    assert.equal(queued.states[0]?.status, 'queued');
    assert.equal(queued.picked?.rant.id, r.id);
    assert.equal((await triage(dataDir, { codeRouting: false, model })).states[0]?.status, 'waiting-for-repository');
    assert.equal(readDecisions(dataDir).length, 3, 'one line per change of route, none when nothing changed');
    await triage(dataDir, { codeRouting: false, model });
    assert.equal(readDecisions(dataDir).length, 3);
  });

  it('a malformed or failed model reply routes nothing to code: the rant stays new and is asked about again next run', async () => {
    const r = rant(dataDir, 'The save button crashes the whole app', 'p', at(1));
    for (const model of [failingModel, fixedModel(''), fixedModel('not json at all'), fixedModel(answer([{ id: r.id, class: 'bug' }])), fixedModel(answer([{ id: 'other', class: 'agent-code' }]))]) {
      const result = await triage(dataDir, { codeRouting: true, model });
      assert.deepEqual(result.unclassified, [r.id]);
      assert.equal(result.picked, undefined);
      assert.equal(result.states[0]?.status, 'new');
    }
    assert.deepEqual(readDecisions(dataDir), [], 'nothing was written: every run asks again');
    const asked: string[] = [];
    const recording: TextModel = { complete: async (messages) => { asked.push(String(messages[1]?.content)); return answer([{ id: r.id, class: 'agent-code' }]); } };
    const later = await triage(dataDir, { codeRouting: true, model: recording });
    assert.ok(asked[0]?.includes(r.id), 'the next run asks the model again');
    assert.equal(later.picked?.rant.id, r.id);
  });

  it('a confusion without an answer, an unknown class or a duplicate claim from the model is left out', () => {
    const ids = new Set(['a', 'b', 'c', 'd']);
    const parsed = parseTriageReply(answer([
      { id: 'a', class: 'confusion' },
      { id: 'b', class: 'duplicate' },
      { id: 'c', class: 'Agent_Behaviour', note: 'tone' },
      { id: 'd', class: 'confusion', answer: '  It is   the estimate. ' },
    ]), ids);
    assert.deepEqual([...parsed.keys()].sort(), ['c', 'd']);
    assert.equal(parsed.get('c')?.class, 'agent-behaviour');
    assert.equal(parsed.get('d')?.answer, 'It is the estimate.');
    assert.match(triageSystemPrompt(undefined), /README is not available/);
  });

  it('reads the classes from a bare array, a one-element array, an object with "rants", in a fence or in prose', () => {
    const ids = new Set(['a', 'b']);
    const classes = (reply: string): string[] => [...parseTriageReply(reply, ids)].map(([id, c]) => `${id}:${c.class}`);
    assert.deepEqual(classes('[{"id":"a","class":"agent-code"},{"id":"b","class":"user-project"}]'), ['a:agent-code', 'b:user-project']);
    assert.deepEqual(classes('Here you go:\n[{"id":"a","class":"agent-code"}]'), ['a:agent-code'], 'a one-element array is not mistaken for its only object');
    assert.deepEqual(classes('```json\n{"rants":[{"id":"b","class":"unclear"}]}\n```'), ['b:unclear']);
    assert.deepEqual(classes('I cannot classify these.'), []);
  });

  it('the rule fallback: user-project, confusion (answered from the README) and unclear, never agent-code or agent-behaviour', async () => {
    assert.equal(classifyByRules('My tests fail on CI since Monday')?.class, 'user-project');
    assert.equal(classifyByRules('Candor broke my tests again', README), undefined, 'naming the agent: the rules do not decide');
    const confused = classifyByRules('What does the gauge warning colour mean?', README);
    assert.equal(confused?.class, 'confusion');
    assert.match(confused?.answer ?? '', /^From the README \("The gauge"\): The status bar gauge/);
    assert.equal(readmeAnswer('How do I bake bread?', README), undefined);
    assert.equal(classifyByRules('ugh')?.class, 'unclear');
    assert.equal(classifyByRules('?? !!')?.class, 'unclear');
    for (const text of ['The export crashes with a stack trace', 'Please add a dark theme for the chat', 'Your answers are far too long and rambling', 'The agent deleted my files without asking']) {
      const c = classifyByRules(text, README);
      assert.ok(c === undefined || !['agent-code', 'agent-behaviour'].includes(c.class), `${text} → ${c?.class}`);
    }

    // Without a model, the rules route what they can and leave the rest new.
    const own = rant(dataDir, 'My project build is slow and flaky', 'p', at(1));
    const question = rant(dataDir, 'What does the gauge warning colour mean?', 'p', at(2));
    const complaint = rant(dataDir, 'The gauge crashes after a reload', 'p', at(3));
    const result = await triage(dataDir, { codeRouting: true, readme: README });
    const state = new Map(result.states.map((s) => [s.rant.id, s]));
    assert.deepEqual([state.get(own.id)?.status, state.get(own.id)?.source], ['out-of-scope', 'fallback']);
    assert.deepEqual([state.get(question.id)?.status, state.get(question.id)?.source], ['answered', 'fallback']);
    assert.equal(state.get(complaint.id)?.status, 'new');
    assert.deepEqual(result.unclassified, [complaint.id]);
    assert.equal(result.picked, undefined);

    // With a model later, what only the rules placed is asked about again; the model's word stands.
    const model = fixedModel(answer([{ id: own.id, class: 'user-project' }, { id: question.id, class: 'confusion', answer: 'Yellow: usage was lost.' }, { id: complaint.id, class: 'agent-code' }]));
    const again = await triage(dataDir, { codeRouting: true, model, readme: README });
    const after = new Map(again.states.map((s) => [s.rant.id, s]));
    assert.deepEqual([after.get(own.id)?.source, after.get(question.id)?.answer, after.get(complaint.id)?.status], ['model', 'Yellow: usage was lost.', 'queued']);
  });

  it('duplicates across projects point at the rant they repeat, and are never picked', async () => {
    const original = rant(dataDir, 'The save button crashes the whole app!', 'p', at(1));
    const repeat = rant(dataDir, 'the save button crashes the whole app', 'q', at(2));
    const repeatOfRepeat = rant(dataDir, 'THE SAVE BUTTON CRASHES THE WHOLE APP.', 'r', at(3));
    const result = await triage(dataDir, { codeRouting: true, model: fixedModel(answer([{ id: original.id, class: 'agent-code' }])) });
    const byRant = new Map(result.decisions.map((d) => [d.rant, d]));
    assert.deepEqual([byRant.get(repeat.id)?.class, byRant.get(repeat.id)?.status, byRant.get(repeat.id)?.duplicateOf], ['duplicate', 'duplicate', original.id]);
    assert.equal(byRant.get(repeatOfRepeat.id)?.duplicateOf, original.id);
    assert.equal(result.picked?.rant.id, original.id);
    // A later repeat of a rant already acted on is caught too, and never re-fixed.
    fs.appendFileSync(path.join(dataDir, 'triage.jsonl'), `${JSON.stringify({ v: 1, rant: original.id, ts: at(9).toISOString(), class: 'agent-code', duplicateOf: null, status: 'acted', source: 'model', branch: `candor/rant-${original.id}`, commit: 'abc' })}\n`);
    const late = rant(dataDir, 'the save button crashes the whole app!!!', 's', at(10));
    const again = await triage(dataDir, { codeRouting: true, model: failingModel });
    assert.deepEqual(again.decisions.map((d) => [d.rant, d.duplicateOf]), [[late.id, original.id]]);
    assert.equal(again.picked, undefined);
  });

  it("decisions under an older Candor's classes are triaged again once; its acted, dismissed and duplicate stand", async () => {
    const oldBug = rant(dataDir, 'The gauge is wrong after a switch', 'p', at(1));
    const oldNoise = rant(dataDir, 'ugh this is annoying', 'p', at(2));
    const oldActed = rant(dataDir, 'Sessions are lost on reload', 'p', at(3));
    const line = (id: string, cls: string, status: string): string => `${JSON.stringify({ v: 1, rant: id, ts: at(5).toISOString(), class: cls, duplicateOf: null, status, source: 'model' })}\n`;
    fs.writeFileSync(path.join(dataDir, 'triage.jsonl'), line(oldBug.id, 'bug', 'triaged') + line(oldNoise.id, 'noise', 'triaged') + line(oldActed.id, 'bug', 'acted'));
    assert.deepEqual(rantStatuses(dataDir).map((s) => [s.status, s.class]), [['new', null], ['new', null], ['acted', null]], 'old classes are not shown as new ones');
    const asked: string[] = [];
    const model: TextModel = { complete: async (messages) => {
      asked.push(String(messages[1]?.content));
      return answer([{ id: oldBug.id, class: 'agent-code' }, { id: oldNoise.id, class: 'unclear' }]);
    } };
    await triage(dataDir, { codeRouting: true, model });
    assert.ok(asked[0]?.includes(oldBug.id) && asked[0].includes(oldNoise.id) && !asked[0].includes(oldActed.id));
    assert.deepEqual(rantStatuses(dataDir).map((s) => s.status), ['queued', 'new', 'acted']);
    await triage(dataDir, { codeRouting: true, model });
    assert.equal(asked.length, 1, 'once: the new decisions are not triaged again');
  });

  it('picks the oldest queued agent-code rant; not one acted on, dismissed, or tried twice without a change', async () => {
    const first = rant(dataDir, 'Sessions are lost when the window reloads', 'p', at(1));
    const second = rant(dataDir, 'The drift view does not scroll', 'q', at(2));
    const third = rant(dataDir, 'The rant list never refreshes', 'r', at(3));
    const model = fixedModel(answer([first, second, third].map((r) => ({ id: r.id, class: 'agent-code' }))));
    assert.equal((await triage(dataDir, { codeRouting: true, model })).picked?.rant.id, first.id);
    assert.ok(dismissRant(dataDir, first.id));
    assert.equal((await triage(dataDir, { codeRouting: true })).picked?.rant.id, second.id);
    for (let i = 0; i < 2; i++) appendRun(dataDir, { v: 1, run: `r${i}`, ts: '', ended: '', rants: [second.id], outcome: 'nothing-to-evolve', reason: '', repository: '/agent', branch: null, commit: null, diffstat: null, gate: null, sandbox: null });
    assert.equal((await triage(dataDir, { codeRouting: true })).picked?.rant.id, third.id);
    const states = new Map(rantStatuses(dataDir).map((s) => [s.rant.id, s]));
    assert.deepEqual([states.get(first.id)?.status, states.get(first.id)?.class], ['dismissed', 'agent-code']);
    assert.equal(dismissRant(dataDir, 'no-such-rant'), false);
    const rants = fs.readFileSync(path.join(dataDir, 'rants.jsonl'), 'utf8');
    assert.equal(rants.trim().split('\n').length, 3, 'rants.jsonl is never rewritten');
  });
});
