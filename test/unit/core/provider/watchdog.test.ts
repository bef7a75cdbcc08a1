// The two timers of a request, on a clock the test moves.
import * as assert from 'node:assert/strict';
import { Watchdog, type Timeout, type Timers } from '../../../../src/core/provider/watchdog';

/** Timers that fire only when the test advances the clock. */
class FakeClock implements Timers {
  now = 0;
  private next = 1;
  private readonly pending = new Map<number, { at: number; fire: () => void }>();
  set(fire: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { at: this.now + ms, fire });
    return id;
  }
  clear(handle: unknown): void {
    this.pending.delete(handle as number);
  }
  advance(ms: number): void {
    const until = this.now + ms;
    for (;;) {
      const due = [...this.pending.entries()].filter(([, t]) => t.at <= until).sort((a, b) => a[1].at - b[1].at)[0];
      if (!due) break;
      this.pending.delete(due[0]);
      this.now = due[1].at;
      due[1].fire();
    }
    this.now = until;
  }
}

function watchdog(firstTokenMs: number, idleMs: number) {
  const clock = new FakeClock();
  const fired: Array<[Timeout, number]> = [];
  const dog = new Watchdog({ firstTokenMs, idleMs }, (which) => fired.push([which, clock.now]), clock);
  return { clock, fired, dog };
}

describe('the first-token and idle timers', () => {
  it('before the first live chunk only the first-token limit applies: a long prompt is no stall', () => {
    const { clock, fired, dog } = watchdog(300_000, 60_000);
    dog.start();
    clock.advance(299_000);
    assert.deepEqual(fired, [], 'four minutes of prompt processing, past the idle limit, cut nothing');
    clock.advance(1_000);
    assert.deepEqual(fired, [['first-token', 300_000]]);
  });

  it('a role-only delta (not live) does not start the reply; the first live chunk switches to the idle limit between chunks', () => {
    const { clock, fired, dog } = watchdog(10_000, 2_000);
    dog.start();
    clock.advance(5_000);
    dog.chunk(false);
    clock.advance(4_999);
    assert.deepEqual(fired, [], 'still the first-token wait');
    dog.chunk(true);
    clock.advance(1_999);
    dog.chunk(false); // after the reply started, any chunk is a sign of life
    clock.advance(1_999);
    assert.deepEqual(fired, []);
    clock.advance(1);
    assert.deepEqual(fired, [['idle', 5_000 + 4_999 + 1_999 + 2_000]]);
    assert.equal(dog.timedOut, 'idle');
  });

  it('prompt progress counts as live: it ends the first-token wait', () => {
    const { clock, fired, dog } = watchdog(1_000, 30_000);
    dog.start();
    clock.advance(500);
    dog.chunk(true); // processing the prompt: 0%
    clock.advance(20_000);
    assert.deepEqual(fired, []);
  });

  it('0 waits as long as it takes for the first chunk; stop disarms everything', () => {
    const { clock, fired, dog } = watchdog(0, 1_000);
    dog.start();
    clock.advance(3_600_000);
    assert.deepEqual(fired, []);
    dog.chunk(true);
    dog.stop();
    clock.advance(10_000);
    assert.deepEqual(fired, []);
  });
});
