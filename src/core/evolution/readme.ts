import * as fs from 'node:fs';
import * as path from 'node:path';

/** Characters of the agent's README given to triage as context. */
export const MAX_README_CHARS = 12_000;

/**
 * The README at the top of the agent's repository (a plain file, not a
 * link, read from its start), clipped; undefined when there is none. Triage
 * gives it to the model, and the rule fallback answers a confusion from it.
 */
export function agentReadme(root: string): string | undefined {
  for (const name of ['README.md', 'README', 'README.txt', 'readme.md']) {
    const file = path.join(root, name);
    try {
      if (!fs.lstatSync(file).isFile()) continue;
      const fd = fs.openSync(file, 'r');
      try {
        const buffer = Buffer.alloc(MAX_README_CHARS * 4);
        return buffer.subarray(0, fs.readSync(fd, buffer, 0, buffer.length, 0)).toString('utf8').slice(0, MAX_README_CHARS);
      } finally {
        fs.closeSync(fd);
      }
    } catch {
      // absent or unreadable: try the next name
    }
  }
  return undefined;
}
