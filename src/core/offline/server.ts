import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { countPrompt } from './promptCount';
import type { Scenario, ScenarioRule, ScriptedToolCall } from './scenario';

/**
 * The embedded offline provider: an OpenAI-compatible HTTP server on a
 * loopback port, answering from a scenario. The same `openai` SDK talks to it
 * as to any provider, so nothing in the chat path knows it is a demo.
 */

export interface OfflineServerOptions {
  /** Returns the scenario in force; called per request so a reloaded file applies at once. */
  readonly scenario: () => Scenario;
  /** Token count of a text, for usage numbers (js-tiktoken's o200k in the extension); prompts are counted as OpenAI counts them (promptCount.ts). */
  readonly countTokens: (text: string) => number | Promise<number>;
  readonly host?: string;
  readonly port?: number;
}

export interface SeenRequest {
  readonly path: string;
  readonly model: string;
  readonly stream: boolean;
  readonly lastUser: string;
  readonly system: string;
  readonly messageCount: number;
  /** Whether the body carried `stream_options`. */
  readonly streamOptions: boolean;
}

export interface OfflineServer {
  readonly baseUrl: string;
  /** Every chat request received, oldest first. */
  readonly requests: readonly SeenRequest[];
  /** Forget how often each rule fired (the scenario changed). */
  resetCounts(): void;
  close(): Promise<void>;
}

interface IncomingMessage {
  role?: string;
  content?: unknown;
}

interface ChatPayload {
  model?: string;
  messages?: IncomingMessage[];
  tools?: unknown;
  stream?: boolean;
  stream_options?: unknown;
}

/** What one server remembers between requests. */
interface ServerState {
  readonly options: OfflineServerOptions;
  readonly fired: Map<ScenarioRule, number>;
  readonly requests: SeenRequest[];
}

