import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';
import { parseScenario, type Scenario } from '../../../../src/core/offline/scenario';
import { modelAt } from '../provider/models';
import type { Conversation } from '../../../../src/core/chat/conversation';
import { openConversation } from '../../../../src/core/chat/openConversation';
import type { RequestTrace } from '../../../../src/core/chat/ports';
import { noTools, parseArgs, type ToolHost } from '../../../../src/core/chat/tools';
import { Session } from '../../../../src/core/session/session';
import { DriftLog } from '../../../../src/core/context';
import { silentLogger } from '../../../../src/core/log';
import { buildSystemPrompt } from '../../../../src/core/prompt/systemPrompt';
import type { ChatModel, StreamRequest } from '../../../../src/core/provider/chatModel';
import { appendQueue } from '../../../../src/core/jsonl';

const identity = { provider: 'offline', model: 'candor-offline' };
const PROMPT = 'You are Candor, under test.';

const listFiles: ToolHost = {
  specs: () => [{ type: 'function', function: { name: 'list_files', description: 'list', parameters: { type: 'object', properties: { path: { type: 'string' } } } } }],
  run: async (_name, args) => `files under ${String(parseArgs(args).path)}: a.txt`,
};

/** The shipped adapter over the real offline server, with every request it is asked to send kept for the test to read. */
function recording(model: ChatModel, sent: StreamRequest[]): ChatModel {
  return {
    identity: model.identity,
    policy: model.policy,
    stream: (request, options) => {
      sent.push(request);
      return model.stream(request, options);
    },
    complete: (messages, signal) => model.complete(messages, signal),
  };
}

describe('the system prompt: built once per request, listing exactly the tools the request sends', () => {
  let dir: string;
  let server: OfflineServer;
  let scenario: Scenario;
  let builds: Array<readonly string[]>;
  let sent: StreamRequest[];
  let traces: RequestTrace[];

  beforeEach(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'candor-system-prompt-'));
    server = await startOfflineServer({ scenario: () => scenario, countTokens: (t) => Math.ceil(t.length / 4) });
    builds = [];
    sent = [];
    traces = [];
  });
  afterEach(async () => {
    await server.close();
    await appendQueue.flushed(); // the session's lines land before their folder goes
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function open(tools: ToolHost): Conversation {
    const session = Session.create(path.join(dir, 'sessions'), 'demo');
    return openConversation(session, {
      driftLog: new DriftLog(path.join(dir, 'drift.jsonl')),
      summaryModel: modelAt(server.baseUrl, { identity }),
      identity: () => identity,
      // The heuristic will do here: what is counted is how often the prompt is built.
      tokenizer: () => undefined,
      provider: async () => recording(modelAt(server.baseUrl, { identity }), sent),
      settings: () => ({ contextWindow: 100_000, thresholdPercent: 80, keepTurns: 2 }),
      // What the host does: the prompt file and memory read, and the tool list, each time it is asked.
      prompt: {
        systemPrompt: async (toolNames) => {
          builds.push(toolNames);
          return buildSystemPrompt({ prompt: PROMPT, memory: 'uses tabs', toolNames });
        },
      },
      tools: () => tools,
      emit: () => undefined,
      log: silentLogger,
      trace: (t) => traces.push(t),
    });
  }

  it('one build per request: a plain turn builds it once (the gauge after the turn reuses it), a tool turn once per request', async () => {
    scenario = parseScenario({ rules: [{ match: { lastRole: 'tool' }, respond: { text: 'done' } }, { match: { user: 'list' }, respond: { toolCalls: [{ name: 'list_files', arguments: { path: 'src' } }] } }, { respond: { text: 'hello' } }] });
    const chat = open(listFiles);
    await chat.send('hi');
    assert.equal(sent.length, 1);
    assert.equal(builds.length, 1, 'one request, one build');
    await chat.send('list the files');
    assert.equal(sent.length, 3);
    assert.equal(builds.length, 3, 'two requests, two builds');
    assert.equal(sent[2]?.messages[0]?.content, buildSystemPrompt({ prompt: PROMPT, memory: 'uses tabs', toolNames: ['list_files'] }).text);
  });

  it('the system prompt lists the tools the request sends; with none (an untrusted workspace) it lists none', async () => {
    scenario = parseScenario({ rules: [{ respond: { text: 'hello' } }] });
    await open(listFiles).send('hi');
    assert.deepEqual(sent[0]?.tools?.map((t) => t.function.name), ['list_files']);
    assert.match(String(sent[0]?.messages[0]?.content), /## Tools\nlist_files/);

    sent.length = 0;
    await open(noTools).send('hi');
    assert.equal(sent[0]?.tools?.length ?? 0, 0, 'the request sends no tools');
    assert.doesNotMatch(String(sent[0]?.messages[0]?.content), /## Tools/, 'and the system prompt names none');
    assert.match(String(sent[0]?.messages[0]?.content), /uses tabs/);
  });

  it('each trace carries the prompt its request was built from, for the trace writer to tag', async () => {
    scenario = parseScenario({ rules: [{ respond: { text: 'hello' } }] });
    await open(listFiles).send('hi');
    assert.equal(traces.length, 1);
    assert.equal(traces[0]?.prompt, PROMPT);
  });
});
