import assert from 'node:assert/strict';
import { Content } from '../../../../bench/mixedSession';
import { encodingForModel, type TokenCounter } from '../../../../src/core/context/estimator';
import type { Identity } from '../../../../src/core/modelIdentity';
import { ContextGate } from '../../../../src/core/context/gate';
import { heuristicTokens } from '../../../../src/core/context/heuristic';
import { PayloadLedger } from '../../../../src/core/context/ledger';
import { renderTools, toolFamilyOf, ToolRenderings, type ToolFamily } from '../../../../src/core/context/toolRendering';
import { WorkerTokenizer } from '../../../../src/core/context/tokenizer/workerTokenizer';
import type { ChatMessage, ToolSpec } from '../../../../src/core/messages';
import { buildSystemPrompt, BUILT_IN_PROMPT } from '../../../../src/core/prompt/systemPrompt';
import { agentTools } from '../../../../src/core/tools/agentTools';
import { noUnsavedBuffers } from '../../../../src/core/git/unsaved';
import { MemoryDriftSink } from '../../../helpers/core';
import { installedTokenizerModules } from '../../../helpers/installedModules';
import {
  COOKBOOK_API_COUNTS,
  COOKBOOK_NAMED_MESSAGES,
  COOKBOOK_TOOL_MESSAGES,
  COOKBOOK_TOOLS,
  recipeRequest,
  recipeTools,
  referenceEncoding,
  type CookbookModel,
  type WireMessage,
} from './openaiReference';

/** The tools Candor sends in a trusted workspace, as the host builds them. */
const CANDOR_TOOLS = agentTools({
  roots: () => [],
  repository: async () => undefined,
  unsaved: noUnsavedBuffers,
  proposeEdit: async () => '',
  remember: async () => '',
}).specs();

const openai = (model: string): Identity => ({ provider: 'api-openai-com', model });

