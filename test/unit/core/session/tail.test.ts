import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Session } from '../../../../src/core/session/session';

import { PAGE_ENTRIES, readSessionTail } from '../../../../src/core/session/tail';
import { UNREADABLE_HOLE, richSession, writeLongSession, writeSessionWithHole } from './longSession';
import { transcriptOf } from '../../../helpers/core';
import { tempFolderPerTest } from '../../../helpers/tempFolder';

describe('opening a session reads only its end', () => {
  const dir = tempFolderPerTest('candor-tail-');

  it('the newest entries read backwards are exactly the end of what the whole file maps to', async () => {
    const session = await richSession(dir(), 60);
    const whole = transcriptOf(Session.open(session.file));
    assert.ok(whole.length > 300, `enough entries to page (${whole.length})`);
    for (const wanted of [1, 5, 17, 50, 200, 10_000]) {
      const tail = readSessionTail(session.file, wanted);
      assert.ok(tail.entries.length >= Math.min(wanted, whole.length), `${wanted}: at least that many (${tail.entries.length})`);
      assert.deepEqual(tail.entries, whole.slice(whole.length - tail.entries.length), `${wanted}: the same entries, names of tools and Retry included`);
      assert.equal(tail.more, tail.entries.length < whole.length, `${wanted}: more`);
      assert.equal(tail.skippedLines, 0);
    }
    const last = readSessionTail(session.file, 3).entries.at(-1);
    assert.deepEqual(last, { id: 'err-last', kind: 'notice', level: 'error', text: 'HTTP 503', retryable: true }, 'the open error keeps its Retry');
  });

  it('a torn last line and a garbage line are skipped and counted, as the whole read does', async () => {
    const session = await richSession(dir(), 4);
    fs.appendFileSync(session.file, 'not json at all\n{"v":1,"type":"message","id":"x","turn":"t","message":{"role":"user","cont');
    const tail = readSessionTail(session.file, 3);
    assert.equal(tail.skippedLines, 2);
    const whole = transcriptOf(Session.open(session.file));
    assert.deepEqual(tail.entries, whole.slice(whole.length - tail.entries.length));
  });

  it('a missing file opens empty', () => {
    assert.deepEqual(readSessionTail(path.join(dir(), 'absent.jsonl')), { entries: [], more: false, skippedLines: 0, bytesRead: 0 });
  });

  it('10,000 messages cost what 100 do: the bytes read do not grow with the file', () => {
    const small = writeLongSession(dir(), { messages: 100, id: 'small', toolEvery: 4 });
    const large = writeLongSession(dir(), { messages: 10_000, id: 'large', toolEvery: 4 });
    const a = readSessionTail(small.file);
    const b = readSessionTail(large.file);
    assert.equal(a.more, false);
    assert.equal(b.more, true);
    assert.ok(b.entries.length >= PAGE_ENTRIES && b.entries.length < PAGE_ENTRIES + 10, `${b.entries.length} entries`);
    assert.ok(b.bytesRead < 2 * (fs.statSync(small.file).size + 4096), `read ${b.bytesRead} bytes of ${fs.statSync(large.file).size}`);
  });

  it('the middle of a 540 MB session is never read: the whole-file read fails on it, the tail does not', function () {
    this.timeout(30_000);
    const { file } = writeSessionWithHole(dir(), { messages: 400, id: 'huge', holeBytes: UNREADABLE_HOLE, headLines: 5, tailLines: 300 });
    // The trap: reading the whole file, as opening did before, fails on it (longer than a string can be).
    assert.throws(() => Session.open(file), /Cannot create a string longer than/);
    const tail = readSessionTail(file);
    assert.ok(tail.entries.length >= PAGE_ENTRIES);
    assert.equal(tail.entries.at(-1)?.kind, 'assistant');
    assert.ok(tail.bytesRead < 200_000, `${tail.bytesRead} bytes read`);
  });
});
