import assert from 'node:assert/strict';
import { ContextGate } from '../../../../src/core/context/gate';
import { PayloadLedger } from '../../../../src/core/context/ledger';
import { ServerCounts, type ServerCount } from '../../../../src/core/context/serverCounts';
import { ToolRenderings } from '../../../../src/core/context/toolRendering';
import { FamilyTokenizer } from '../../../../src/core/context/tokenizer/familyTokenizer';
import { runCommandTool, type CommandToolPorts } from '../../../../src/core/commands/runCommandTool';
import { noUnsavedBuffers } from '../../../../src/core/git/unsaved';
import type { ChatMessage, ToolSpec } from '../../../../src/core/messages';
import { serverPromptCount } from '../../../../src/core/provider/serverCount';
import { readFamilyFacts } from '../../../../src/core/provider/serverFamily';
import { buildSystemPrompt, BUILT_IN_PROMPT } from '../../../../src/core/prompt/systemPrompt';
import { agentTools } from '../../../../src/core/tools/agentTools';
import { MemoryDriftSink } from '../../../helpers/core';
import { installedFamilyModules } from '../../../helpers/installedModules';
import { llamaOrSkip, startLlama, type LlamaServer } from '../../../helpers/llamaServer';

/** Candor's own tools in a trusted workspace with commands on: what its first request sends. */
const CANDOR_TOOLS: readonly ToolSpec[] = [
  ...agentTools({ roots: () => [], repository: async () => undefined, unsaved: noUnsavedBuffers, proposeEdit: async () => '', remember: async () => '' }).specs(),
  // Only its definition is read here: no port is used to build it.
  runCommandTool({} as CommandToolPorts).spec,
];
const SYSTEM = buildSystemPrompt({ prompt: BUILT_IN_PROMPT, memory: '', toolNames: CANDOR_TOOLS.map((t) => t.function.name) }).text;

/** A session with everything a template frames differently: calls with and without text, results in a row, CJK, leading and trailing white space. */
const SESSION: readonly ChatMessage[] = [
  { role: 'user', content: 'hi' },
  {
    role: 'assistant',
    content: null,
    tool_calls: [
      { id: 'call_1', type: 'function', function: { name: 'list_files', arguments: '{"path":"src/ü"}' } },
      { id: 'call_2', type: 'function', function: { name: 'git_status', arguments: '{}' } },
    ],
  },
  { role: 'tool', tool_call_id: 'call_1', content: 'a.ts\nb.ts\n\n' },
  { role: 'tool', tool_call_id: 'call_2', content: '  nothing to commit  ' },
  { role: 'assistant', content: 'Two files, 两个文件.\n' },
  { role: 'user', content: '\n\nRead a.ts, then run the tests: `npm test -- --grep "x"`' },
  { role: 'assistant', content: 'Reading it.', tool_calls: [{ id: 'call_3', type: 'function', function: { name: 'read_file', arguments: '{"path": "a.ts", "n": [1, 2.5, {"x": null}]}' } }] },
  { role: 'tool', tool_call_id: 'call_3', content: 'export const 值 = 1;\n' },
];

describe('exact counts on a real llama.cpp server: its template, its tokenizer', function () {
  this.timeout(120_000);
  let server: LlamaServer;
  let qwen3: FamilyTokenizer;
  before(async function () {
    const found = llamaOrSkip(this);
    server = await startLlama(found, { ctx: 8192 });
    qwen3 = new FamilyTokenizer('qwen3', installedFamilyModules());
  });
  after(async () => {
    qwen3?.dispose();
    await server?.stop();
  });

  /** The server's own count of a request: `prompt_tokens` of a real completion (the request as the SDK sends it, one token of reply). */
  async function promptTokens(messages: readonly ChatMessage[], tools: readonly ToolSpec[]): Promise<number> {
    const body = { model: 'any', messages, ...(tools.length > 0 ? { tools } : {}), max_tokens: 1 };
    const response = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const reply = (await response.json()) as { usage?: { prompt_tokens?: number } };
    return reply.usage?.prompt_tokens ?? -1;
  }

  async function ledgerCount(history: readonly ChatMessage[], tools: readonly ToolSpec[]): Promise<number> {
    const ledger = new PayloadLedger();
    ledger.useCounter(qwen3);
    ledger.reset(history, '');
    const rendering = new ToolRenderings().of({ provider: `127-0-0-1-${server.port}`, model: server.modelPath }, tools);
    ledger.measure(SYSTEM, rendering);
    await ledger.counted();
    const measure = ledger.measure(SYSTEM, rendering);
    assert.equal(measure.pending, 0);
    return measure.tokens;
  }

  it('the server says the model is a Qwen3 (its template and vocabulary), though its path has "llama" in it, and that it counts prompts itself', async () => {
    assert.match(server.modelPath, /llama/);
    const reading = await readFamilyFacts('llamacpp', server.origin, server.modelPath, { signal: AbortSignal.timeout(5000) });
    assert.deepEqual(reading, { facts: { family: 'qwen3', counting: 'llamacpp' }, answered: true });
  });

  it("Candor's first request (its real system prompt, \"hi\", its tools), counted with Qwen3's tokenizer and template, is the server's prompt_tokens to the token", async () => {
    const messages: ChatMessage[] = [{ role: 'system', content: SYSTEM }, { role: 'user', content: 'hi' }];
    const real = await promptTokens(messages, CANDOR_TOOLS);
    assert.ok(real > 1000, `a first request of over a thousand tokens (${real})`);
    assert.equal(await ledgerCount(messages.slice(1), CANDOR_TOOLS), real);
  });

  it('a whole session (calls, results in a row, CJK, white space at either end) counts as the server counts it, with tools and without', async () => {
    for (const tools of [CANDOR_TOOLS, []]) {
      const real = await promptTokens([{ role: 'system', content: SYSTEM }, ...SESSION], tools);
      assert.equal(await ledgerCount(SESSION, tools), real, `${tools.length} tools`);
    }
  });

  it("the server's own count (/apply-template + /tokenize) is its prompt_tokens, and lands on the gate as \"counted by the server\" without a request waiting for it", async () => {
    const messages: ChatMessage[] = [{ role: 'system', content: SYSTEM }, ...SESSION];
    const real = await promptTokens(messages, CANDOR_TOOLS);
    const count = serverPromptCount('llamacpp', server.origin, server.modelPath);
    assert.equal(await count({ messages, tools: CANDOR_TOOLS }, AbortSignal.timeout(10_000)), real);

    // A model Candor has no tokenizer of: the estimate has a band until the server's count lands.
    const identity = { provider: `127-0-0-1-${server.port}`, model: server.modelPath };
    const ledger = new PayloadLedger();
    ledger.reset(SESSION, '');
    const measure = ledger.measure(SYSTEM, new ToolRenderings().of(identity, CANDOR_TOOLS));
    const gate = new ContextGate({ session: 's', sink: new MemoryDriftSink() });
    const before = gate.project(identity, measure);
    assert.equal(before.source, 'estimate');
    assert.ok(before.band > 0);
    const landed = new Promise<ServerCount>((resolve) => new ServerCounts().ask(identity, measure.mark, measure.tokens, count, () => ({ messages, tools: CANDOR_TOOLS }), resolve));
    gate.serverCounted(await landed);
    const after = gate.project(identity, ledger.measure(SYSTEM, new ToolRenderings().of(identity, CANDOR_TOOLS)));
    assert.deepEqual([after.source, after.projected, after.band], ['server', real, 0]);
  });
});
