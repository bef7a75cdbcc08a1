import * as assert from 'node:assert/strict';
import { AutoCondense } from '../../../../src/core/memory/autoCondense';
import type { CondenseOutcome } from '../../../../src/core/memory/outcome';

const fail = (reason: Extract<CondenseOutcome, { ok: false }>['reason']): CondenseOutcome => ({ ok: false, reason, detail: '' });
const ok: CondenseOutcome = { ok: true, beforeBytes: 100, afterBytes: 10, carriedBytes: 0, rounds: 0 };

describe('automatic condense policy', () => {
  it('condenses only above the threshold; 0 turns it off', () => {
    const auto = new AutoCondense(1000);
    assert.equal(auto.shouldCondense(1000), false);
    assert.equal(auto.shouldCondense(1001), true);
    assert.equal(new AutoCondense(0).shouldCondense(10_000_000), false);
  });

  it('after not-smaller it waits until the file grew by a quarter', () => {
    const auto = new AutoCondense(1000);
    auto.record(fail('not-smaller'), 2000);
    assert.equal(auto.backingOffUntilBytes, 2500);
    assert.equal(auto.shouldCondense(2000), false);
    assert.equal(auto.shouldCondense(2499), false);
    assert.equal(auto.shouldCondense(2500), true);
  });

  it('model failures and a user cancel back off too; races with other writers do not', () => {
    for (const reason of ['model-failed', 'cancelled'] as const) {
      const auto = new AutoCondense(1000);
      auto.record(fail(reason), 4000);
      assert.equal(auto.shouldCondense(4001), false, reason);
    }
    for (const reason of ['source-changed', 'still-growing', 'busy', 'source-check-failed', 'source-unsaved'] as const) {
      const auto = new AutoCondense(1000);
      auto.record(fail(reason), 4000);
      assert.equal(auto.shouldCondense(4000), true, reason);
    }
  });

  it('a success clears the back-off', () => {
    const auto = new AutoCondense(1000);
    auto.record(fail('not-smaller'), 2000);
    auto.record(ok, 1500);
    assert.equal(auto.backingOffUntilBytes, 0);
    assert.equal(auto.shouldCondense(1500), true);
  });
});
