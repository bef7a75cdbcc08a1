import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { saveRant } from '../../../../src/core/rants';
import { Session } from '../../../../src/core/session/session';
import { gatherEvidence } from '../../../../src/core/promptEvolution/evidence';
import { cheapChecks } from '../../../../src/core/promptEvolution/promotionGate';
import { PromptRegistry } from '../../../../src/core/promptEvolution/registry';
import { checkLine, checksFromJson, diffHunks, formatNumber, sixChecks } from '../../../../src/core/promptEvolution/report';
import { versionViews } from '../../../../src/host/promptEvolution/views';
import { parseReviewMessage } from '../../../../src/protocol/review';
import { PROMPT, SMALL_EDIT } from './fixtures';

describe('prompt review: messages, numbers, diffs', () => {
  it('accepts only well-formed messages from the panel', () => {
    assert.deepEqual(parseReviewMessage({ type: 'ready' }), { type: 'ready' });
    assert.deepEqual(parseReviewMessage({ type: 'retest', candidateId: 'c-0123456789ab' }), { type: 'retest', candidateId: 'c-0123456789ab' });
    assert.deepEqual(parseReviewMessage({ type: 'restore', versionId: '01j0abcdxyz' }), { type: 'restore', versionId: '01j0abcdxyz' });
    assert.deepEqual(parseReviewMessage({ type: 'dismiss', candidateId: 'c-0123456789ab' }), { type: 'dismiss', candidateId: 'c-0123456789ab' });
    assert.deepEqual(parseReviewMessage({ type: 'promoteAnyway', candidateId: 'c-0123456789ab' }), { type: 'promoteAnyway', candidateId: 'c-0123456789ab' });
    for (const bad of [
      null, 'ready', [], { type: 'ready', extra: 1 }, { type: 'retest', candidateId: '../etc' }, { type: 'retest' },
      { type: 'restore', versionId: 'A B' }, { type: 'restore', versionId: 7 }, { type: 'runCommand', command: 'x' },
      { type: 'promoteAnyway', candidateId: 'c-0123456789ab', force: true }, { type: 'dismiss', candidateId: '../c' }, { type: 'promoteAnyway' },
    ]) {
      assert.equal(parseReviewMessage(bad), undefined, JSON.stringify(bad));
    }
  });

  it('formats p-values with their known digits', () => {
    assert.equal(formatNumber(0.03125), '0.03125');
    assert.equal(formatNumber(0.0625), '0.0625');
    assert.equal(formatNumber(2 / 2 ** 24), '1.192e-7');
    assert.equal(formatNumber(0), '0');
    assert.equal(formatNumber(0.05 / 3), '0.01667');
  });

  it('diffs ignore CRLF-only changes and keep markup as plain text', () => {
    assert.deepEqual(diffHunks('a\nb\n', 'a\r\nb\r\n'), []);
    const hunks = diffHunks('a\nb\n', 'a\n<script>alert(1)</script>\nb\n');
    assert.equal(hunks.length, 1);
    assert.deepEqual(hunks[0]?.lines.filter((l) => l.kind === 'added'), [{ kind: 'added', text: '<script>alert(1)</script>' }]);
  });

  it('stored checks come back as the six checks; anything else is left out', () => {
    const stored = JSON.parse(JSON.stringify(cheapChecks(PROMPT, PROMPT, SMALL_EDIT))) as unknown[];
    const six = sixChecks(checksFromJson([...stored, { name: 'confidence', passed: true, value: 'x' }, 'junk']));
    assert.deepEqual(six.map((c) => c.name), ['frozen_sections', 'edit_distance', 'drift', 'sample_floor', 'effect_size', 'confidence']);
    assert.deepEqual(six.map((c) => c.passed), [true, true, true, undefined, undefined, undefined]);
    assert.equal(checkLine(six[1] as (typeof six)[number]), '✓ edit_distance   1 changed line(s) (≤ 20)');
    assert.equal(six[5]?.value, 'not run');
    assert.deepEqual(checksFromJson('not a list'), []);
  });

  it('versions are labelled in order, newest first, the newest with the text in force marked', () => {
    const v = (id: string, kind: 'root' | 'promotion' | 'rollback', text: string, parent: string | null) => ({ id, kind, text, parent, root: 'a', restores: kind === 'rollback' ? 'a' : null, created: '', lineage: null });
    const views = versionViews([v('a', 'root', 'one', null), v('b', 'promotion', 'two', 'a'), v('c', 'rollback', 'one', 'b')], 'one');
    assert.deepEqual(views.map((x) => [x.label, x.inForce]), [['v3', true], ['v2', false], ['v1', false]]);
    assert.equal(views[1]?.diff.length, 1);
  });
});

