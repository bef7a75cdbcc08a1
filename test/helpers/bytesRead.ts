// How many bytes this process has read so far, by the kernel's count
// (`rchar` of /proc/self/io: every read(2) of every thread, pipes included).
// A test that must show a file was not read asserts on this count, not on
// how long the call took.
import * as fs from 'node:fs';

export function bytesReadSoFar(): number {
  const line = fs.readFileSync('/proc/self/io', 'utf8').split('\n').find((l) => l.startsWith('rchar:'));
  const bytes = Number(line?.slice('rchar:'.length).trim());
  if (!Number.isFinite(bytes)) throw new Error(`no rchar in /proc/self/io: ${JSON.stringify(line)}`);
  return bytes;
}
