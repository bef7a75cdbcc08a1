import type { Identity } from '../modelIdentity';
import type { RequestError } from './requestError';

/**
 * Some servers refuse `stream_options` with a 400, and some of those never
 * report usage in a stream at all. Candor retries such a refusal once
 * without it and remembers what it learnt per identity, so that later
 * requests go without it and the context gate can say once that this server
 * never reports usage, instead of warning on every request
 * (docs/architecture.md, "Model port").
 */
export type StreamUsageFact =
  /** Answers 400 to `stream_options`; its streams carry usage without it. */
  | 'rejects-stream-options'
  /** Answers 400 to `stream_options`, and its streams carry no usage. */
  | 'no-usage-in-streams';

export interface StreamUsageMemory {
  get(identity: Identity): StreamUsageFact | undefined;
  remember(identity: Identity, fact: StreamUsageFact): void;
}

/** A 400 whose message names `stream_options`: the server refuses the option, not the request. */
export function refusesStreamOptions(error: RequestError): boolean {
  return error.kind === 'http' && error.status === 400 && /stream_options/i.test(error.message);
}

/** `provider model`: the identity as one key. */
export function usageKey(identity: Identity): string {
  return `${identity.provider} ${identity.model}`;
}

/** Facts kept for the life of the process: the CLI, tests. */
export function inMemoryUsage(): StreamUsageMemory {
  const facts = new Map<string, StreamUsageFact>();
  return {
    get: (identity) => facts.get(usageKey(identity)),
    remember: (identity, fact) => void facts.set(usageKey(identity), fact),
  };
}

/** A key-value store that outlives the process: VS Code's globalState has this shape. */
export interface KeyValueState {
  get(key: string): unknown;
  update(key: string, value: unknown): PromiseLike<void> | void;
}

const STATE_KEY = 'candor.streamUsage';

/** Facts kept in `state` under one key, as `{ "provider model": fact }`; a failed write only costs the memory. */
export function persistedUsage(state: KeyValueState, onError: (err: unknown) => void = () => undefined): StreamUsageMemory {
  const read = (): Record<string, StreamUsageFact> => {
    const value = state.get(STATE_KEY);
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return {};
    const facts: Record<string, StreamUsageFact> = {};
    for (const [key, fact] of Object.entries(value)) {
      if (fact === 'rejects-stream-options' || fact === 'no-usage-in-streams') facts[key] = fact;
    }
    return facts;
  };
  return {
    get: (identity) => read()[usageKey(identity)],
    remember: (identity, fact) => {
      const facts = read();
      if (facts[usageKey(identity)] === fact) return;
      try {
        void Promise.resolve(state.update(STATE_KEY, { ...facts, [usageKey(identity)]: fact })).catch(onError);
      } catch (err) {
        onError(err);
      }
    },
  };
}
