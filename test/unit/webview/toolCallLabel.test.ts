import * as assert from 'node:assert/strict';
import { toolCallLabel } from '../../../webview/toolCallLabel';

describe('a tool call in the chat: the tool and what it was asked, not the size of its JSON', () => {
  it('no arguments say so; arguments are named with their values, clipped to a row', () => {
    assert.equal(toolCallLabel('list_files', '{}'), 'Tool call: list_files (no arguments)');
    assert.equal(toolCallLabel('list_files', ''), 'Tool call: list_files (no arguments)');
    assert.equal(toolCallLabel('list_files', '{"path":".","depth":2}'), 'Tool call: list_files — path: ".", depth: 2');
    const long = toolCallLabel('read_file', JSON.stringify({ path: `src/${'a'.repeat(100)}.ts`, start: 1, end: 40, encoding: 'utf8' }));
    assert.ok(long.length <= 'Tool call: read_file — '.length + 80, long);
    assert.match(long, /^Tool call: read_file — path: "src\/a+…/);
    assert.doesNotMatch(long, /chars\)/);
  });

  it('arguments that are not a JSON object (a model\'s cut-off call) are shown as they came, on one line', () => {
    assert.equal(toolCallLabel('search_text', '{"query": "to'), 'Tool call: search_text — {"query": "to');
    assert.equal(toolCallLabel('x', '[1,\n2]'), 'Tool call: x — [1, 2]');
  });
});
