/**
 * The two timers of a streamed request (docs/architecture.md, "Model port").
 * Until the first live chunk (text, reasoning, a tool-call delta or prompt
 * progress) the request may take `firstTokenMs` (0: no limit): a server
 * processing a long prompt sends headers at once and then nothing for a
 * long while, and that is no stall. A chunk with nothing in it (a role-only
 * delta) does not count. From the first live chunk on, `idleMs` applies
 * between any two chunks.
 */

/** The timer functions the watchdog uses; tests pass their own clock. */
export interface Timers {
  set(fire: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const realTimers: Timers = {
  set: (fire, ms) => setTimeout(fire, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export type Timeout = 'first-token' | 'idle';

export interface WatchdogLimits {
  readonly firstTokenMs: number;
  readonly idleMs: number;
}

export class Watchdog {
  private handle: unknown;
  private started = false;
  private live = false;
  private fired: Timeout | undefined;

  constructor(
    private readonly limits: WatchdogLimits,
    private readonly onTimeout: (which: Timeout) => void,
    private readonly timers: Timers = realTimers,
  ) {}

  /** Which timer cut the request, if one did. */
  get timedOut(): Timeout | undefined {
    return this.fired;
  }

  /** The request is about to be sent: the wait for the first live chunk begins. */
  start(): void {
    this.started = true;
    this.arm('first-token', this.limits.firstTokenMs);
  }

  /** A chunk arrived; `live`: it carries text, reasoning, a tool-call delta or prompt progress. */
  chunk(live: boolean): void {
    if (!this.started || this.fired) return;
    if (!this.live && !live) return;
    this.live = true;
    this.arm('idle', this.limits.idleMs);
  }

  stop(): void {
    this.started = false;
    this.timers.clear(this.handle);
    this.handle = undefined;
  }

  private arm(which: Timeout, ms: number): void {
    this.timers.clear(this.handle);
    this.handle = undefined;
    if (ms <= 0) return;
    this.handle = this.timers.set(() => {
      if (!this.started) return;
      this.fired = which;
      this.started = false;
      this.onTimeout(which);
    }, ms);
  }
}
