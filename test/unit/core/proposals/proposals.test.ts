import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { addProposal, applyEditRequest, isBaseUnchanged, latestProposals, pendingProposals, setProposalState } from '../../../../src/core/proposals/proposals';
import { Session } from '../../../../src/core/session/session';
import { transcriptOf } from '../../../helpers/core';

describe('proposals that stay pending while the turn goes on', () => {
  let dir: string;
  let session: Session;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-proposals-'));
    session = Session.create(dir, 'app');
  });
  afterEach(async () => {
    await session.flushed();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const propose = (base: string, content: string, file = '/w/app/src/a.ts'): ReturnType<typeof addProposal> =>
    addProposal(session, { turn: 't1', file, path: 'src/a.ts', base, created: false, from: base, content });

  it('is pending, with a diff of what it changes, and survives a reload', async () => {
    const p = propose('one\ntwo\n', 'one\n2\n');
    assert.deepEqual(pendingProposals(session.all()).map((x) => x.id), [p.id]);
    assert.match(p.diff, /^--- a\/src\/a\.ts\n\+\+\+ b\/src\/a\.ts\n@@/);
    assert.match(p.diff, /^-two$/m);
    assert.match(p.diff, /^\+2$/m);
    await session.flushed();
    const reopened = Session.open(session.file);
    assert.equal(pendingProposals(reopened.all())[0]?.content, 'one\n2\n');
    const entry = transcriptOf(reopened).find((e) => e.kind === 'proposal');
    assert.equal(entry?.kind === 'proposal' && entry.state, 'pending');
  });

  it('a second proposal for the file takes the first one\'s place', () => {
    const first = propose('a\n', 'b\n');
    const second = propose('a\n', 'c\n');
    assert.equal(latestProposals(session.all()).get(first.id)?.state, 'superseded');
    assert.deepEqual(pendingProposals(session.all()).map((x) => x.id), [second.id]);
  });

  it('is stale once the text it was made against changed, in the buffer or on disk', () => {
    const p = propose('a\n', 'b\n');
    assert.equal(isBaseUnchanged(p, 'a\n'), true);
    assert.equal(isBaseUnchanged(p, 'a\nuser typed\n'), false);
    assert.equal(isBaseUnchanged(p, undefined), false, 'the file was deleted');
  });

  it('a decision is a new record under the same id; the entry shows the newest', () => {
    const p = propose('a\n', 'b\n');
    setProposalState(session, p, 'accepted');
    const entries = transcriptOf(session).filter((e) => e.kind === 'proposal');
    assert.equal(entries.length, 1);
    assert.equal(entries[0]?.kind === 'proposal' && entries[0].state, 'accepted');
    assert.deepEqual(pendingProposals(session.all()), []);
  });
});

describe('making the proposed text', () => {
  it('replaces exactly one passage, or says why not', () => {
    assert.deepEqual(applyEditRequest('a b c', { oldText: 'b', newText: 'B' }, 'f'), { next: 'a B c' });
    assert.match((applyEditRequest('a b b', { oldText: 'b', newText: 'B' }, 'f') as { refused: string }).refused, /more than once/);
    assert.match((applyEditRequest('a', { oldText: 'z', newText: 'B' }, 'f') as { refused: string }).refused, /not found/);
    assert.deepEqual(applyEditRequest('old', { content: 'new' }, 'f'), { next: 'new' });
  });
});
