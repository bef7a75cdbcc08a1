import * as assert from 'node:assert/strict';

import { MESSAGE_OWNERS, MessageRouter, type MessageOf, type WebviewMessageType } from '../../../../src/host/chat/router';
import type { WebviewMessage } from '../../../../src/protocol/chat';
import { MemoryLogger } from '../../../helpers/core';

/** One well-formed message of every type; the compiler refuses this table if a type is missing. */
const SAMPLES: { readonly [T in WebviewMessageType]: MessageOf<T> } = {
  ready: { type: 'ready' },
  send: { type: 'send', text: 'hello' },
  stop: { type: 'stop' },
  retry: { type: 'retry' },
  runCommand: { type: 'runCommand', command: 'candor.showDrift' },
  feedback: { type: 'feedback', entryId: 'e1', value: 'up' },
  dismissRant: { type: 'dismissRant', id: '01abc' },
  takeBranch: { type: 'takeBranch', branch: 'candor/rant-01abc' },
  showDiff: { type: 'showDiff', branch: 'candor/rant-01abc' },
  openPullRequest: { type: 'openPullRequest', branch: 'candor/rant-01abc' },
  loadOlder: { type: 'loadOlder', session: '01s', before: '01m' },
  find: { type: 'find', session: '01s', query: 'needle', direction: 'older' },
  approval: { type: 'approval', id: '01a', decision: 'always', prefix: 'npm test' },
  proposal: { type: 'proposal', id: '01p', decision: 'accept' },
};
const TYPES = Object.keys(SAMPLES) as WebviewMessageType[];

/** The features as services.ts registers them, each handler recording what reached it. */
function wired(): { router: MessageRouter; log: MemoryLogger; calls: Array<[string, WebviewMessage]> } {
  const log = new MemoryLogger();
  const router = new MessageRouter(log, (raw) => JSON.stringify(raw).slice(0, 60));
  const calls: Array<[string, WebviewMessage]> = [];
  const record = (name: string) => (message: WebviewMessage): void => {
    calls.push([name, message]);
  };
  router.register('chat view', { ready: record('ready'), runCommand: record('runCommand') });
  router.register('chat', { send: record('send'), stop: record('stop'), retry: record('retry'), loadOlder: record('loadOlder'), find: record('find') });
  router.register('evolution', { dismissRant: record('dismissRant'), takeBranch: record('takeBranch'), showDiff: record('showDiff'), openPullRequest: record('openPullRequest') });
  router.register('prompt evolution', { feedback: record('feedback') });
  router.register('approvals', { approval: record('approval') });
  router.register('proposals', { proposal: record('proposal') });
  return { router, log, calls };
}

describe('routing the chat view\'s messages to the features that own them', () => {
  for (const type of TYPES) {
    it(`a '${type}' message reaches its handler, and no other`, async () => {
      const { router, calls } = wired();
      const result = await router.route(JSON.parse(JSON.stringify(SAMPLES[type])));
      assert.equal(result.outcome, 'handled');
      assert.deepEqual(calls, [[type, SAMPLES[type]]]);
    });
  }

  for (const [what, raw] of [
    ['null', null],
    ['an unknown type', { type: 'eval', code: '1' }],
    ['a known type with an extra field', { type: 'stop', also: 'this' }],
    ['a command outside the allow-list', { type: 'runCommand', command: 'workbench.action.terminal.sendSequence' }],
    ['a branch with an option in it', { type: 'takeBranch', branch: 'candor/--upload-pack=x' }],
  ] as const) {
    it(`${what} is logged and dropped: no handler runs`, async () => {
      const { router, log, calls } = wired();
      assert.deepEqual(await router.route(raw), { outcome: 'malformed' });
      assert.deepEqual(calls, []);
      assert.equal(log.lines.filter((l) => l.startsWith('[warn] ignored a malformed message from the chat view')).length, 1, log.lines.join('\n'));
    });
  }

  it('a message no feature registered for is logged and dropped', async () => {
    const log = new MemoryLogger();
    const router = new MessageRouter(log, String);
    router.register('chat', { send: () => assert.fail('not this one'), stop: () => assert.fail('not this one'), retry: () => assert.fail('not this one'), loadOlder: () => assert.fail('not this one'), find: () => assert.fail('not this one') });
    assert.deepEqual(await router.route({ type: 'feedback', entryId: 'e', value: 'down' }), { outcome: 'unowned', type: 'feedback' });
    assert.ok(log.lines.some((l) => l.includes("no feature handles 'feedback'")));
  });

  it('a handler that throws is logged; the next message is still routed', async () => {
    const log = new MemoryLogger();
    const router = new MessageRouter(log, String);
    const seen: string[] = [];
    router.register('evolution', {
      dismissRant: async () => {
        throw new Error('rants.jsonl is gone');
      },
      takeBranch: () => undefined,
      openPullRequest: () => undefined,
      showDiff: (m) => {
        seen.push(m.branch);
      },
    });
    assert.deepEqual(await router.route(SAMPLES.dismissRant), { outcome: 'failed', type: 'dismissRant', owner: 'evolution' });
    assert.ok(log.lines.some((l) => l.startsWith('[error] evolution') && l.includes('rants.jsonl is gone')));
    assert.equal((await router.route(SAMPLES.showDiff)).outcome, 'handled');
    assert.deepEqual(seen, ['candor/rant-01abc']);
  });

  it('each message type has one owner, and every owner\'s table holds only its own types', () => {
    assert.deepEqual(Object.keys(MESSAGE_OWNERS).sort(), [...TYPES].sort());
    const router = new MessageRouter(new MemoryLogger(), String);
    // The compiler refuses both of these; the router refuses them too, for a table built at run time.
    assert.throws(() => router.register('chat', { send: () => undefined, stop: () => undefined, retry: () => undefined, feedback: () => undefined } as never), /'feedback' messages belong to prompt evolution, not chat/);
    router.register('prompt evolution', { feedback: () => undefined });
    assert.throws(() => router.register('prompt evolution', { feedback: () => undefined }), /registered its handlers twice/);
  });
});
