import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Session } from '../../../../src/core/session/session';
import { TranscriptPages } from '../../../../src/core/session/pages';
import type { TranscriptEntry } from '../../../../src/core/session/transcript';

describe('subscriptions to a session and to its live transcript', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-subscriptions-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('a disposed onAppend hears no more records; the others still do', async () => {
    const session = Session.create(dir, 'demo');
    const kept: string[] = [];
    const dropped: string[] = [];
    session.onAppend((record) => kept.push(record.type));
    const subscription = session.onAppend((record) => dropped.push(record.type));
    session.append({ type: 'gate', state: { n: 1 } });
    subscription.dispose();
    session.append({ type: 'gate', state: { n: 2 } });
    assert.deepEqual(kept, ['gate', 'gate']);
    assert.deepEqual(dropped, ['gate'], 'nothing after dispose');
    await session.flushed();
  });

  it('one listener subscribed twice is told twice, and each disposal takes back one', async () => {
    const session = Session.create(dir, 'demo');
    const seen: string[] = [];
    const listener = (record: { type: string }): number => seen.push(record.type);
    const first = session.onAppend(listener);
    session.onAppend(listener);
    first.dispose();
    first.dispose();
    session.append({ type: 'gate', state: { n: 1 } });
    assert.deepEqual(seen, ['gate'], 'the second subscription outlives the first, disposed twice');
    await session.flushed();
  });

  it('a disposed onEntry shows no more entries, while the transcript keeps mapping for the others', async () => {
    const session = Session.create(dir, 'demo');
    const pages = new TranscriptPages(session);
    const kept: TranscriptEntry[] = [];
    const dropped: TranscriptEntry[] = [];
    pages.onEntry((entry) => kept.push(entry));
    const subscription = pages.onEntry((entry) => dropped.push(entry));
    session.addMessage('t1', { role: 'user', content: 'first' });
    subscription.dispose();
    session.addMessage('t2', { role: 'user', content: 'second' });
    assert.equal(dropped.length, 1, 'nothing after dispose');
    assert.equal(kept.length, 2);
    assert.equal(pages.size, 2, 'the transcript still follows the session');
    pages.dispose();
    session.addMessage('t3', { role: 'user', content: 'third' });
    assert.equal(kept.length, 2, 'a disposed transcript tells nobody');
    assert.equal(pages.size, 2, 'and maps no more');
    await session.flushed();
  });
});
