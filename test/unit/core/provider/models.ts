import type { Identity } from '../../../../src/core/modelIdentity';
import type { ChatModel, RequestPolicy } from '../../../../src/core/provider/chatModel';
import { createClient, openAiChatModel, type AdapterOptions } from '../../../../src/core/provider/openaiModel';
import { parseScenario, type Scenario } from '../../../../src/core/offline/scenario';
import { startOfflineServer, type OfflineServer } from '../../../../src/core/offline/server';

export interface ModelOptions {
  readonly apiKey?: string;
  readonly identity?: Identity;
  readonly policy?: Partial<RequestPolicy>;
}

/** The shipped adapter over a real server on loopback; no retries unless asked for. */
export function modelAt(baseUrl: string, options: ModelOptions = {}, adapter: AdapterOptions = {}): ChatModel {
  const policy: RequestPolicy = { idleTimeoutMs: 5000, maxRetries: 0, ...options.policy };
  return openAiChatModel(createClient(baseUrl, options.apiKey ?? 'k'), options.identity ?? { provider: 'test', model: 'm' }, policy, undefined, adapter);
}

/** What the offline provider reports as prompt_tokens in these tests: a quarter of the characters. */
export const countTokens = (text: string): number => Math.ceil(text.length / 4);

export interface OfflineFixture {
  /** The running server (a fresh one per test). */
  readonly server: OfflineServer;
  /** Sets the scenario the next requests get, and resets the server's counters. */
  use(json: unknown): void;
}

/** Inside a `describe`: a real offline provider on loopback for each test. */
export function useOfflineServer(): OfflineFixture {
  let server: OfflineServer | undefined;
  let scenario: Scenario = parseScenario({ rules: [{ respond: { text: 'ok' } }] });
  beforeEach(async () => {
    server = await startOfflineServer({ scenario: () => scenario, countTokens });
  });
  afterEach(async () => server?.close());
  return {
    get server(): OfflineServer {
      if (server === undefined) throw new Error('useOfflineServer: the server starts in beforeEach');
      return server;
    },
    use(json: unknown): void {
      scenario = parseScenario(json);
      server?.resetCounts();
    },
  };
}

/** Every event of a stream, in order. */
export async function eventsOf<T>(events: AsyncIterable<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const event of events) all.push(event);
  return all;
}
