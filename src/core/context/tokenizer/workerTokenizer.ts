import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { TiktokenEncodingName, TokenCounter } from '../estimator';

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

/** The tokenizer port over js-tiktoken in a worker thread: counts never block the caller's thread. */
export class WorkerTokenizer implements TokenCounter {
  readonly name: string;
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (counts: number[]) => void; reject: (err: Error) => void }>();
  private next = 0;
  private failure: Error | undefined;

  constructor(readonly encoding: TiktokenEncodingName, modules: TokenizerModules) {
    this.name = encoding;
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
          if (this.pending.size === 0) this.worker.unref();
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
      // An answer still owed keeps the process alive; an idle worker does not.
      this.worker.ref();
      this.worker.postMessage({ id, texts });
    });
  }

  dispose(): void {
    void this.worker.terminate();
  }
}
