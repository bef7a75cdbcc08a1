import * as assert from 'node:assert/strict';
import { noUnsavedBuffers } from '../../../../src/core/git/unsaved';
import { agentTools } from '../../../../src/core/tools/agentTools';
import { toolSpec } from '../../../../src/core/messages';
import { stringArg, toolHost, type Tool } from '../../../../src/core/tools/toolHost';

const signal = new AbortController().signal;

const echo: Tool = {
  spec: toolSpec('echo', 'Says its text back.', { text: { type: 'string' } }, ['text']),
  run: async (args) => stringArg(args, 'text'),
};
const broken: Tool = {
  spec: toolSpec('broken', 'Always fails.', {}),
  run: async () => {
    throw new Error('the disk is on fire');
  },
};

describe('tool host: every call answers with text, never a crash of the turn', () => {
  it('runs a known tool with its JSON arguments', async () => {
    assert.equal(await toolHost([echo]).run('echo', '{"text":"hi"}', signal), 'hi');
  });

  it('names the tools there are when the model calls one that does not exist', async () => {
    assert.equal(await toolHost([echo, broken]).run('rm_rf', '{}', signal), 'Error: there is no tool "rm_rf". Tools: echo, broken.');
  });

  it('says the arguments are not a JSON object, for malformed JSON and for an array alike', async () => {
    const host = toolHost([echo]);
    assert.match(await host.run('echo', '{"text":', signal), /^Error: the arguments are not a JSON object \(/);
    assert.match(await host.run('echo', '["hi"]', signal), /^Error: the arguments are not a JSON object \(tool arguments must be a JSON object\)\.$/);
  });

  it('turns a throwing tool and a wrongly typed argument into the call\'s error text', async () => {
    assert.equal(await toolHost([broken]).run('broken', '', signal), 'Error: the disk is on fire');
    assert.equal(await toolHost([echo]).run('echo', '{"text":5}', signal), 'Error: "text" must be a string');
  });

  it('bounds every result with the caller\'s rule', async () => {
    const host = toolHost([echo], { bound: (text) => `${text.slice(0, 3)}[cut]` });
    assert.equal(await host.run('echo', '{"text":"abcdef"}', signal), 'abc[cut]');
  });

  it('builds specs that forbid unknown properties, in the order the tools were given', () => {
    const host = toolHost([echo, broken]);
    assert.deepEqual(host.specs().map((s) => s.function.name), ['echo', 'broken']);
    assert.deepEqual(host.specs()[0]?.function.parameters, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false });
  });

  it("offers the chat's tools in a fixed order, propose_edit and remember only when the host can do them", () => {
    const ports = { roots: () => [], repository: async () => undefined, unsaved: noUnsavedBuffers };
    const names = (host: ReturnType<typeof agentTools>): string[] => host.specs().map((s) => s.function.name);
    assert.deepEqual(names(agentTools(ports)), ['read_file', 'list_files', 'search_text', 'git_status', 'git_diff', 'git_log']);
    const full = agentTools({ ...ports, proposeEdit: async () => 'proposed', remember: async () => 'saved' });
    assert.deepEqual(names(full), ['read_file', 'list_files', 'search_text', 'git_status', 'git_diff', 'git_log', 'propose_edit', 'remember']);
  });
});
