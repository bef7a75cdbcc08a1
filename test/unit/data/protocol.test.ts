import * as assert from 'node:assert/strict';
import { MAX_SEND_CHARS, parseWebviewMessage } from '../../../src/protocol/chat';

describe('messages from the webview are untrusted input', () => {
  it('accepts each message of the protocol in its exact shape', () => {
    assert.deepEqual(parseWebviewMessage({ type: 'ready' }), { type: 'ready' });
    assert.deepEqual(parseWebviewMessage({ type: 'send', text: 'hi' }), { type: 'send', text: 'hi' });
    assert.deepEqual(parseWebviewMessage({ type: 'runCommand', command: 'candor.selectModel' }), { type: 'runCommand', command: 'candor.selectModel' });
    assert.deepEqual(parseWebviewMessage({ type: 'feedback', entryId: 'abc', value: 'down' }), { type: 'feedback', entryId: 'abc', value: 'down' });
    assert.deepEqual(parseWebviewMessage({ type: 'dismissRant', id: '01abc' }), { type: 'dismissRant', id: '01abc' });
    assert.deepEqual(parseWebviewMessage({ type: 'takeBranch', branch: 'candor/rant-01abc' }), { type: 'takeBranch', branch: 'candor/rant-01abc' });
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
  ] as const) {
    it(`drops ${what}`, () => assert.equal(parseWebviewMessage(raw), undefined));
  }
});
