import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Session } from '../../../../src/core/session/session';
import { HEAD_BYTES, listSessions, sessionTitle, UNTITLED } from '../../../../src/core/session/listing';
import { SecretSet, REDACTED } from '../../../../src/core/redact';
import { UNREADABLE_HOLE, writeLongSession, writeSessionWithHole } from './longSession';
import { tempFolderPerTest } from '../../../helpers/tempFolder';

describe('listing sessions reads the ends of each file only', () => {
  const dir = tempFolderPerTest('candor-listing-');

  it('the title is written as a meta record just before the first user message, once', async () => {
    const session = Session.create(dir(), 'demo');
    session.addMessage('t1', { role: 'user', content: '  How do I\nread   a file backwards, in Node, without reading it all?  ' });
    session.addMessage('t1', { role: 'assistant', content: 'Like this.' });
    session.addMessage('t2', { role: 'user', content: 'a second question' });
    await session.flushed();
    const records = fs.readFileSync(session.file, 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(records.map((r) => r.type), ['meta', 'meta', 'message', 'message', 'message']);
    assert.equal(records[1]?.title, 'How do I read a file backwards, in Node, without reading it');
    assert.equal(records[1]?.id, session.id);
    assert.equal(session.title(), 'How do I read a file backwards, in Node, without reading it');
    assert.equal(Session.open(session.file).title(), session.title());
  });

  it('a reopened session that already has a user message gets no title record', async () => {
    const { file } = writeLongSession(dir(), { messages: 4, titleRecord: false });
    const session = await Session.load(file);
    session.addMessage('later', { role: 'user', content: 'a later question' });
    await session.flushed();
    assert.equal(fs.readFileSync(file, 'utf8').split('\n').filter((l) => l.includes('"title"')).length, 0);
  });

  it('the title record is redacted; the message itself is kept as typed', async () => {
    const key = 'k3y-Zq8wPlm2Xv9Tn4Rb';
    const secrets = new SecretSet();
    secrets.add(key);
    // The trap: a title taken from the message as typed carries the key into a second record.
    const plain = Session.create(path.join(dir(), 'plain'), 'demo');
    plain.addMessage('t1', { role: 'user', content: `is ${key} my key?` });
    await plain.flushed();
    assert.equal(fs.readFileSync(plain.file, 'utf8').split(key).length - 1, 2);
    const session = Session.create(dir(), 'demo', undefined, { redactTitle: (t) => secrets.redact(t) });
    session.addMessage('t1', { role: 'user', content: `is ${key} my key?` });
    await session.flushed();
    const text = fs.readFileSync(session.file, 'utf8');
    assert.ok(text.includes(`"content":"is ${key} my key?"`), 'the message as typed');
    assert.equal(text.split(key).length - 1, 1, 'the key only in the message');
    assert.equal(listSessions(dir())[0]?.title, `is ${REDACTED} my key?`);
  });

  it('lists newest first, with the title and the time of the last complete line', async () => {
    writeLongSession(dir(), { messages: 6, id: 'older', first: 'the older one', start: new Date('2026-03-01T00:00:00Z') });
    writeLongSession(dir(), { messages: 6, id: 'newer', first: 'the newer one', start: new Date('2026-04-01T00:00:00Z') });
    const torn = writeLongSession(dir(), { messages: 6, id: 'torn', first: 'the torn one', start: new Date('2026-02-01T00:00:00Z') });
    fs.appendFileSync(torn.file, '{"v":1,"ts":"2099-01-01T00:00:00.000Z","type":"mess');
    const list = listSessions(dir());
    assert.deepEqual(list.map((s) => [s.id, s.title]), [['newer', 'the newer one'], ['older', 'the older one'], ['torn', 'the torn one']]);
    const lastTs = (file: string): string => (JSON.parse(fs.readFileSync(file, 'utf8').trimEnd().split('\n').at(-1) as string) as { ts: string }).ts;
    assert.equal(list[0]?.updated, lastTs(path.join(dir(), 'newer.jsonl')));
    const complete = fs.readFileSync(torn.file, 'utf8').split('\n').slice(0, -1);
    assert.equal(list[2]?.updated, (JSON.parse(complete.at(-1) as string) as { ts: string }).ts, 'a torn last line is not the last complete one');
    assert.notEqual(list[2]?.updated, '2099-01-01T00:00:00.000Z');
  });

  it('an old file without a title record lists with its first user message, or as Untitled', () => {
    writeLongSession(dir(), { messages: 4, id: 'old', first: 'an old question', titleRecord: false });
    fs.writeFileSync(path.join(dir(), 'empty.jsonl'), `${JSON.stringify({ v: 1, ts: '2026-01-01T00:00:00.000Z', type: 'meta', id: 'empty' })}\n`);
    fs.writeFileSync(path.join(dir(), 'nothing.jsonl'), '');
    const titles = Object.fromEntries(listSessions(dir()).map((s) => [s.id, s.title]));
    assert.deepEqual(titles, { old: 'an old question', empty: UNTITLED, nothing: UNTITLED });
  });

  it('an old file whose first user message is longer than the head lists with the start of it', () => {
    const first = `${'é'.repeat(10)} "quoted" \\ ${'long question '.repeat(1000)}`;
    const { file } = writeLongSession(dir(), { messages: 4, id: 'long', first, titleRecord: false });
    assert.ok(fs.readFileSync(file, 'utf8').indexOf('"role":"assistant"') > HEAD_BYTES, 'the first message is cut by the head');
    assert.equal(sessionTitle(file), first.replace(/\s+/g, ' ').slice(0, 60).trimEnd());
    // Cut inside an escape or a character: whatever is left parses.
    for (let cut = 150; cut < 200; cut++) {
      const head = fs.readFileSync(file).subarray(0, cut);
      const short = path.join(dir(), `cut${cut}.jsonl`);
      fs.writeFileSync(short, Buffer.concat([head, Buffer.alloc(HEAD_BYTES)]));
      const title = sessionTitle(short);
      assert.ok(title === undefined || first.replace(/\s+/g, ' ').startsWith(title), `cut at ${cut}: ${title}`);
    }
  });

  it('a 540 MB session lists from its ends: reading it whole fails, the listing does not', function () {
    this.timeout(30_000);
    const { file } = writeSessionWithHole(dir(), { messages: 100, id: 'huge', first: 'a huge session', holeBytes: UNREADABLE_HOLE, headLines: 6, tailLines: 6 });
    const end = Buffer.alloc(2000);
    const fd = fs.openSync(file, 'r');
    fs.readSync(fd, end, 0, end.length, fs.fstatSync(fd).size - end.length);
    fs.closeSync(fd);
    const tail = end.toString('utf8').trimEnd().split('\n');
    // The trap: listing as it was done before (every file opened whole) fails on it.
    assert.throws(() => Session.open(file), /Cannot create a string longer than/);
    const [summary] = listSessions(dir());
    assert.equal(summary?.title, 'a huge session');
    const last = JSON.parse(tail.at(-1) as string) as { ts: string };
    assert.equal(summary?.updated, last.ts);
  });
});