describe('gate/tool rendering: tool definitions counted as the provider counts them', function () {
  this.timeout(90_000);
  const workers = new Map<string, WorkerTokenizer>();
  const worker = (model: string): WorkerTokenizer => {
    const encoding = encodingForModel(model) ?? 'o200k_base';
    let found = workers.get(encoding);
    if (!found) workers.set(encoding, (found = new WorkerTokenizer(encoding, installedTokenizerModules())));
    return found;
  };
  after(() => {
    for (const w of workers.values()) w.dispose();
  });

  /**
   * The first request of a session, before any anchor: what the gauge shows, from the production ledger and
   * gate. `exact: false` is the moment before the tokenizer has loaded: its counts are on their way, and the
   * heuristic stands in for them.
   */
  async function firstProjection(identity: Identity, system: string, history: readonly WireMessage[], tools: readonly ToolSpec[], exact: boolean): Promise<number> {
    const ledger = new PayloadLedger();
    const loading: TokenCounter = { name: worker(identity.model).name, count: () => new Promise<number[]>(() => undefined) };
    ledger.useCounter(exact ? worker(identity.model) : loading);
    ledger.reset(history as ChatMessage[], '');
    const rendering = new ToolRenderings().of(identity, tools);
    ledger.measure(system, rendering);
    if (exact) await ledger.counted();
    const gate = new ContextGate({ session: 's', sink: new MemoryDriftSink() });
    const projection = gate.project(identity, ledger.measure(system, rendering));
    assert.equal(projection.anchored, false);
    assert.equal(projection.estimator, 'tokenizer');
    assert.equal(projection.pending > 0, !exact);
    return projection.projected;
  }

  it('the cookbook\'s example requests project, before any anchor, exactly what the OpenAI API reported for each model', async () => {
    for (const model of Object.keys(COOKBOOK_API_COUNTS.tools) as CookbookModel[]) {
      const encoding = referenceEncoding(model);
      // The independent recipe reproduces the provider's figures: it is a fair reference for the rest.
      assert.equal(recipeRequest(COOKBOOK_TOOL_MESSAGES, COOKBOOK_TOOLS, encoding), COOKBOOK_API_COUNTS.tools[model], `${model}: recipe`);
      assert.equal(recipeRequest(COOKBOOK_NAMED_MESSAGES, [], encoding), COOKBOOK_API_COUNTS.namedMessages[model], `${model}: recipe`);
      assert.equal(await firstProjection(openai(model), '', COOKBOOK_TOOL_MESSAGES, COOKBOOK_TOOLS, true), COOKBOOK_API_COUNTS.tools[model], `${model}: one tool with an enum`);
      assert.equal(await firstProjection(openai(model), '', COOKBOOK_NAMED_MESSAGES, [], true), COOKBOOK_API_COUNTS.namedMessages[model], `${model}: named messages`);
    }
  });

  it('Candor\'s own first request (its system prompt, "hi", its 8 tools) projects OpenAI\'s count for gpt-4o, and within 10% before the tokenizer has loaded; the raw JSON it counted before was a third over', async () => {
    const system = buildSystemPrompt({ prompt: BUILT_IN_PROMPT, toolNames: CANDOR_TOOLS.map((t) => t.function.name) }).text;
    const messages: WireMessage[] = [{ role: 'system', content: system }, { role: 'user', content: 'hi' }];
    for (const model of ['gpt-4o', 'gpt-4o-mini']) {
      const reference = recipeRequest(messages, CANDOR_TOOLS, 'o200k_base');
      const projected = await firstProjection(openai(model), system, [{ role: 'user', content: 'hi' }], CANDOR_TOOLS, true);
      assert.ok(Math.abs(projected - reference) / reference <= 0.02, `${model}: ${projected} against ${reference}`);
      assert.equal(projected, reference, 'exactly, in fact');
      // Before the tokenizer has loaded, the prior's rates stand in for its counts: within 10%.
      const standIn = await firstProjection(openai(model), system, [{ role: 'user', content: 'hi' }], CANDOR_TOOLS, false);
      assert.ok(Math.abs(standIn - reference) / reference <= 0.1, `${model}, before the tokenizer has loaded: ${standIn} against ${reference}`);
      // The trap: the plain heuristic, 4 characters per token, is more than 10% over for English.
      const plain = new PayloadLedger();
      plain.reset([{ role: 'user', content: 'hi' }], '');
      const heuristic = plain.measure(system, new ToolRenderings().of(openai(model), CANDOR_TOOLS)).tokens;
      assert.ok((heuristic - reference) / reference > 0.1, `the plain heuristic: ${heuristic} against ${reference}`);
      // The trap: the tool list as raw JSON at 4 characters per token, as it was counted before.
      const withoutTools = await firstProjection(openai(model), system, [{ role: 'user', content: 'hi' }], [], false);
      const before = withoutTools + heuristicTokens(JSON.stringify(CANDOR_TOOLS));
      assert.ok((before - reference) / reference > 0.3, `raw JSON: ${before} against ${reference}`);
    }
  });

  it('the offline demo\'s first request, before any anchor, is within 10% of what the offline provider counts for it: the prior\'s rates and the frames no text carries', () => {
    const system = buildSystemPrompt({ prompt: BUILT_IN_PROMPT, toolNames: CANDOR_TOOLS.map((t) => t.function.name) }).text;
    const reference = recipeRequest([{ role: 'system', content: system }, { role: 'user', content: 'hi' }], CANDOR_TOOLS, 'o200k_base');
    const demo: Identity = { provider: 'offline', model: 'candor-offline' };
    const ledger = new PayloadLedger();
    ledger.reset([{ role: 'user', content: 'hi' }], '');
    const measure = ledger.measure(system, new ToolRenderings().of(demo, CANDOR_TOOLS));
    const projection = new ContextGate({ session: 's', sink: new MemoryDriftSink() }).project(demo, measure);
    assert.equal(projection.estimator, 'heuristic');
    assert.ok(Math.abs(projection.projected - reference) / reference <= 0.1, `${projection.projected} against ${reference}`);
    // The trap: the rates alone leave out the tool definitions' frames and the reply's priming, about a quarter of this request.
    assert.ok((measure.constants ?? 0) / reference > 0.2, `the frames: ${measure.constants} of ${reference}`);
  });

  it('a seeded mixed session (code, JSON, CJK, tool calls with long ids): every request within 0.5% of the recipe, ids left out', async () => {
    const content = new Content(7);
    const model = 'gpt-4o';
    const ledger = new PayloadLedger();
    ledger.useCounter(worker(model));
    const renderings = new ToolRenderings();
    const system = 'You are Candor, a coding assistant.';
    const history: ChatMessage[] = [];
    let worst = 0;
    let idTokens = 0;
    let last = 0;
    for (let step = 0; step < 120; step++) {
      const message = withLongId(content.message(step), step);
      history.push(message);
      ledger.append(message);
      if (message.role === 'tool') idTokens += heuristicTokens(message.tool_call_id);
      for (const call of message.role === 'assistant' ? message.tool_calls ?? [] : []) idTokens += heuristicTokens(call.id);
      if (step % 10 !== 9) continue;
      ledger.measure(system, renderings.of(openai(model), CANDOR_TOOLS));
      await ledger.counted();
      const measure = ledger.measure(system, renderings.of(openai(model), CANDOR_TOOLS));
      assert.equal(measure.pending, 0);
      const measured = measure.tokens;
      const reference = recipeRequest([{ role: 'system', content: system }, ...(history as WireMessage[])], CANDOR_TOOLS, 'o200k_base');
      worst = Math.max(worst, Math.abs(measured - reference) / reference);
      last = reference;
    }
    assert.ok(worst <= 0.005, `worst ${(worst * 100).toFixed(3)}%`);
    // The trap: the ids, counted as before, are more than the whole tolerance.
    assert.ok(idTokens / last > 0.005, `the ids would have added about ${idTokens} tokens to ${last}`);
  });

  it('each definition has a count of its own, the recipe\'s for that tool alone; they add up to the list\'s', async () => {
    const ledger = new PayloadLedger();
    ledger.useCounter(worker('gpt-4o'));
    const rendering = renderTools('openai', CANDOR_TOOLS, 'gpt-4o');
    ledger.measure('', rendering);
    await ledger.counted();
    const counts = ledger.toolCounts(rendering);
    assert.equal(counts.tools.length, CANDOR_TOOLS.length);
    for (const [i, tool] of CANDOR_TOOLS.entries()) {
      assert.equal(counts.tools[i]?.name, tool.function.name);
      assert.equal(counts.tools[i]?.tokens, recipeTools([tool], 'o200k_base', false), tool.function.name);
    }
    assert.equal(counts.tokens, recipeTools(CANDOR_TOOLS, 'o200k_base'));
    assert.equal(counts.tokens, ledger.measure('', rendering).mark.tools.tokens);
  });

  it('picks the family from the provider slug and the OpenAI model names alone: a model path with "llama" in it is no Llama', () => {
    const cases: Array<[string, string, ToolFamily]> = [
      ['api-openai-com', 'gpt-4o', 'openai'],
      ['localhost-4000', 'gpt-4o-mini', 'openai'], // an OpenAI model through a local proxy
      ['offline', 'candor-offline', 'openai'],
      ['api-deepseek-com', 'deepseek-chat', 'openai'],
      ['openrouter-ai', 'anthropic/claude-3.5-sonnet', 'openai'],
      ['127-0-0-1-11434', 'llama3.1:8b', 'ollama'], // Ollama prints each definition as compact JSON
      ['127-0-0-1-11434', 'qwen2.5-coder', 'ollama'],
      // llama.cpp names a model by its file path: a Qwen3 under a llama.cpp folder was read as a Llama (+20.5%).
      ['127-0-0-1-8080', '/home/u/llama.cpp/models/Qwen3-8B-Q4_K_M.gguf', 'json'],
      ['127-0-0-1-8080', 'llama-3.1-8b-instruct', 'json'], // the family of a local model comes from the server's metadata
      ['127-0-0-1-1234', 'meta-llama-3.1-8b-instruct', 'json'],
      ['api-groq-com', 'llama-3.3-70b-versatile', 'openai'],
      ['127-0-0-1-8000', 'Qwen/Qwen2.5-7B-Instruct', 'json'],
      ['localhost-8080', 'mistral-small', 'json'],
      ['-1-8080', 'phi-4', 'json'], // [::1]
    ];
    for (const [provider, model, family] of cases) assert.equal(toolFamilyOf({ provider, model }), family, `${model} @ ${provider}`);
  });

  it('a Jinja template writes each definition as tojson does, with ", " and ": ": Ollama\'s Go templates compactly', () => {
    const local = new ToolRenderings().of({ provider: '127-0-0-1-8080', model: 'model.gguf' }, CANDOR_TOOLS);
    for (const [i, tool] of local.tools.entries()) {
      const text = tool.texts.join('');
      assert.match(text, /^\{"type": "function", "function": \{"name": /);
      assert.deepEqual(JSON.parse(text), CANDOR_TOOLS[i]);
    }
    const ollama = new ToolRenderings().of({ provider: '127-0-0-1-11434', model: 'qwen3:8b' }, CANDOR_TOOLS);
    assert.match(ollama.tools[0]?.texts[0] ?? '', /^\{"type":"function","function":\{"name":/);
  });

  it('the list is rendered once while it is unchanged, and again when a tool or the family changes', () => {
    const renderings = new ToolRenderings();
    const gpt = openai('gpt-4o');
    const first = renderings.of(gpt, [...CANDOR_TOOLS]);
    assert.equal(renderings.of(gpt, [...CANDOR_TOOLS]), first, 'a fresh array of the same definitions is the same list');
    const fewer = renderings.of(gpt, CANDOR_TOOLS.slice(1));
    assert.notEqual(fewer, first);
    assert.notEqual(fewer.key, first.key);
    const local = renderings.of({ provider: '127-0-0-1-8080', model: 'llama-3.1-8b-instruct' }, CANDOR_TOOLS.slice(1));
    assert.equal(local.family, 'json');
    // gpt-4 (cl100k) opens each function with 10 tokens, gpt-4o with 7.
    const cl100k = renderings.of(openai('gpt-4'), CANDOR_TOOLS.slice(1));
    assert.equal(cl100k.tools[0]?.overhead, (fewer.tools[0]?.overhead ?? 0) + 3);
  });
});

/** OpenAI's ids are `call_` and 24 letters and digits. */
function withLongId(message: ChatMessage, step: number): ChatMessage {
  const id = `call_${(step * 2654435761).toString(36).padEnd(24, 'Qx7v2kP9mZtR4wLs8NbY1cDe').slice(0, 24)}`;
  if (message.role === 'assistant' && message.tool_calls) return { ...message, tool_calls: message.tool_calls.map((call) => ({ ...call, id })) };
  if (message.role === 'tool') return { ...message, tool_call_id: `call_${((step - 1) * 2654435761).toString(36).padEnd(24, 'Qx7v2kP9mZtR4wLs8NbY1cDe').slice(0, 24)}` };
  return message;
}
