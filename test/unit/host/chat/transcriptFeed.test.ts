import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { HostMessage } from '../../../../src/protocol/chat';
import { TranscriptFeed } from '../../../../src/host/chat/transcriptFeed';
import { Session } from '../../../../src/core/session/session';
import { TranscriptPages } from '../../../../src/core/session/pages';

/** The texts of the user messages the view was sent as entries. */
const shown = (posted: readonly HostMessage[]): string[] =>
  posted.flatMap((m) => (m.type === 'entry' && m.entry.kind === 'user' ? [m.entry.text] : []));

describe('the chat view follows the current session', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-feed-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("after another session is opened, the one before reaches the view no more; once disposed, neither does the current one", async () => {
    const posted: HostMessage[] = [];
    const feed = new TranscriptFeed((message) => posted.push(message));
    const left = Session.create(dir, 'demo');
    const current = Session.create(dir, 'demo');
    feed.follow(new TranscriptPages(left));
    left.addMessage('t1', { role: 'user', content: 'in the session left' });
    feed.follow(new TranscriptPages(current));
    left.addMessage('t2', { role: 'user', content: 'late in the session left' });
    current.addMessage('t3', { role: 'user', content: 'in the current session' });
    feed.dispose();
    current.addMessage('t4', { role: 'user', content: 'after the chat stopped' });
    assert.deepEqual(shown(posted), ['in the session left', 'in the current session']);
    await Promise.all([left.flushed(), current.flushed()]);
  });
});
