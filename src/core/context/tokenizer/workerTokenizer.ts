import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { ChatMessage } from '../../messages';
import type { Estimator } from '../estimator';
import { messageParts, PER_MESSAGE_OVERHEAD } from '../messageParts';
import type { TiktokenEncodingName } from '../tiktoken';

/**
 * js-tiktoken builds its rank tables in the constructor: about six seconds
 * for o200k_base on a small machine, all of it synchronous. In the extension
 * host that would freeze every extension, so the tokenizer lives in a worker
 * thread and the host asks it for counts.
 */

export interface TokenizerModules {
  /** A CommonJS module exporting `Tiktoken` (js-tiktoken/lite, or its bundle). */
  readonly tiktoken: string;
  /** The ranks module of an encoding. */
  readonly ranks: (encoding: TiktokenEncodingName) => string;
}

/** Paths inside a bundle folder (the packaged extension and CLI: dist/). */
export function bundledTokenizerModules(distDir: string): TokenizerModules {
  return {
    tiktoken: path.join(distDir, 'tiktoken-lite.js'),
    ranks: (encoding) => path.join(distDir, 'ranks', `${encoding}.js`),
  };
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let tokenizer;
try {
  const { Tiktoken } = require(workerData.tiktoken);
  const loaded = require(workerData.ranks);
  tokenizer = new Tiktoken(loaded.default || loaded);
  parentPort.postMessage({ ready: true });
} catch (err) {
  parentPort.postMessage({ failed: String(err && err.message || err) });
}
parentPort.on('message', ({ id, texts }) => {
  try {
    parentPort.postMessage({ id, counts: texts.map((t) => (t.length === 0 ? 0 : tokenizer.encode(t, [], []).length)) });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

type Reply = { ready: true } | { failed: string } | { id: number; counts: number[] } | { id: number; error: string };

export class WorkerTokenizer {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (counts: number[]) => void; reject: (err: Error) => void }>();
  private next = 0;
  private failure: Error | undefined;

  constructor(readonly encoding: TiktokenEncodingName, modules: TokenizerModules) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tiktoken: modules.tiktoken, ranks: modules.ranks(encoding) } });
    // The worker must not keep a CLI or a test process alive on its own.
    this.worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (reply: Reply) => {
        if ('ready' in reply) resolve();
        else if ('failed' in reply) {
          this.failure = new Error(`the ${encoding} tokenizer could not load: ${reply.failed}`);
          reject(this.failure);
        } else {
          const waiter = this.pending.get(reply.id);
          this.pending.delete(reply.id);
          if ('counts' in reply) waiter?.resolve(reply.counts);
          else waiter?.reject(new Error(reply.error));
        }
      });
      this.worker.on('error', (err) => {
        this.failure = err;
        reject(err);
        for (const waiter of this.pending.values()) waiter.reject(err);
        this.pending.clear();
      });
    });
    this.ready.catch(() => undefined);
  }

  async count(texts: readonly string[]): Promise<number[]> {
    if (texts.length === 0) return [];
    await this.ready;
    if (this.failure) throw this.failure;
    const id = this.next++;
    return new Promise<number[]>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, texts });
    });
  }

  dispose(): void {
    void this.worker.terminate();
  }
}

/** Bound on remembered text counts. */
const MAX_CACHED_TEXTS = 100_000;

/**
 * An Estimator whose counts come from a worker. `prime` counts what is new
 * (asynchronously); `countMessage` then answers synchronously from the
 * cache, so the incremental estimate and the gate stay synchronous.
 */
export class PrimedEstimator implements Estimator {
  readonly name: string;
  private readonly counts = new Map<string, number>();
  private primed = new WeakSet<object>();

  constructor(private readonly tokenizer: WorkerTokenizer) {
    this.name = `tiktoken:${tokenizer.encoding}`;
  }

  /** Counts the parts of the messages not seen before; a message object is primed once. */
  async prime(messages: readonly ChatMessage[]): Promise<void> {
    if (this.counts.size > MAX_CACHED_TEXTS) {
      // Start over rather than evict piecemeal: everything below is primed again.
      this.counts.clear();
      this.primed = new WeakSet<object>();
    }
    const missing = new Set<string>();
    const fresh: ChatMessage[] = [];
    for (const message of messages) {
      if (this.primed.has(message)) continue;
      fresh.push(message);
      for (const part of messageParts(message)) if (!this.counts.has(part)) missing.add(part);
    }
    if (missing.size > 0) {
      const texts = [...missing];
      const counts = await this.tokenizer.count(texts);
      texts.forEach((text, i) => this.counts.set(text, counts[i] ?? 0));
    }
    for (const message of fresh) this.primed.add(message);
  }

  countText(text: string): number {
    if (text.length === 0) return 0;
    const known = this.counts.get(text);
    if (known === undefined) throw new Error('PrimedEstimator: text was not primed before counting');
    return known;
  }

  countMessage(message: ChatMessage): number {
    let total = PER_MESSAGE_OVERHEAD;
    for (const part of messageParts(message)) total += this.countText(part);
    return total;
  }
}
