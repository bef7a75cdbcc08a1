/** At most `limit` holders at once; waiters are served first come, first served. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be a whole number ≥ 1, got ${limit}`);
  }

  /** Resolves with a release function once a slot is free. */
  async acquire(): Promise<() => void> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // Hand the slot straight to the next waiter, so `active` never dips below the real count.
      if (next) next();
      else this.active--;
    };
  }

  /** Runs `job` inside a slot. */
  async run<T>(job: () => Promise<T>): Promise<T> {
    const release = await this.acquire();
    try {
      return await job();
    } finally {
      release();
    }
  }
}