describe('gatherEvidence', () => {
  let dir: string;
  let registry: PromptRegistry;
  const routed = (rant: string, cls: string, status: string): void => {
    fs.appendFileSync(path.join(dir, 'triage.jsonl'), `${JSON.stringify({ v: 1, rant, ts: new Date().toISOString(), class: cls, duplicateOf: null, status, source: 'model' })}\n`);
  };
  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-evidence-'));
    registry = await PromptRegistry.open({ file: path.join(dir, 'traces.sqlite'), scope: 'ws' });
  });
  afterEach(() => {
    registry.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('turns down-votes, agent-behaviour rants and failed turns into text; withdrawn votes and unknown ids are left out', async () => {
    const session = Session.create(path.join(dir, 'sessions'), 'demo');
    session.addMessage('turn1', { role: 'user', content: 'rename foo' });
    const badReply = session.addMessage('turn1', { role: 'assistant', content: 'Run git reset --hard.' });
    session.addMessage('turn2', { role: 'user', content: 'and now?' });
    const goodReply = session.addMessage('turn2', { role: 'assistant', content: 'Done.' });
    session.addMessage('turn3', { role: 'user', content: 'list files' });
    session.append({ type: 'notice', id: 'n1', turn: 'turn3', level: 'error', text: 'HTTP 500 from the provider' });
    await session.flushed();
    const rant = saveRant(dir, { text: 'it told me to reset my work', project: 'demo', session: session.id });
    routed(rant.id, 'agent-behaviour', 'routed-to-prompt');

    await registry.addTraces([{ session: session.id, model: 'm', provider: 'p', toolCalls: 0, durationMs: 1 }]);
    await registry.addSignal({ kind: 'down', replyId: badReply, session: session.id });
    await registry.addSignal({ kind: 'down', replyId: goodReply, session: session.id });
    await registry.addSignal({ kind: 'up', replyId: goodReply, session: session.id });
    await registry.addSignal({ kind: 'down', replyId: 'x', session: '../../etc/passwd' });
    await registry.addSignal({ kind: 'rant', rantId: rant.id, session: session.id });

    const evidence = await gatherEvidence(dir, registry);
    assert.deepEqual(evidence.downVoted, ['User: rename foo\nReply: Run git reset --hard.']);
    assert.deepEqual(evidence.rants, ['it told me to reset my work']);
    assert.deepEqual(evidence.failingTraces, ['User: list files\nError: HTTP 500 from the provider']);
    assert.equal(evidence.unresolved, 1, 'the vote in an unsafe session id');
  });

  it('reads only rants whose latest class is agent-behaviour, from every project; linking at save time no longer counts', async () => {
    const behaviour = saveRant(dir, { text: 'your answers are far too long', project: 'one', session: null });
    const elsewhere = saveRant(dir, { text: 'you never say what you did not check', project: 'two', session: null });
    const code = saveRant(dir, { text: 'the gauge crashes after a reload', project: 'one', session: 's1' });
    const project = saveRant(dir, { text: 'my login form does not validate e-mails', project: 'one', session: 's1' });
    const untriaged = saveRant(dir, { text: 'something about everything', project: 'one', session: 's1' });
    const dismissed = saveRant(dir, { text: 'too chatty today', project: 'one', session: null });
    // The trap: every rant saved during a session is linked as a signal, as before.
    for (const r of [code, project, untriaged]) await registry.addSignal({ kind: 'rant', rantId: r.id, session: 's1' });
    routed(behaviour.id, 'agent-behaviour', 'routed-to-prompt');
    routed(elsewhere.id, 'agent-behaviour', 'routed-to-prompt');
    routed(code.id, 'agent-code', 'queued');
    routed(project.id, 'user-project', 'out-of-scope');
    routed(dismissed.id, 'agent-behaviour', 'routed-to-prompt');
    routed(dismissed.id, 'agent-behaviour', 'dismissed');
    const evidence = await gatherEvidence(dir, registry);
    assert.deepEqual(evidence.rants, ['your answers are far too long', 'you never say what you did not check']);
  });

  it('an empty data folder gives empty evidence', async () => {
    const evidence = await gatherEvidence(dir, registry);
    assert.deepEqual({ ...evidence }, { failingTraces: [], downVoted: [], rants: [], unresolved: 0 });
  });
});
