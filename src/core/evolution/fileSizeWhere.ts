import { stripVTControlCharacters } from 'node:util';
import { clip, oneLine } from '../text';

/**
 * Where a gate command's output shows the file-size limit was hit
 * (docs/architecture.md, "Sandbox"): the command a shell reports killed by
 * SIGXFSZ, else the line that says EFBIG or "File too large", with the test
 * whose failure printed it (mocha's numbered failure list) and the first
 * source file of its stack. A test's title that names EFBIG is not such a
 * line, nor is a line that only mentions the words. Undefined when the output shows none of them. The output is the
 * model's code's: every part is one clipped line.
 */
export function whereFileSizeShows(output: string): string | undefined {
  const lines = stripVTControlCharacters(output).split('\n');
  const titles = titleLines(lines);
  const at = lines.findIndex((line, index) => SIGN.test(line) && !titles.has(index));
  if (at < 0) return undefined;
  const line = lines[at] ?? '';
  // bash: "bash: line 1:  2322 File size limit exceeded(core dumped) head -c … > big" (the pid and the status padded to a width, not spaced).
  const shell = /\d+ File size limit exceeded(?:\s*\(core dumped\))?\s*(\S.*)$/.exec(line);
  if (shell?.[1] !== undefined) return `the command \`${shown(shell[1])}\``;
  const test = failingTest(lines, at);
  const source = sourceFrame(lines, at);
  return [`"${shown(line)}"`, ...(test !== undefined ? [`in the test "${test}"`] : []), ...(source !== undefined ? [`at ${source}`] : [])].join(' ');
}

/**
 * `limitHit` with where the output shows it, when it is the file-size limit.
 * A "may have hit" read from the output stands only where a line other than
 * a test's title shows it: undefined otherwise (the output only named EFBIG,
 * as a test of the limit itself does in its title).
 */
export function withFileSizeWhere(limitHit: string, output: string): string | undefined {
  if (!limitHit.includes('file size limit')) return limitHit;
  const where = whereFileSizeShows(output);
  if (where !== undefined) return `${limitHit}: ${where}`;
  return limitHit.startsWith('may have') ? undefined : limitHit;
}

/**
 * The lines that are test titles in mocha's output: a result line (`✔`,
 * `-`, `N)`), the skip list's, and a failure's heading (`  N) suite`, then
 * indented titles up to the one that ends with ":").
 */
function titleLines(lines: readonly string[]): Set<number> {
  const titles = new Set<number>();
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^\s*(?:✔|✓|- |\d+\) )/.test(line)) titles.add(i);
    if (!/^ {2}\d+\) /.test(line)) continue;
    for (let j = i + 1; j < lines.length && j <= i + NEAR && !(lines[j - 1] ?? '').endsWith(':'); j++) titles.add(j);
  }
  return titles;
}

/** One line of the output as it may be shown: control characters as spaces, clipped. */
function shown(text: string): string {
  return oneLine(text.replace(/\p{Cc}/gu, ' '), 120);
}

/**
 * What programs print when a write passes RLIMIT_FSIZE, in the shapes they
 * print it: node's `EFBIG: file too large, write`, `code: 'EFBIG'`, a
 * coreutils or Python `…: File too large`, a shell's `File size limit
 * exceeded` report. The limit's own "may have" reads the bare words, which a
 * test's title can hold too.
 */
const SIGN = /\bEFBIG: |code: 'EFBIG'|: File too large|\] File too large|^\s*(?:\S+:\s+)*(?:line \d+:\s+)?(?:\d+\s+)?File size limit exceeded/;

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
