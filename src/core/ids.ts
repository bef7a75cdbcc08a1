import { ulid } from 'ulid';

/** A lowercase ULID: sortable by time and safe in a branch name. */
export function newId(): string {
  return ulid().toLowerCase();
}

const SAFE_ID = /^[0-9a-z][0-9a-z-]{0,63}$/;

export function isSafeId(id: unknown): id is string {
  return typeof id === 'string' && SAFE_ID.test(id);
}