export async function startOfflineServer(options: OfflineServerOptions): Promise<OfflineServer> {
  const state: ServerState = { options, fired: new Map(), requests: [] };
  const sockets = new Set<import('node:net').Socket>();
  const server = http.createServer((req, res) => {
    handle(state, req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(err), type: 'server_error' } });
      else res.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const address = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${address.port}/v1`,
    requests: state.requests,
    resetCounts: () => state.fired.clear(),
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The two routes an OpenAI-compatible client needs: the model list and chat completions. */
async function handle(state: ServerState, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const url = new URL(req.url ?? '/', 'http://offline');
  if (req.method === 'GET' && url.pathname.endsWith('/models')) {
    const models = state.options.scenario().models ?? ['candor-offline'];
    sendJson(res, 200, { object: 'list', data: models.map((id) => ({ id, object: 'model', created: 0, owned_by: 'candor-offline' })) });
    return;
  }
  if (req.method !== 'POST' || !url.pathname.endsWith('/chat/completions')) {
    sendJson(res, 404, { error: { message: `no route ${req.method} ${url.pathname}`, type: 'not_found' } });
    return;
  }
  let payload: ChatPayload;
  try {
    payload = JSON.parse(await readBody(req)) as ChatPayload;
  } catch {
    sendJson(res, 400, { error: { message: 'request body is not JSON', type: 'invalid_request_error' } });
    return;
  }
  await handleChat(state, url.pathname, payload, res);
}

/** One chat request: recorded, matched to the scenario's first rule that fits, answered as that rule says. */
async function handleChat(state: ServerState, path: string, payload: ChatPayload, res: http.ServerResponse): Promise<void> {
  const messages = Array.isArray(payload.messages) ? payload.messages : [];
  const model = typeof payload.model === 'string' ? payload.model : '';
  const seen: SeenRequest = {
    path,
    model,
    stream: payload.stream === true,
    lastUser: lastText(messages, 'user'),
    system: lastText(messages, 'system'),
    messageCount: messages.length,
    streamOptions: payload.stream_options !== undefined,
  };
  state.requests.push(seen);
  const rule = pickRule(state.options.scenario(), seen, messages, state.fired);
  if (!rule) {
    sendJson(res, 404, { error: { message: 'the scenario has no rule for this request', type: 'not_found' } });
    return;
  }
  if (rule.rejectStreamOptions && seen.streamOptions) {
    // Refused before anything was read: the rule has not answered yet.
    sendJson(res, 400, { error: { message: 'stream_options is not supported by this server', type: 'invalid_request_error', param: 'stream_options' } });
    return;
  }
  state.fired.set(rule, (state.fired.get(rule) ?? 0) + 1);
  const respond = rule.respond;
  if ('error' in respond) {
    await sleep(rule.holdMs ?? 0);
    const headers: Record<string, string> = {};
    if (respond.error.retryAfterSeconds !== undefined) headers['retry-after'] = String(respond.error.retryAfterSeconds);
    sendJson(res, respond.error.status, { error: { message: respond.error.message ?? `scripted HTTP ${respond.error.status}`, type: 'scripted_error' } }, headers);
    return;
  }
  const text = fillTemplate('text' in respond && respond.text ? respond.text : '', seen, messages);
  const toolCalls = 'toolCalls' in respond ? respond.toolCalls : [];
  const { countTokens } = state.options;
  const promptTokens = await countPrompt(messages, Array.isArray(payload.tools) ? (payload.tools as unknown[]) : [], countTokens);
  let completionTokens = await countTokens(text);
  for (const call of toolCalls) completionTokens += await countTokens(JSON.stringify(call.arguments ?? {}));
  const usage = usageOf(rule, rule.promptTokens ?? promptTokens, completionTokens);
  const id = `chatcmpl-offline-${state.requests.length}`;
  if (seen.stream) await streamReply(res, { id, model, text, toolCalls, usage, rule });
  else {
    await sleep(rule.holdMs ?? 0);
    sendJson(res, 200, completionBody(id, model, text, toolCalls, usage));
  }
}

function pickRule(scenario: Scenario, seen: SeenRequest, messages: IncomingMessage[], fired: Map<ScenarioRule, number>): ScenarioRule | undefined {
  const lastRole = messages.length > 0 ? messages[messages.length - 1]?.role : undefined;
  return scenario.rules.find((rule) => {
    if (rule.times !== undefined && (fired.get(rule) ?? 0) >= rule.times) return false;
    const match = rule.match;
    if (!match) return true;
    if (match.model !== undefined && match.model !== seen.model) return false;
    if (match.lastRole !== undefined && match.lastRole !== lastRole) return false;
    if (match.user !== undefined && !new RegExp(match.user, 'i').test(seen.lastUser)) return false;
    if (match.system !== undefined && !new RegExp(match.system, 'i').test(seen.system)) return false;
    return true;
  });
}

interface StreamPlan {
  readonly id: string;
  readonly model: string;
  readonly text: string;
  readonly toolCalls: readonly ScriptedToolCall[];
  readonly usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  readonly rule: ScenarioRule;
}

async function streamReply(res: http.ServerResponse, plan: StreamPlan): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const chunk = (delta: object, finish: string | null = null): string =>
    `data: ${JSON.stringify({ id: plan.id, object: 'chat.completion.chunk', created: 0, model: plan.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const closed = (): boolean => res.destroyed || res.writableEnded;
  res.write(chunk({ role: 'assistant', content: '' }));
  await sleep(plan.rule.holdMs ?? 0);
  const size = Math.max(1, plan.rule.chunkChars ?? 6);
  const pause = plan.rule.chunkDelayMs ?? 10;
  // With usageOnContentChunk the last piece of text waits for the chunk that ends the reply.
  const lastPiece = plan.rule.usageOnContentChunk && plan.toolCalls.length === 0 && plan.text.length > 0
    ? plan.text.slice(Math.floor((plan.text.length - 1) / size) * size)
    : '';
  const body = plan.text.slice(0, plan.text.length - lastPiece.length);
  let sent = 0;
  for (let i = 0; i < body.length; i += size) {
    if (closed()) return;
    if (plan.rule.cutAfterChars !== undefined && sent >= plan.rule.cutAfterChars) {
      res.destroy();
      return;
    }
    if (plan.rule.malformedAfterChars !== undefined && sent >= plan.rule.malformedAfterChars) {
      res.write('data: {"id": "broken", "choices": [ {"delta": \n\n');
      res.end();
      return;
    }
    const piece = body.slice(i, i + size);
    res.write(chunk({ content: piece }));
    sent += piece.length;
    await sleep(pause);
  }
  if (plan.rule.cutAfterChars !== undefined && sent >= plan.rule.cutAfterChars && plan.toolCalls.length === 0) {
    res.destroy();
    return;
  }
  plan.toolCalls.forEach((call, index) => {
    res.write(chunk({ tool_calls: [{ index, id: `call_${plan.id}_${index}`, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments ?? {}) } }] }));
  });
  if (closed()) return;
  const finish = plan.toolCalls.length > 0 ? 'tool_calls' : 'stop';
  if (plan.rule.usageOnContentChunk) {
    const last = { id: plan.id, object: 'chat.completion.chunk', created: 0, model: plan.model, choices: [{ index: 0, delta: lastPiece ? { content: lastPiece } : {}, finish_reason: finish }], ...(plan.usage ? { usage: plan.usage } : {}) };
    res.write(`data: ${JSON.stringify(last)}\n\n`);
  } else res.write(chunk({}, finish));
  if (plan.usage && !plan.rule.usageOnContentChunk) {
    res.write(`data: ${JSON.stringify({ id: plan.id, object: 'chat.completion.chunk', created: 0, model: plan.model, choices: [], usage: plan.usage })}\n\n`);
  }
  res.write('data: [DONE]\n\n');
  res.end();
}

type UsageNumbers = NonNullable<StreamPlan['usage']>;

function usageOf(rule: ScenarioRule, promptTokens: number, completionTokens: number): UsageNumbers | undefined {
  if (rule.usage === false) return undefined;
  if (rule.zeroUsage) return { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  return { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
}

function completionBody(id: string, model: string, text: string, toolCalls: readonly ScriptedToolCall[], usage: StreamPlan['usage']): object {
  return {
    id,
    object: 'chat.completion',
    created: 0,
    model,
    choices: [
      {
        index: 0,
        finish_reason: toolCalls.length > 0 ? 'tool_calls' : 'stop',
        message: {
          role: 'assistant',
          content: text,
          tool_calls: toolCalls.length > 0
            ? toolCalls.map((c, i) => ({ id: `call_${id}_${i}`, type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments ?? {}) } }))
            : undefined,
        },
      },
    ],
    usage,
  };
}

function messageText(message: IncomingMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => (p && typeof p === 'object' && 'text' in p ? String(p.text) : '')).join('');
  return '';
}

function lastText(messages: readonly IncomingMessage[], role: string): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    const message = messages[i];
    if (message?.role === role) return messageText(message);
  }
  return '';
}

function fillTemplate(text: string, seen: SeenRequest, messages: readonly IncomingMessage[]): string {
  const last = messages[messages.length - 1];
  const toolChars = last?.role === 'tool' ? messageText(last).length : 0;
  return text
    .replaceAll('{{user}}', seen.lastUser.replace(/\s+/g, ' ').slice(0, 200))
    .replaceAll('{{model}}', seen.model)
    .replaceAll('{{toolChars}}', String(toolChars));
}

function sendJson(res: http.ServerResponse, status: number, body: object, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

function readBody(req: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sleep(ms: number): Promise<void> {
  return ms > 0 ? new Promise((r) => setTimeout(r, ms)) : Promise.resolve();
}
