import * as path from 'node:path';

const tails = new Map<string, Promise<void>>();

/**
 * Runs tasks on one file one after another within this process. The
 * `remember` append and the condense swap share it, so an append made by this
 * extension host can never land between the swap's last check and its rename.
 * Writers in other processes are covered by the swap's byte check instead.
 */
export async function serializedOn<T>(file: string, task: () => Promise<T>): Promise<T> {
  const key = path.resolve(file);
  const previous = tails.get(key) ?? Promise.resolve();
  const run = previous.then(task);
  const tail = run.then(
    () => undefined,
    () => undefined,
  );
  tails.set(key, tail);
  try {
    return await run;
  } finally {
    if (tails.get(key) === tail) tails.delete(key);
  }
}
