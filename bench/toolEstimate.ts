/**
 * What estimating 100 MCP tool definitions costs the send path
 * (docs/architecture.md, "Context gate"). A real server (the fixture
 * test/fixtures/mcp/hundred.mjs) started by a real McpServers, its tools
 * offered by mcpToolHost and joined as the chat joins its tool sets, and
 * counted the way Conversation.measure counts a request: the tool list
 * rendered for the provider's family (ToolRenderings.of) and the payload
 * measured by a PayloadLedger holding a history, with the o200k tokenizer
 * in its worker thread, as for gpt-4o.
 *
 * The definitions are counted when the list changes, not per request: the
 * first request after the list landed builds the specs, renders them and
 * measures them (their exact counts then land in the background); every
 * later request should only add up what is known.
 */
import * as path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Approvals } from '../src/core/approvals/approvals';
import type { ToolHost } from '../src/core/chat/tools';
import type { Identity } from '../src/core/modelIdentity';
import { PayloadLedger } from '../src/core/context/ledger';
import { providerSlug } from '../src/core/providerSlug';
import { WorkerTokenizer } from '../src/core/context/tokenizer/workerTokenizer';
import { ToolRenderings } from '../src/core/context/toolRendering';
import { silentLogger } from '../src/core/log';
import { mcpToolHost, type McpToolHost } from '../src/core/mcp/mcpTools';
import { McpServers } from '../src/core/mcp/servers';
import type { McpServerDefinition } from '../src/core/mcp/types';
import { expandServer } from '../src/core/mcp/variables';
import type { ChatMessage } from '../src/core/messages';
import { buildSystemPrompt, BUILT_IN_PROMPT } from '../src/core/prompt/systemPrompt';
import { SecretSet } from '../src/core/redact';
import { joinToolHosts } from '../src/core/tools/toolHost';
import { installedTokenizerModules } from '../test/helpers/installedModules';
import { Content } from './mixedSession';

const HUNDRED = path.resolve(__dirname, '../test/fixtures/mcp/hundred.mjs');
/** First requests measured, each with a tool host and a chat of its own over the same running server. */
const FIRSTS = 15;
const REQUESTS = 1000;
const WARMUP = 200;
const HISTORY = 200;
const IDENTITY: Identity = { provider: providerSlug('https://api.openai.com/v1'), model: 'gpt-4o' };

export interface ToolEstimateReport {
  readonly tools: number;
  /** The list's count once its exact counts landed. */
  readonly tokens: number;
  /** From ensureStarted to the list in hand: the server's start, initialize and tools/list (once, off the send path). */
  readonly listedMs: number;
  /** The first request after the list landed: the very first (cold), and the median over FIRSTS fresh hosts and chats. */
  readonly first: { readonly coldMs: number; readonly specsMs: number; readonly renderMs: number; readonly measureMs: number; readonly totalMs: number };
  /** Medians of every later request: specs() and the measure, with the 100 tools and with none. */
  readonly cachedMs: number;
  readonly noToolsMs: number;
  readonly firsts: number;
  readonly requests: number;
}

/** The send path's three steps for the estimate, timed apart. */
interface Steps {
  /** The tool host's specs(), the joined list the request sends. */
  readonly specs: number;
  /** The list rendered for the provider's family (ToolRenderings.of). */
  readonly render: number;
  /** The payload measured by the ledger. */
  readonly measure: number;
}

const total = (s: Steps): number => s.specs + s.render + s.measure;

/** The chat's side of requests: its tool renderings and its ledger, used as Conversation.measure uses them. */
class Chat {
  readonly ledger = new PayloadLedger();
  readonly renderings = new ToolRenderings();

  constructor(
    private readonly tools: ToolHost,
    private readonly counter: WorkerTokenizer,
    history: readonly ChatMessage[],
  ) {
    this.ledger.useCounter(counter);
    this.ledger.reset(history, 'bench');
  }

  /**
   * One request's estimate. Its system prompt is built between specs() and
   * the measure, as the chat builds it, untimed: a new string per request
   * either way.
   */
  request(system: (toolNames: readonly string[]) => string): Steps {
    const t0 = performance.now();
    const specs = this.tools.specs();
    const t1 = performance.now();
    const text = system(specs.map((spec) => spec.function.name));
    const t2 = performance.now();
    const rendering = this.renderings.of(IDENTITY, specs);
    const t3 = performance.now();
    this.ledger.useCounter(this.counter);
    const measured = this.ledger.measure(text, rendering);
    const t4 = performance.now();
    if (measured.tokens <= 0) throw new Error('the payload measured no tokens');
    return { specs: t1 - t0, render: t3 - t2, measure: t4 - t3 };
  }

