import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Approvals } from '../../../../src/core/approvals/approvals';
import type { ApprovalAsk, ApprovalRecord } from '../../../../src/core/session/records';
import { Session } from '../../../../src/core/session/session';
import { transcriptOf } from '../../../helpers/core';

const ASK: ApprovalAsk = { kind: 'command', command: 'npm test', folder: 'app', network: false, noTerminal: null };

function approvalsIn(session: Session): ApprovalRecord[] {
  return session.all().filter((r): r is ApprovalRecord => r.type === 'approval');
}

describe('calls that wait for the user in the chat', () => {
  let dir: string;
  let session: Session;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-approvals-'));
    session = Session.create(dir, 'app');
  });
  afterEach(async () => {
    await session.flushed();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('shows the call as pending, then as the user decided, under one entry', async () => {
    const approvals = new Approvals();
    const { id, outcome } = approvals.ask(session, 't1', ASK, new AbortController().signal);
    assert.deepEqual(transcriptOf(session).map((e) => e.kind === 'approval' && e.decision), ['pending']);
    assert.equal(approvals.answer(id, { decision: 'run' }), true);
    assert.deepEqual(await outcome, { decision: 'run' });
    const entries = transcriptOf(session);
    assert.equal(entries.length, 1, 'the answer replaces the pending entry');
    assert.equal(entries[0]?.kind === 'approval' && entries[0].decision, 'allowed');
  });

  it('Always Allow records the prefix the user chose, and Deny is written as denied', async () => {
    const approvals = new Approvals();
    const always = approvals.ask(session, 't1', ASK, new AbortController().signal);
    approvals.answer(always.id, { decision: 'always', prefix: 'npm' });
    assert.deepEqual(await always.outcome, { decision: 'always', prefix: 'npm' });
    const deny = approvals.ask(session, 't1', ASK, new AbortController().signal);
    approvals.answer(deny.id, { decision: 'deny' });
    await deny.outcome;
    const latest = new Map(approvalsIn(session).map((r) => [r.id, r]));
    assert.equal(latest.get(always.id)?.auto, 'Always Allow "npm"');
    assert.equal(latest.get(deny.id)?.decision, 'denied');
  });

  it('Stop ends the wait at once, and a late answer is refused, not applied', async () => {
    const approvals = new Approvals();
    const stop = new AbortController();
    const { id, outcome } = approvals.ask(session, 't1', ASK, stop.signal);
    stop.abort();
    assert.deepEqual(await outcome, { decision: 'stopped' });
    // Tried: the webview answers a call whose turn was stopped.
    assert.equal(approvals.answer(id, { decision: 'run' }), false);
    assert.equal(approvalsIn(session).at(-1)?.decision, 'stopped');
  });

  it('an answer naming an unknown id changes nothing', () => {
    const approvals = new Approvals();
    approvals.ask(session, 't1', ASK, new AbortController().signal);
    const before = session.all().length;
    assert.equal(approvals.answer('01nosuchcall', { decision: 'run' }), false);
    assert.equal(session.all().length, before);
  });

  it('a reopened session shows no button that does nothing: calls a closed window left pending are written as stopped', async () => {
    new Approvals().ask(session, 't1', ASK, new AbortController().signal);
    await session.flushed();
    const reopened = Session.open(session.file);
    const fresh = new Approvals();
    fresh.settleOrphans(reopened);
    const entry = transcriptOf(reopened).find((e) => e.kind === 'approval');
    assert.equal(entry?.kind === 'approval' && entry.decision, 'stopped');
    assert.match(entry?.kind === 'approval' ? entry.outcome ?? '' : '', /did not run/);
    await reopened.flushed();
  });

  it('output and outcome are written onto the same call', () => {
    const approvals = new Approvals();
    const id = approvals.allowed(session, 't1', ASK, 'Always Allow "npm test"');
    approvals.update(session, id, { output: 'ok 1\n', outcome: 'exit 0 in 0.1 s' });
    const entry = transcriptOf(session).find((e) => e.kind === 'approval');
    assert.deepEqual(entry, { id, kind: 'approval', ask: ASK, decision: 'allowed', auto: 'Always Allow "npm test"', output: 'ok 1\n', outcome: 'exit 0 in 0.1 s' });
  });
});
