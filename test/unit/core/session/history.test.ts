import * as assert from 'node:assert/strict';
import type { ChatMessage } from '../../../../src/core/messages';
import type { SessionRecord } from '../../../../src/core/session/records';
import { Session } from '../../../../src/core/session/session';
import { tempFolderPerTest } from '../../../helpers/tempFolder';

/** The rebuild every call used to do: messages in order, each compaction's summary in place of the oldest entry it replaces. */
function fullRebuild(records: readonly SessionRecord[]): Array<{ id: string; message: ChatMessage }> {
  let out: Array<{ id: string; message: ChatMessage }> = [];
  for (const record of records) {
    if (record.type === 'message') out.push({ id: record.id, message: record.message });
    if (record.type === 'compaction') {
      const replaced = new Set(record.replaces);
      const at = Math.max(0, out.findIndex((entry) => replaced.has(entry.id)));
      out = out.filter((entry) => !replaced.has(entry.id));
      out.splice(Math.min(at, out.length), 0, { id: record.id, message: record.summary });
    }
  }
  return out;
}

describe('the history the model sees, kept incrementally', () => {
  const dir = tempFolderPerTest('candor-history-');

  it('equals a full rebuild after every record, through compactions (one replacing an earlier summary), live and on reopen', async () => {
    const session = Session.create(dir(), 'demo');
    const ids: string[] = [];
    const say = (role: 'user' | 'assistant', text: string): void => {
      ids.push(session.addMessage('t', { role, content: text }));
    };
    const check = (where: string): void => {
      assert.deepEqual(session.historyEntries(), fullRebuild(session.all()), where);
      assert.deepEqual(session.history(), fullRebuild(session.all()).map((e) => e.message), where);
    };
    for (let i = 0; i < 6; i++) {
      say('user', `q${i}`);
      say('assistant', `a${i}`);
      check(`after turn ${i}`);
    }
    session.append({ type: 'compaction', id: 'c1', replaces: ids.slice(0, 8), summary: { role: 'user', content: 'S1' } });
    check('after the first compaction');
    session.append({ type: 'notice', id: 'n', level: 'info', text: 'noise' });
    session.append({ type: 'gate', state: {} });
    for (let i = 6; i < 9; i++) {
      say('user', `q${i}`);
      say('assistant', `a${i}`);
    }
    check('after more turns');
    // The second summary replaces the first one and the turns after it.
    session.append({ type: 'compaction', id: 'c2', replaces: ['c1', ...ids.slice(8, 14)], summary: { role: 'user', content: 'S2' } });
    check('after a compaction of a summary');
    // Replaced ids that are not in the history any more are ignored.
    session.append({ type: 'compaction', id: 'c3', replaces: ['gone', ids[15] as string], summary: { role: 'user', content: 'S3' } });
    check('after a compaction naming a missing id');
    assert.deepEqual(session.history().map((m) => m.content), ['S2', 'q7', 'S3', 'q8', 'a8']);

    await session.flushed();
    const reopened = Session.open(session.file);
    assert.deepEqual(reopened.historyEntries(), fullRebuild(reopened.all()));
    assert.deepEqual(reopened.historyEntries(), session.historyEntries());
  });

  it('costs a push per message, not a rebuild per call', () => {
    const session = Session.create(dir(), 'demo');
    for (let i = 0; i < 2_000; i++) session.addMessage('t', { role: 'user', content: `m${i}` });
    session.append({ type: 'compaction', id: 'c', replaces: [], summary: { role: 'user', content: 'S' } });
    const first = session.history();
    assert.equal(session.history(), first, 'the same list, not a new one per call');
    session.addMessage('t', { role: 'user', content: 'one more' });
    assert.equal(session.history().length, 2_002);
  });
});
