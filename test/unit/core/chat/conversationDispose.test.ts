import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openConversation } from '../../../../src/core/chat/openConversation';
import { noTools } from '../../../../src/core/chat/tools';
import { DriftLog } from '../../../../src/core/context';
import { silentLogger } from '../../../../src/core/log';
import { Session } from '../../../../src/core/session/session';
import type { Subscription } from '../../../../src/core/subscription';
import { modelAt } from '../provider/models';

/** The session's subscriptions still live: each `onAppend` counted until its subscription is disposed. */
function countSubscriptions(session: Session): Set<Subscription> {
  const live = new Set<Subscription>();
  const onAppend = session.onAppend.bind(session);
  session.onAppend = (listener) => {
    const subscription = onAppend(listener);
    const counted: Subscription = {
      dispose: () => {
        live.delete(counted);
        subscription.dispose();
      },
    };
    live.add(counted);
    return counted;
  };
  return live;
}

describe('a conversation stops following its session when disposed', () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-conversation-dispose-'));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('New Session leaves no listener of the old conversation on the old session', async () => {
    const session = Session.create(path.join(dir, 'sessions'), 'demo');
    const live = countSubscriptions(session);
    // No request is made: the model's address is never called.
    const model = modelAt('http://127.0.0.1:9');
    const conversation = openConversation(session, {
      driftLog: new DriftLog(path.join(dir, 'drift.jsonl')),
      summaryModel: model,
      identity: () => ({ provider: 'test', model: 'm' }),
      provider: async () => model,
      settings: () => ({ contextWindow: 100_000, thresholdPercent: 80, keepTurns: 2 }),
      prompt: { systemPrompt: async () => ({ text: 'You are Candor.', prompt: 'You are Candor.' }) },
      tools: () => noTools,
      emit: () => undefined,
      log: silentLogger,
    });
    assert.equal(live.size, 1, 'the conversation follows the session it was opened on');
    conversation.dispose();
    assert.equal(live.size, 0, 'and no longer once disposed');
    await session.flushed();
  });
});
