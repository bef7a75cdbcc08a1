import * as assert from 'node:assert/strict';
import { buildSystemPrompt, promptSource } from '../../../../src/core/prompt/systemPrompt';

describe('prompt source: the system prompt of the prompt in use and the memory, read for each request', () => {
  it('reads the prompt and the memory anew for every request', async () => {
    let prompt = 'first prompt';
    let memory: string | undefined = undefined;
    const source = promptSource({ prompt: async () => prompt, memory: async () => memory });
    assert.deepEqual(await source.systemPrompt(['read_file']), buildSystemPrompt({ prompt: 'first prompt', toolNames: ['read_file'] }));
    prompt = 'second prompt';
    memory = '- the build uses make';
    const second = await source.systemPrompt([]);
    assert.equal(second.prompt, 'second prompt');
    assert.match(second.text, /^second prompt\n\n## Workspace memory[^\n]*\n- the build uses make$/);
  });

  it('is byte-stable while its inputs do not change', async () => {
    const source = promptSource({ prompt: async () => 'p', memory: async () => 'm' });
    assert.equal((await source.systemPrompt(['b', 'a'])).text, (await source.systemPrompt(['b', 'a'])).text);
  });
});
