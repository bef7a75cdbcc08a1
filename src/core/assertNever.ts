/**
 * The last branch of an exhaustive switch over a union. The compiler proves
 * it unreachable; if a value the types did not foresee arrives anyway (a
 * record written by a newer version, say), it fails loudly instead of
 * falling through silently.
 */
export function assertNever(value: never, what = 'value'): never {
  throw new Error(`unexpected ${what}: ${String(JSON.stringify(value)).slice(0, 200)}`);
}
