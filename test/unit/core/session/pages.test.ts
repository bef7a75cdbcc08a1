import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Session } from '../../../../src/core/session/session';
import { type TranscriptEntry } from '../../../../src/core/session/transcript';
import { TranscriptPages } from '../../../../src/core/session/pages';
import { OpenedSession } from '../../../../src/core/session/opened';
import { REDACTED, SecretSet } from '../../../../src/core/redact';
import { questionText, richSession, writeLongSession } from './longSession';
import { transcriptOf } from '../../../helpers/core';
import { tempFolderPerTest } from '../../../helpers/tempFolder';

const shownAs = (text: string): string => text;

describe('paging back through a session and finding in it', () => {
  const dir = tempFolderPerTest('candor-pages-');

  it('the whole file loads in slices to what reading it at once gives', async () => {
    const { file } = writeLongSession(dir(), { messages: 3000, toolEvery: 3 });
    fs.appendFileSync(file, 'garbage\n{"v":1,"type":"gate","state":{}}\n{"v":2,"type":"message"}\n{"cut');
    const loaded = await Session.load(file);
    const opened = Session.open(file);
    assert.deepEqual(loaded.all(), opened.all());
    assert.equal(loaded.skippedLines, opened.skippedLines);
    assert.equal(loaded.skippedLines, 3);
    assert.deepEqual(loaded.history(), opened.history());
    assert.deepEqual((await Session.load(path.join(dir(), 'absent.jsonl'))).all(), []);
  });

  it('pages taken from the newest back, joined, are the whole transcript; new records join at once', async () => {
    const session = await richSession(dir(), 40);
    const pages = new TranscriptPages(session);
    const whole = transcriptOf(Session.open(session.file));
    let page = pages.newest(37);
    const seen: TranscriptEntry[] = [...page.entries];
    while (page.more) {
      const oldest = seen[0] as TranscriptEntry;
      page = pages.before(oldest.id, 37) as typeof page;
      seen.unshift(...page.entries);
    }
    assert.deepEqual(seen, whole);
    assert.equal(pages.before('no such entry', 10), undefined);

    // The retryable error at the end loses its Retry when the next message comes, in the pages too.
    session.addMessage('next', { role: 'user', content: 'next question' });
    const newest = pages.newest(3).entries;
    assert.deepEqual(newest.map((e) => e.id).slice(-2), ['err-last', newest.at(-1)?.id]);
    assert.deepEqual(pages.newest(2).entries[0], { id: 'err-last', kind: 'notice', level: 'error', text: 'HTTP 503' });
    assert.equal(pages.newest(1).entries[0]?.kind, 'user');
    pages.dispose();
    session.addMessage('after', { role: 'user', content: 'not followed any more' });
    const stays = pages.newest(1).entries[0];
    assert.equal(stays?.kind === 'user' ? stays.text : undefined, 'next question');
  });

  it('find goes older from the newest end, then newer, wrapping, with its place among all matches', async () => {
    const { file } = writeLongSession(dir(), { messages: 100 });
    const session = await Session.load(file);
    const pages = new TranscriptPages(session);
    // "step 1" is in questions and replies 1 and 10..19; a reply says "step N" twice: 33 matches in 22 messages, each counted.
    const ids: string[] = [];
    let from: string | undefined;
    for (let i = 0; i < 3; i++) {
      const found = pages.find('STEP 1', from, 'older', shownAs);
      assert.ok(found.hit);
      ids.push(found.hit.id);
      from = found.hit.id;
      assert.equal(found.total, 33, 'every match counts, not every message');
      assert.equal(found.ordinal, [33, 31, 30][i]);
    }
    const back = pages.find('step 1', from, 'newer', shownAs);
    assert.equal(back.hit?.id, ids[1]);
    const newest = pages.find('step 1', undefined, 'newer', shownAs);
    assert.equal(newest.ordinal, 1, 'newer from nowhere starts at the oldest');
    const wrapped = pages.find('step 1', newest.hit?.id, 'older', shownAs);
    assert.equal(wrapped.ordinal, 33, 'older than the oldest wraps to the newest');
    assert.deepEqual(pages.find('no such words', undefined, 'older', shownAs), { ordinal: 0, total: 0 });
    assert.deepEqual(pages.find('a.*b(', undefined, 'older', shownAs), { ordinal: 0, total: 0 }, 'the query is text, not a pattern');
  });

  it('find does not match what the chat never shows: a key in a message is found as [redacted], not by its value', async () => {
    const key = 'k3y-Zq8wPlm2Xv9Tn4Rb';
    const secrets = new SecretSet();
    secrets.add(key);
    const session = Session.create(dir(), 'demo');
    session.addMessage('t', { role: 'user', content: `my key is ${key}` });
    const pages = new TranscriptPages(session);
    // The trap: the text itself holds the key.
    assert.equal(pages.find(key.slice(0, 12), undefined, 'older', shownAs).total, 1);
    assert.equal(pages.find(key.slice(0, 12), undefined, 'older', (t) => secrets.redact(t)).total, 0);
    assert.equal(pages.find(REDACTED, undefined, 'older', (t) => secrets.redact(t)).total, 0, 'nor by the word the view shows in its place');
    assert.equal(pages.find('my key', undefined, 'older', (t) => secrets.redact(t)).total, 1);
  });

  it('an opened session shows its newest entries before it is loaded, the same ones after, and pages and finds once loaded', async () => {
    const { file } = writeLongSession(dir(), { messages: 1000, toolEvery: 4, first: 'the very first question' });
    const opened = OpenedSession.open(file);
    assert.equal(opened.session, undefined, 'nothing parsed yet');
    const before = opened.firstPage();
    assert.equal(before.title, 'the very first question');
    assert.equal(before.more, true);
    const { session } = await opened.loaded;
    assert.equal(opened.session, session);
    const after = opened.firstPage(before.entries.length);
    assert.deepEqual(after.entries, before.entries);
    assert.equal(after.title, before.title);

    const page = await opened.older(before.entries[0]?.id as string);
    const whole = transcriptOf(session);
    assert.deepEqual([...page.entries, ...before.entries], whole.slice(whole.length - before.entries.length - page.entries.length));

    const oldest = before.entries[0]?.id;
    const found = await opened.find('the very first', undefined, 'older', oldest, shownAs);
    assert.equal(found.hit, whole[0]?.id);
    assert.equal(found.more, false);
    assert.deepEqual(found.older, whole.slice(0, whole.length - before.entries.length), 'the entries from the hit down to what the view has');
    const near = await opened.find(questionText(499), undefined, 'older', oldest, shownAs);
    assert.equal(near.older.length, 0, 'a hit the view has needs no entries');
    const none = await opened.find('nowhere to be found', undefined, 'older', oldest, shownAs);
    assert.deepEqual(none, { hit: null, ordinal: 0, total: 0, older: [], more: false });
    opened.dispose();
  });

  it('the view follows an opened session\'s one live mapping: each change told once, in order, none once the session is closed', async () => {
    const { file } = writeLongSession(dir(), { messages: 10 });
    const opened = OpenedSession.open(file);
    assert.equal(opened.liveTranscript(), undefined, 'nothing to follow before the load');
    const { session } = await opened.loaded;
    const told: TranscriptEntry[] = [];
    opened.liveTranscript()?.onEntry((entry) => told.push(entry));
    session.append({ type: 'notice', id: 'n1', turn: 't', level: 'error', text: 'HTTP 500', retryable: true });
    session.addMessage('t2', { role: 'user', content: 'again' }, 'u2');
    // The error loses its Retry when the next message comes: told again, under its id, before the message.
    assert.deepEqual(told.map((e) => [e.id, e.kind, e.kind === 'notice' ? e.retryable ?? false : null]), [['n1', 'notice', true], ['n1', 'notice', false], ['u2', 'user', null]]);
    assert.deepEqual((await opened.older('u2', 1)).entries, told.slice(1, 2), 'the pages are what the view was told');
    opened.dispose();
    session.addMessage('t3', { role: 'user', content: 'after the switch' });
    assert.equal(told.length, 3, 'a closed session tells the view nothing more');
    assert.equal(opened.liveTranscript(), undefined);
  });

  it('a session that cannot be read rejects its load, and reading its end throws (the chat then starts a new session)', async () => {
    const file = path.join(dir(), 'unreadable.jsonl');
    fs.mkdirSync(file);
    const opened = OpenedSession.open(file);
    await assert.rejects(opened.loaded);
    assert.throws(() => opened.firstPage());
  });
});
