import * as assert from 'node:assert/strict';
import { isHandoffBranchName } from '../../../src/core/git/allowList';
import { MAX_FIND_CHARS, MAX_PREFIX_CHARS, MAX_SEND_CHARS, parseWebviewMessage as parseWith, type WebviewMessageRules } from '../../../src/protocol/chat';

/** The rules the chat view's router passes: the core's. */
const RULES: WebviewMessageRules = { isBranchName: isHandoffBranchName };
const parseWebviewMessage = (value: unknown) => parseWith(value, RULES);

describe('messages from the webview are untrusted input', () => {
  it('accepts each message of the protocol in its exact shape', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'ready' }), { type: 'ready' });
    assert.deepEqual(parseWebviewMessage({ type: 'approval', id: '01a', decision: 'run' }), { type: 'approval', id: '01a', decision: 'run' });
    assert.deepEqual(parseWebviewMessage({ type: 'approval', id: '01a', decision: 'always', prefix: 'npm test' }), { type: 'approval', id: '01a', decision: 'always', prefix: 'npm test' });
    assert.deepEqual(parseWebviewMessage({ type: 'proposal', id: '01p', decision: 'show' }), { type: 'proposal', id: '01p', decision: 'show' });
    assert.deepEqual(parseWebviewMessage({ type: 'send', text: 'hi' }), { type: 'send', text: 'hi' });
    assert.deepEqual(parseWebviewMessage({ type: 'runCommand', command: 'candor.selectModel' }), { type: 'runCommand', command: 'candor.selectModel' });
    assert.deepEqual(parseWebviewMessage({ type: 'feedback', entryId: 'abc', value: 'down' }), { type: 'feedback', entryId: 'abc', value: 'down' });
    assert.deepEqual(parseWebviewMessage({ type: 'dismissRant', id: '01abc' }), { type: 'dismissRant', id: '01abc' });
    assert.deepEqual(parseWebviewMessage({ type: 'takeBranch', branch: 'candor/rant-01abc' }), { type: 'takeBranch', branch: 'candor/rant-01abc' });
    assert.deepEqual(parseWebviewMessage({ type: 'openPullRequest', branch: 'candor/rant-01abc' }), { type: 'openPullRequest', branch: 'candor/rant-01abc' });
    assert.deepEqual(parseWebviewMessage({ type: 'loadOlder', session: '01s', before: '01m:call_1' }), { type: 'loadOlder', session: '01s', before: '01m:call_1' });
    assert.deepEqual(parseWebviewMessage({ type: 'find', session: '01s', query: 'needle', direction: 'older' }), { type: 'find', session: '01s', query: 'needle', direction: 'older' });
    assert.deepEqual(
      parseWebviewMessage({ type: 'find', session: '01s', query: 'needle', direction: 'newer', from: '01a', oldest: '01b' }),
      { type: 'find', session: '01s', query: 'needle', direction: 'newer', from: '01a', oldest: '01b' },
    );
  });

  for (const [what, raw] of [
    ['null', null],
    ['a string', 'send'],
    ['an array', [{ type: 'send', text: 'x' }]],
    ['an unknown type', { type: 'eval', code: '1' }],
    ['send without text', { type: 'send' }],
    ['send with a number', { type: 'send', text: 42 }],
    ['send with only spaces', { type: 'send', text: '   ' }],
    ['send over the size limit', { type: 'send', text: 'x'.repeat(MAX_SEND_CHARS + 1) }],
    ['an extra field', { type: 'stop', also: 'this' }],
    ['a command outside the allow-list', { type: 'runCommand', command: 'workbench.action.terminal.sendSequence' }],
    ['feedback with another value', { type: 'feedback', entryId: 'a', value: 'meh' }],
    ['a rant id with a path in it', { type: 'dismissRant', id: '../../etc' }],
    ['a branch outside candor/', { type: 'takeBranch', branch: 'main' }],
    ['a branch with an option in it', { type: 'takeBranch', branch: 'candor/--upload-pack=x' }],
    ['a pull request for a branch outside candor/', { type: 'openPullRequest', branch: 'main' }],
    ['a pull request for a refspec', { type: 'openPullRequest', branch: '+candor/rant-1:refs/heads/main' }],
    ['loadOlder without an entry', { type: 'loadOlder', session: '01s' }],
    ['loadOlder with an empty entry id', { type: 'loadOlder', session: '01s', before: '' }],
    ['loadOlder with an id longer than any entry has', { type: 'loadOlder', session: '01s', before: 'x'.repeat(513) }],
    ['loadOlder with an extra field', { type: 'loadOlder', session: '01s', before: 'a', count: 1e9 }],
    ['find with only spaces', { type: 'find', session: '01s', query: '   ', direction: 'older' }],
    ['find over the size limit', { type: 'find', session: '01s', query: 'x'.repeat(MAX_FIND_CHARS + 1), direction: 'older' }],
    ['find in another direction', { type: 'find', session: '01s', query: 'x', direction: 'sideways' }],
    ['find from a number', { type: 'find', session: '01s', query: 'x', direction: 'older', from: 7 }],
    ['find without a session', { type: 'find', query: 'x', direction: 'older' }],
    ['an approval with another decision', { type: 'approval', id: '01a', decision: 'sudo' }],
    ['an approval without an id', { type: 'approval', decision: 'run' }],
    ['a prefix on a plain Run', { type: 'approval', id: '01a', decision: 'run', prefix: 'rm' }],
    ['an empty prefix for Always Allow', { type: 'approval', id: '01a', decision: 'always', prefix: '  ' }],
    ['a prefix over the size limit', { type: 'approval', id: '01a', decision: 'always', prefix: 'x'.repeat(MAX_PREFIX_CHARS + 1) }],
    ['an approval with an extra field', { type: 'approval', id: '01a', decision: 'run', command: 'rm -rf ~' }],
    ['a proposal answer with another decision', { type: 'proposal', id: '01p', decision: 'apply-anyway' }],
    ['a proposal answer with a numeric id', { type: 'proposal', id: 7, decision: 'accept' }],
  ] as const) {
    it(`drops ${what}`, () => assert.equal(parseWebviewMessage(raw), undefined));
  }
});
