import type { CountRequest, PromptCount } from '../provider/serverCount';
import { sameIdentity } from './gateState';
import type { Identity } from '../modelIdentity';
import type { PayloadMark } from './payload';

/**
 * The server's own counts of the payload (docs/architecture.md, "Exact
 * counts"), asked off the send path: a request never waits for one. Each
 * payload is asked once (its mark names the system prompt, the tool list and
 * the messages), the newest wins, a short timeout bounds each question, and
 * a server that cannot count is not asked again for that model: the gauge
 * falls back to the estimate without a word.
 */

export interface ServerCount {
  readonly identity: Identity;
  /** The server's count of the payload at `mark`, and the ledger's estimate of that same payload. */
  readonly real: number;
  readonly est: number;
  readonly mark: PayloadMark;
}

/** Questions the server may fail in a row before Candor stops asking it for this model. */
const FAILURES = 2;

function keyOf(identity: Identity, mark: PayloadMark): string {
  return `${identity.provider}\0${identity.model}\0${mark.epoch}\0${mark.messages}\0${mark.system.key}\0${mark.tools.key}`;
}

export class ServerCounts {
  private latest: ServerCount | undefined;
  private asking: string | undefined;
  private next: { key: string; run: () => void } | undefined;
  private readonly failures = new Map<string, number>();

  constructor(private readonly timeoutMs = 2_000) {}

  /** The newest count landed for this identity. */
  latestFor(identity: Identity): ServerCount | undefined {
    return this.latest && sameIdentity(this.latest.identity, identity) ? this.latest : undefined;
  }

  /**
   * Asks `count` for the payload at `mark` unless it is known or being
   * asked; `landed` runs when the count arrives. One question at a time:
   * a newer payload waits for the one asked, and replaces any other waiting.
   */
  ask(identity: Identity, mark: PayloadMark, est: number, count: PromptCount | undefined, payload: () => CountRequest, landed: (count: ServerCount) => void): void {
    if (!count || (this.failures.get(`${identity.provider}\0${identity.model}`) ?? 0) >= FAILURES) return;
    const key = keyOf(identity, mark);
    const latest = this.latestFor(identity);
    if ((latest && keyOf(identity, latest.mark) === key) || this.asking === key) return;
    // The payload is read now: the history may grow while the question waits.
    const request = payload();
    const run = (): void => {
      this.asking = key;
      // The question is written (the whole history as JSON) after the request it was asked for has gone out.
      void new Promise<void>((resolve) => setImmediate(resolve))
        .then(() => count(request, AbortSignal.timeout(this.timeoutMs)))
        .catch(() => undefined)
        .then((real) => {
          const who = `${identity.provider}\0${identity.model}`;
          if (real === undefined) this.failures.set(who, (this.failures.get(who) ?? 0) + 1);
          else {
            this.failures.set(who, 0);
            this.latest = { identity, real, est, mark };
            landed(this.latest);
          }
        })
        .finally(() => {
          this.asking = undefined;
          const waiting = this.next;
          this.next = undefined;
          waiting?.run();
        });
    };
    if (this.asking) this.next = { key, run };
    else run();
  }
}
