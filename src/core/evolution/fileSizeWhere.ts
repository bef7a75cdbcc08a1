import { stripVTControlCharacters } from 'node:util';
import { clip, oneLine } from '../text';

/**
 * Where a gate command's output shows the file-size limit was hit
 * (docs/architecture.md, "Sandbox"): the command a shell reports killed by
 * SIGXFSZ, else the line that says EFBIG or "File too large", with the test
 * whose failure printed it (mocha's numbered failure list) and the first
 * source file of its stack. Undefined when the output shows none of them.
 * The output is the model's code's: every part is one clipped line.
 */
export function whereFileSizeShows(output: string): string | undefined {
  const lines = stripVTControlCharacters(output).split('\n');
  const at = lines.findIndex((line) => SIGN.test(line));
  if (at < 0) return undefined;
  const line = lines[at] ?? '';
  // bash: "bash: line 1: 29198 File size limit exceeded(core dumped) head -c … > big" (the status padded, not spaced).
  const shell = /\d+ File size limit exceeded(?:\s*\(core dumped\))?\s*(\S.*)$/.exec(line);
  if (shell?.[1] !== undefined) return `the command \`${shown(shell[1])}\``;
  const test = failingTest(lines, at);
  const source = sourceFrame(lines, at);
  return [`"${shown(line)}"`, ...(test !== undefined ? [`in the test "${test}"`] : []), ...(source !== undefined ? [`at ${source}`] : [])].join(' ');
}

/** `limitHit` with where the output shows it, when it is the file-size limit and the output shows where. */
export function withFileSizeWhere(limitHit: string, output: string): string {
  if (!limitHit.includes('file size limit')) return limitHit;
  const where = whereFileSizeShows(output);
  return where !== undefined ? `${limitHit}: ${where}` : limitHit;
}

/** One line of the output as it may be shown: control characters as spaces, clipped. */
function shown(text: string): string {
  return oneLine(text.replace(/\p{Cc}/gu, ' '), 120);
}

/** What programs print when a write passes RLIMIT_FSIZE (the same signs the limit's "may have" reads). */
const SIGN = /File size limit exceeded|\bEFBIG\b|File too large/;

/** How far from the sign line a failure's heading or its stack may be. */
const NEAR = 20;

/** The full title of the mocha failure whose block holds line `at`: "  1) suite" then indented titles, the test's ending with ":". */
function failingTest(lines: readonly string[], at: number): string | undefined {
  for (let i = at; i >= Math.max(0, at - NEAR); i--) {
    const heading = /^ {2}\d+\) (.+)$/.exec(lines[i] ?? '');
    if (heading?.[1] === undefined) continue;
    const parts = [heading[1].trim()];
    for (let j = i + 1; j < at && !parts[parts.length - 1]?.endsWith(':'); j++) parts.push((lines[j] ?? '').trim());
    return clip(parts.join(' ').replace(/:$/, ''), 200);
  }
  return undefined;
}

/** The first stack frame after line `at` in a file of the project's (not node's own, not a dependency's): `path:line:column`. */
function sourceFrame(lines: readonly string[], at: number): string | undefined {
  for (const line of lines.slice(at + 1, at + 1 + NEAR)) {
    const frame = /^\s+at (?:.*\()?([^()\s]+:\d+:\d+)\)?$/.exec(line)?.[1];
    if (frame !== undefined && !frame.startsWith('node:') && !frame.includes('node_modules')) return clip(frame, 160);
  }
  return undefined;
}