  /** The tool list's tokens as the ledger holds them now. */
  toolTokens(): number {
    return this.ledger.toolCounts(this.renderings.of(IDENTITY, this.tools.specs())).tokens;
  }
}

/** McpServers over fixed definitions, confirmed without asking, and its tool host with ports that never ask either. */
function serversOf(defs: readonly McpServerDefinition[]): { servers: McpServers; host: () => McpToolHost } {
  const secrets = new SecretSet([]);
  const servers = new McpServers({
    definitions: async () => ({ servers: [...defs], problems: [] }),
    expand: (def) => expandServer(def, { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' }, allowedEnvNames: [], inputs: [], input: async () => undefined }),
    confirm: async () => true,
    log: silentLogger,
    secrets,
  });
  const host = (): McpToolHost =>
    mcpToolHost(servers, {
      approvals: new Approvals(),
      secrets,
      isAlwaysAllowed: () => false,
      rememberAlways: async () => undefined,
      autoApproveReadOnly: () => false,
      callTimeoutMs: () => 10_000,
    });
  return { servers, host };
}

const median = (values: readonly number[]): number => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

/** The system prompt of a request, built anew (a fresh string, which the ledger's lookup hashes again). */
function systemPrompt(memory: string): (toolNames: readonly string[]) => string {
  return (toolNames) => buildSystemPrompt({ prompt: BUILT_IN_PROMPT, memory, toolNames }).text;
}

export async function measureToolEstimate(): Promise<ToolEstimateReport> {
  const content = new Content(11);
  const history: ChatMessage[] = Array.from({ length: HISTORY }, (_, step) => content.message(step));
  const memory = new Content(5).english(300);
  const hundred = serversOf([{ name: 'hundred', source: { kind: 'user' }, type: 'stdio', command: process.execPath, args: [HUNDRED], env: {} }]);
  const none = serversOf([]);
  const counter = new WorkerTokenizer('o200k_base', installedTokenizerModules());
  try {
    const listing = performance.now();
    await hundred.servers.ensureStarted(new AbortController().signal);
    const listedMs = performance.now() - listing;
    const listed = hundred.servers.running()[0]?.connection.tools().length ?? 0;
    if (listed !== 100) throw new Error(`the fixture listed ${listed} tools, not 100: ${JSON.stringify(hundred.servers.status())}`);
    await none.servers.ensureStarted(new AbortController().signal);
    await counter.ready;

    const system = systemPrompt(memory);

    // (a) The first request after the list landed, each time with a host and a chat of its own.
    const firsts: Steps[] = [];
    for (let i = 0; i < FIRSTS; i++) {
      const mcp = hundred.host();
      const chat = new Chat(joinToolHosts(() => [mcp]), counter, history);
      await chat.ledger.counted();
      firsts.push(chat.request(system));
      // The exact counts it asked for land before the next one, as they would between two requests.
      await chat.ledger.counted();
      mcp.dispose();
    }

    // (b) Every later request, with the 100 tools and with none, interleaved call by call.
    const mcp = hundred.host();
    const empty = none.host();
    const withTools = new Chat(joinToolHosts(() => [mcp]), counter, history);
    const withoutTools = new Chat(joinToolHosts(() => [empty]), counter, history);
    withTools.request(system);
    withoutTools.request(system);
    await withTools.ledger.counted();
    await withoutTools.ledger.counted();
    const cached: number[] = [];
    const bare: number[] = [];
    for (let i = 0; i < WARMUP + REQUESTS; i++) {
      let a: Steps;
      let b: Steps;
      if (i % 2 === 0) {
        a = withTools.request(system);
        b = withoutTools.request(system);
      } else {
        b = withoutTools.request(system);
        a = withTools.request(system);
      }
      if (i < WARMUP) continue;
      cached.push(total(a));
      bare.push(total(b));
    }
    const tools = mcp.specs().length;
    const tokens = withTools.toolTokens();
    mcp.dispose();
    empty.dispose();
    const cold = firsts[0];
    return {
      tools,
      tokens,
      listedMs,
      first: {
        coldMs: cold === undefined ? NaN : total(cold),
        specsMs: median(firsts.map((f) => f.specs)),
        renderMs: median(firsts.map((f) => f.render)),
        measureMs: median(firsts.map((f) => f.measure)),
        totalMs: median(firsts.map(total)),
      },
      cachedMs: median(cached),
      noToolsMs: median(bare),
      firsts: FIRSTS,
      requests: REQUESTS,
    };
  } finally {
    counter.dispose();
    await hundred.servers.dispose();
    await none.servers.dispose();
  }
}
