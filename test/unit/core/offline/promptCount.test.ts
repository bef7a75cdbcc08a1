import * as assert from 'node:assert/strict';
import { finalReply } from '../../../../src/core/provider/finalReply';
import { Content } from '../../../../bench/mixedSession';
import { WorkerTokenizer } from '../../../../src/core/context/tokenizer/workerTokenizer';
import { noUnsavedBuffers } from '../../../../src/core/git/unsaved';
import type { ChatMessage, ToolSpec } from '../../../../src/core/messages';
import { parseScenario } from '../../../../src/core/offline/scenario';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { agentTools } from '../../../../src/core/tools/agentTools';
import { installedTokenizerModules } from '../../../helpers/installedModules';
import {
  COOKBOOK_API_COUNTS,
  COOKBOOK_NAMED_MESSAGES,
  COOKBOOK_TOOL_MESSAGES,
  COOKBOOK_TOOLS,
  recipeRequest,
  recipeTools,
  type WireMessage,
} from '../context/openaiReference';
import { modelAt } from '../provider/models';

const CANDOR_TOOLS = agentTools({ roots: () => [], repository: async () => undefined, unsaved: noUnsavedBuffers, proposeEdit: async () => '', remember: async () => '' }).specs();

describe('the offline provider counts a prompt as OpenAI does (over HTTP, js-tiktoken o200k as in the extension)', function () {
  this.timeout(60_000);
  let o200k: WorkerTokenizer;
  let server: OfflineServer;

  before(async () => {
    o200k = new WorkerTokenizer('o200k_base', installedTokenizerModules());
    await o200k.ready;
  });
  after(() => o200k.dispose());
  beforeEach(async () => {
    const scenario = parseScenario({ rules: [{ respond: { text: 'ok' }, chunkChars: 100 }] });
    // What the extension gives it: one text at a time, counted in the tokenizer's worker thread.
    server = await startOfflineServer({ scenario: () => scenario, countTokens: async (text) => (await o200k.count([text]))[0] ?? 0 });
  });
  afterEach(async () => server.close());

  /** prompt_tokens of one streamed request through the shipped adapter, as the chat sends it. */
  async function promptTokens(messages: readonly WireMessage[], tools: readonly ToolSpec[] = []): Promise<number | undefined> {
    const model = modelAt(server.baseUrl, { identity: { provider: 'offline', model: 'gpt-4o' } });
    const result = await finalReply(model.stream({ messages: messages as ChatMessage[], tools: [...tools] }));
    return result.usage?.promptTokens;
  }

  it('reports for the cookbook\'s example requests what the OpenAI API reported for gpt-4o', async () => {
    assert.equal(await promptTokens(COOKBOOK_TOOL_MESSAGES, COOKBOOK_TOOLS), COOKBOOK_API_COUNTS.tools['gpt-4o'], 'one tool with an enum');
    assert.equal(await promptTokens(COOKBOOK_NAMED_MESSAGES), COOKBOOK_API_COUNTS.namedMessages['gpt-4o'], 'roles and names');
  });

  it('counts the tool definitions: the difference they make is OpenAI\'s rendering of them, not the raw JSON (which it used to leave out)', async () => {
    const messages: WireMessage[] = [{ role: 'system', content: 'You are Candor.' }, { role: 'user', content: 'hi' }];
    const without = await promptTokens(messages);
    const withTools = await promptTokens(messages, CANDOR_TOOLS);
    assert.equal((withTools ?? 0) - (without ?? 0), recipeTools(CANDOR_TOOLS, 'o200k_base'));
    const [rawJson] = await o200k.count([JSON.stringify(CANDOR_TOOLS)]);
    assert.ok((rawJson ?? 0) > 1.3 * ((withTools ?? 0) - (without ?? 0)), 'the raw JSON would be a third more');
  });

  it('a mixed session with tool calls and their results: the recipe\'s count, computed independently with gpt-tokenizer; ids not counted', async () => {
    const content = new Content(11);
    const history: WireMessage[] = [{ role: 'system', content: 'You are Candor, a coding assistant.' }];
    for (let step = 0; step < 40; step++) history.push(content.message(step) as WireMessage);
    assert.equal(await promptTokens(history, CANDOR_TOOLS), recipeRequest(history, CANDOR_TOOLS, 'o200k_base'));
    // The same session with ids ten times as long: the same count.
    const longIds = history.map((m): WireMessage => (m.role === 'tool' ? { ...m, tool_call_id: `${m.tool_call_id ?? ''}${'Qx7v2kP9mZ'.repeat(3)}` } : m));
    assert.equal(await promptTokens(longIds, CANDOR_TOOLS), recipeRequest(history, CANDOR_TOOLS, 'o200k_base'));
  });

  it('reads the body as loosely as a provider: tools without a function and messages that are not objects are skipped, not a server error', async () => {
    const body = { model: 'gpt-4o', stream: false, messages: [null, 'text', { role: 'user', content: 'hi' }], tools: [{ type: 'function' }, 7, ...COOKBOOK_TOOLS] };
    const response = await fetch(`${server.baseUrl}/chat/completions`, { method: 'POST', body: JSON.stringify(body) });
    assert.equal(response.status, 200);
    const usage = ((await response.json()) as { usage: { prompt_tokens: number } }).usage;
    assert.equal(usage.prompt_tokens, recipeRequest([{ role: 'user', content: 'hi' }], COOKBOOK_TOOLS, 'o200k_base'));
  });
});
