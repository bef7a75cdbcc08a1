import { monotonicFactory } from 'ulid';

/**
 * Monotonic within this process: two ids made in the same millisecond (or
 * after the clock stepped back) still sort in the order they were made, so
 * an order taken from ids is the order things happened.
 */
const nextUlid = monotonicFactory();

/** A lowercase ULID for the time `now` (ms): sortable by time and safe in a branch name. */
export function newId(now: number = Date.now()): string {
  return nextUlid(now).toLowerCase();
}

const SAFE_ID = /^[0-9a-z][0-9a-z-]{0,63}$/;

export function isSafeId(id: unknown): id is string {
  return typeof id === 'string' && SAFE_ID.test(id);
}
