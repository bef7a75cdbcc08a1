import { Worker } from 'node:worker_threads';

/**
 * A tokenizer's worker thread and the questions it still owes answers to
 * (docs/architecture.md, "Context gate"): the worker posts `{ready}` or
 * `{failed}` once it has loaded, then one `{id, answer}` or `{id, error}` per
 * question. An idle worker keeps no process alive.
 */

type Reply = { ready: true } | { failed: string } | { id: number; answer: unknown } | { id: number; error: string };

export class TokenizerThread<Answer> {
  readonly ready: Promise<void>;
  private readonly worker: Worker;
  private readonly pending = new Map<number, { resolve: (answer: Answer) => void; reject: (err: Error) => void }>();
  private next = 0;
  private failure: Error | undefined;

  constructor(source: string, data: Record<string, unknown>, what: string) {
    this.worker = new Worker(source, { eval: true, workerData: data });
    // The worker must not keep a CLI or a test process alive on its own.
    this.worker.unref();
    this.ready = new Promise<void>((resolve, reject) => {
      this.worker.on('message', (reply: Reply) => {
        if ('ready' in reply) resolve();
        else if ('failed' in reply) {
          this.failure = new Error(`${what} could not load: ${reply.failed}`);
          reject(this.failure);
        } else this.answered(reply);
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

  /** Posts a question (with an id added) once the worker has loaded. */
  async ask(question: Record<string, unknown>): Promise<Answer> {
    await this.ready;
    if (this.failure) throw this.failure;
    const id = this.next++;
    return new Promise<Answer>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      // An answer still owed keeps the process alive; an idle worker does not.
      this.worker.ref();
      this.worker.postMessage({ ...question, id });
    });
  }

  dispose(): void {
    void this.worker.terminate();
  }

  private answered(reply: { id: number; answer: unknown } | { id: number; error: string }): void {
    const waiter = this.pending.get(reply.id);
    this.pending.delete(reply.id);
    if (this.pending.size === 0) this.worker.unref();
    if ('error' in reply) waiter?.reject(new Error(reply.error));
    else waiter?.resolve(reply.answer as Answer);
  }
}
