// How a completed reply is kept: its thinking sent (and counted) only to a
// server that takes it back, and a cut reply's words naming what set the limit.
import * as assert from 'node:assert/strict';
import { cutText, keptReply } from '../../../../src/core/chat/replyRecord';
import { messageParts } from '../../../../src/core/context/messageParts';
import type { CompletedRequest } from '../../../../src/core/provider/chatModel';

const reply: CompletedRequest = { content: 'Done.', reasoning: 'The files are listed', toolCalls: [], finishReason: 'stop', usage: { promptTokens: 100, completionTokens: 9 } };

describe('a completed reply as the session keeps it', () => {
  it('thinking is kept for the view, and in the message (sent, and so counted) only for a server that takes it back', () => {
    const dropped = keptReply(reply, { preserveReasoning: false });
    assert.equal(dropped.reasoning, 'The files are listed');
    assert.equal(dropped.message.reasoning_content, undefined);
    assert.ok(!messageParts(dropped.message).includes('The files are listed'), 'not sent, not counted');
    const kept = keptReply(reply, { preserveReasoning: true });
    assert.equal(kept.message.reasoning_content, 'The files are listed');
    assert.ok(messageParts(kept.message).includes('The files are listed'), 'sent, and counted');
  });

  it('a cut reply names the setting when the limit was candor.maxOutputTokens, and the server otherwise', () => {
    const cut = { ...reply, finishReason: 'length' };
    assert.equal(cutText({ ...cut, usage: { promptTokens: 1, completionTokens: 4096 } }, 4096, 0), 'Cut at the output limit: 4,096 tokens (candor.maxOutputTokens). Raise the setting for longer replies.');
    assert.equal(cutText({ ...cut, usage: { promptTokens: 1, completionTokens: 64 } }, 4096, 2), 'Cut at the output limit: 64 tokens, before candor.maxOutputTokens (4,096): the server stopped the reply (its own output limit, or its context window is full). Its tool calls were not run.');
    assert.equal(cutText({ ...cut, usage: undefined }, undefined, 0), 'Cut at the output limit: the server stopped the reply (its own output limit, or its context window is full).');
  });

  it('a cut call without a name (cut before it) is dropped; a named one goes back with {} and a result that says why', () => {
    const cut: CompletedRequest = { ...reply, content: '', finishReason: 'length', toolCalls: [
      { id: 'a', type: 'function', function: { name: 'read_file', arguments: '{"path": "src/ma' } },
      { id: 'b', type: 'function', function: { name: '', arguments: '' } },
    ] };
    const kept = keptReply(cut, { maxOutputTokens: 12 });
    assert.deepEqual(kept.message.tool_calls?.map((c) => [c.id, c.function.name, c.function.arguments]), [['a', 'read_file', '{}']]);
    assert.deepEqual(kept.cutCalls, [{ id: 'a', arguments: '{"path": "src/ma' }]);
    assert.deepEqual(kept.cutResults.map((m) => (m.role === 'tool' ? m.tool_call_id : '')), ['a']);
  });
});
