import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { Session } from '../../../../src/core/session/session';
import { listSessions } from '../../../../src/core/session/listing';
import { transcriptOf } from '../../../helpers/core';
import { tempFolderPerTest } from '../../../helpers/tempFolder';

describe('session files', () => {
  const dir = tempFolderPerTest('candor-session-');

  it('a garbage line and a truncated last line are skipped and counted; the rest of the transcript loads', async () => {
    const session = Session.create(dir(), 'demo');
    session.addMessage('t1', { role: 'user', content: 'first' });
    await session.flushed();
    fs.appendFileSync(session.file, 'this is not json\n');
    session.addMessage('t1', { role: 'assistant', content: 'answer' });
    await session.flushed();
    fs.appendFileSync(session.file, '{"v":1,"type":"message","id":"x","turn":"t2","message":{"role":"user","cont');
    const bytes = fs.readFileSync(session.file);
    const reopened = Session.open(session.file);
    assert.equal(reopened.skippedLines, 2);
    assert.deepEqual(transcriptOf(reopened).map((e) => e.kind), ['user', 'assistant']);
    assert.deepEqual(fs.readFileSync(session.file), bytes, 'opening never rewrites the file');
    reopened.addMessage('t3', { role: 'user', content: 'after the damage' });
    await reopened.flushed();
    assert.deepEqual(Session.open(session.file).history().map((m) => m.content), ['first', 'answer', 'after the damage']);
  });

  it('a compaction replaces the summarized messages in the history, and the transcript keeps them', async () => {
    const session = Session.create(dir(), 'demo');
    const a = session.addMessage('t1', { role: 'user', content: 'a' });
    const b = session.addMessage('t1', { role: 'assistant', content: 'b' });
    session.addMessage('t2', { role: 'user', content: 'c' });
    session.append({ type: 'compaction', id: 'k1', replaces: [a, b], summary: { role: 'user', content: 'summary of a and b' } });
    await session.flushed();
    const reopened = Session.open(session.file);
    assert.deepEqual(reopened.history().map((m) => m.content), ['summary of a and b', 'c']);
    assert.deepEqual(transcriptOf(reopened).map((e) => e.kind), ['user', 'assistant', 'user', 'summary']);
  });

  it('past sessions are listed newest first with a title from the first message', async () => {
    const one = Session.create(dir(), 'demo', () => new Date('2026-11-01T00:00:00Z'));
    one.addMessage('t', { role: 'user', content: 'older question' });
    const two = Session.create(dir(), 'demo', () => new Date('2026-11-02T00:00:00Z'));
    two.addMessage('t', { role: 'user', content: 'newer question' });
    await Promise.all([one.flushed(), two.flushed()]);
    assert.deepEqual(listSessions(dir()).map((s) => s.title), ['newer question', 'older question']);
  });

  it('a record is in memory and told to listeners when append returns, and on disk once flushed() resolves', async () => {
    const session = Session.create(dir(), 'demo');
    const seen: string[] = [];
    session.onAppend((record) => seen.push(record.type === 'message' ? String(record.message.content) : record.type));
    for (let i = 0; i < 50; i++) session.addMessage(`t${i}`, { role: 'user', content: `m${i}` });
    session.append({ type: 'gate', state: { n: 1 } });
    // The title record comes just before the first user message.
    assert.deepEqual(seen, ['meta', ...[...Array(50).keys()].map((i) => `m${i}`), 'gate']);
    assert.equal(session.history().length, 50, 'the history has them at once');
    await session.flushed();
    const reopened = Session.open(session.file);
    assert.deepEqual(reopened.history().map((m) => m.content), [...Array(50).keys()].map((i) => `m${i}`));
    assert.deepEqual(reopened.lastGateState(), { n: 1 });
    assert.equal(reopened.skippedLines, 0);
  });
});
